#!/usr/bin/env bash
# Peak memory and HTML size of `tokex report` on a folder of RUNS runs
# (default 6) each holding SAMPLES resource samples and as many host
# samples (default 1,000,000, the readers' cap per file; issue 25 item 2),
# measured with /usr/bin/time -v: with summary.json (charts from the rows
# and samples) and without it (every run's statistics recomputed as well).
# Goal: under 300 MB and under 20 MB of HTML, with summary.json and without
# it (main at 631f5d5 held each run's samples to recompute it: 1,021 MB).
#
#   ./bench/samples-report.sh
#   RUNS=2 SAMPLES=200000 TOKEX_BIN=/tmp/tokex-main ./bench/samples-report.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && echo "kept $out" || rm -rf "$out"' EXIT
bin=${TOKEX_BIN:-}
if [ -z "$bin" ]; then
  go build -o "$out/tokex" ./cmd/tokex
  bin=$out/tokex
fi
TOKEX_SAMPLE_FOLDER="$out/samples" TOKEX_SAMPLE_RUNS=${RUNS:-6} TOKEX_SAMPLES=${SAMPLES:-1000000} \
  go test ./collector/evidence -run '^TestWriteSampleFolder$' -count=1 -timeout 30m >/dev/null
echo "folder: ${RUNS:-6} runs × ${SAMPLES:-1000000} resource and host samples, $(du -sh "$out/samples" | cut -f1) on disk"
limit=""
[ -n "${MAX_VM_MB:-}" ] && limit="ulimit -v $((MAX_VM_MB * 1024));"
rss() { # label, html file
  local label=$1 html=$2 code
  set +e
  bash -c "$limit exec nice -n ${NICE:-10} /usr/bin/time -v -o '$out/time.txt' '$bin' report -o '$html' '$out/samples'" >/dev/null 2>"$out/err.txt"
  code=$?
  set -e
  local size=0
  [ -f "$html" ] && size=$(stat -c %s "$html")
  awk -v l="$label" -v c=$code -v s="$size" -F': ' '/Maximum resident set size/ {rss = $2} /Elapsed \(wall clock\)/ {wall = $2}
    /User time/ {u = $2} /System time/ {t = $2}
    END {printf "%s: exit %d, peak RSS %.1f MB, HTML %.1f MB, %s wall, %.1f s CPU\n", l, c, rss / 1024, s / 1e6, wall, u + t}' "$out/time.txt"
  if [ -s "$out/err.txt" ]; then head -c 300 "$out/err.txt"; echo; fi
}
rss "report (summary.json present)" "$out/r1.html"
rm "$out/samples/summary.json"
rss "report (figures recomputed)  " "$out/r2.html"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
