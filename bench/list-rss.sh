#!/usr/bin/env bash
# Peak memory of `tokex ls` on 1,000 hostile evidence folders (issue 25 item
# 1): every folder a hard link to one of five manifests or summaries near
# their caps (a 15 MiB name, a 15 MiB reason, 7 MiB status and driver, 1,000
# runs of distinct rates with 12 KiB reasons, a 30 MiB summary.json), and an
# escape sequence in every folder name. Measures, with /usr/bin/time -v,
# the table (`tokex ls --no-tui`: peak RSS, bytes printed, longest line) and
# the picker in a pseudo-terminal (script(1), 120×40): peak RSS until it has
# drawn, then q. Goal: under 200 MB each.
#
#   ./bench/list-rss.sh
#   FOLDERS=100 TOKEX_BIN=/tmp/tokex-main MAX_VM_MB=8000 ./bench/list-rss.sh
#
# TOKEX_BIN measures another build (e.g. main's); MAX_VM_MB caps the
# process's address space (ulimit -v), so that a build without the bound
# fails instead of taking the shared machine's memory.
set -euo pipefail
cd "$(dirname "$0")/.."
folders=${FOLDERS:-1000}
out=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && echo "kept $out" || rm -rf "$out"' EXIT
bin=${TOKEX_BIN:-}
if [ -z "$bin" ]; then
  go build -o "$out/tokex" ./cmd/tokex
  bin=$out/tokex
fi
TOKEX_HOSTILE_LISTING="$out/ev" TOKEX_HOSTILE_FOLDERS=$folders \
  go test ./collector/evidence -run '^TestWriteHostileListing$' -count=1 >/dev/null
echo "folders: $folders ($(du -sh "$out/ev" | cut -f1) on disk, hard links)"
limit=""
[ -n "${MAX_VM_MB:-}" ] && limit="ulimit -v $((MAX_VM_MB * 1024));"
report() { # label, time file, exit code
  awk -v l="$1" -v c="$3" -F': ' '/Maximum resident set size/ {rss = $2} /Elapsed \(wall clock\)/ {wall = $2}
    END {printf "%s: exit %d, peak RSS %.1f MB, %s wall\n", l, c, rss / 1024, wall}' "$2"
}

set +e
bash -c "$limit exec nice -n ${NICE:-10} /usr/bin/time -v -o '$out/t1.txt' '$bin' ls --no-tui '$out/ev'" >"$out/table.txt" 2>"$out/err.txt"
code=$?
set -e
report "ls --no-tui" "$out/t1.txt" $code
awk '{ if (length($0) > m) m = length($0) } END { printf "  printed %d bytes in %d lines, longest %d bytes\n", bytes, NR, m } { bytes += length($0) + 1 }' "$out/table.txt"
if [ -s "$out/err.txt" ]; then head -c 300 "$out/err.txt" | tr -d '\033\007'; echo; fi

# The picker: q once the title is drawn (or after 120 s).
mkfifo "$out/keys"
(
  exec 3>"$out/keys"
  for _ in $(seq 600); do
    grep -q "Campaigns in" "$out/tty.txt" 2>/dev/null && break
    sleep 0.2
  done
  sleep 1
  printf q >&3
  sleep 5
) &
keys=$!
set +e
script -qefc "stty rows 40 cols 120; $limit exec nice -n ${NICE:-10} /usr/bin/time -v -o '$out/t2.txt' '$bin' ls '$out/ev'" /dev/null <"$out/keys" >"$out/tty.txt" 2>&1
code=$?
set -e
kill "$keys" 2>/dev/null || true
report "ls (picker)  " "$out/t2.txt" $code
grep -q "Campaigns in" "$out/tty.txt" && echo "  the picker drew its list" || echo "  the picker drew nothing"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
