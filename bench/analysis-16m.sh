#!/usr/bin/env bash
# Analysis of one run of a 50,000 exchanges/s campaign (issue 17): 30 s of
# warmup and 300 s measured from 120 agents, 16.5 million request rows.
# Writes the folder (TestWriteScaleFolder), states its size per row, then
# measures the real `tokex report` on it with /usr/bin/time -v: with
# summary.json (charts from the rows) and without it (the run's exact
# statistics recomputed from every row as well). TOKEX_SCALE_ROWS=n writes
# fewer rows, for a quick try.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && echo "kept $out" || rm -rf "$out"' EXIT
go build -o "$out/tokex" ./cmd/tokex
TOKEX_SCALE_FOLDER="$out/scale" go test ./collector/evidence -run '^TestWriteScaleFolder$' -count=1 -v -timeout 60m | grep 'rows,'
du -sh "$out/scale" | sed 's/^/folder: /'
ls -l "$out"/scale/*/*/requests.csv.gz | awk '{print "requests.csv.gz: " $5 " bytes"}'
rss() { # label, args…
  local label=$1; shift
  /usr/bin/time -v "$out/tokex" "$@" 2>"$out/time.txt" >/dev/null
  awk -v l="$label" -F': ' '/Maximum resident set size/ {rss = $2} /Elapsed \(wall clock\)/ {wall = $2}
    /User time/ {u = $2} /System time/ {s = $2}
    END {printf "%s: peak RSS %.1f MB, %s wall, %.1f s CPU\n", l, rss / 1024, wall, u + s}' "$out/time.txt"
}
rss "report (summary.json present)" report -o "$out/r1.html" "$out/scale"
rm "$out/scale/summary.json"
rss "report (figures recomputed)  " report -o "$out/r2.html" "$out/scale"
