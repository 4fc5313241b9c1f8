#!/usr/bin/env bash
# The hostile worst case of `tokex report` at the readers' row cap
# (SECURITY.md, "Sizes"): a small evidence folder whose one run's
# requests.csv.gz is replaced by a compression bomb of ROWS identical rows
# (default 30 million, past the 20 million cap), summary.json removed so
# that every figure is recomputed from the rows. Prints the bomb's size,
# tokex's refusal, and its peak RSS and CPU (/usr/bin/time -v).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${ROWS:-30000000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/tokex" ./cmd/tokex
TOKEX_SCALE_ROWS=1000 TOKEX_SCALE_FOLDER="$out/scale" go test ./collector/evidence -run '^TestWriteScaleFolder$' -count=1 >/dev/null
f=$(ls "$out"/scale/*/*/requests.csv.gz | head -1)
python3 - "$f" "$rows" <<'PY'
import gzip, sys
path, rows = sys.argv[1], int(sys.argv[2])
line = b"3,42,measured,1800000000000000,17,5321,200,ok,,\n"
with gzip.open(path, "wb", compresslevel=9) as z:
    z.write(b"agent,seq,phase,scheduled_unix_us,send_lag_us,duration_us,status,outcome,detail,count\n")
    chunk = line * 100000
    for n in range(0, rows, 100000):
        z.write(chunk if rows - n >= 100000 else line * (rows - n))
PY
ls -l "$f" | awk -v r="$rows" '{printf "bomb: %d rows, %.1f MB gzipped\n", r, $5 / 1e6}'
rm -f "$out/scale/summary.json"
set +e
nice -n "${NICE:-10}" /usr/bin/time -v "$out/tokex" report -o "$out/r.html" "$out/scale" >"$out/stdout.txt" 2>"$out/time.txt"
code=$?
set -e
grep -m1 -i "refused\|error" "$out/time.txt" "$out/stdout.txt" | sed 's/^[^:]*://' | cut -c1-200 || true
awk -v c="$code" -F': ' '/Maximum resident set size/ {rss = $2} /Elapsed \(wall clock\)/ {wall = $2}
  /User time/ {u = $2} /System time/ {s = $2}
  END {printf "tokex report: exit %d, peak RSS %.1f MB, %s wall, %.1f s CPU\n", c, rss / 1024, wall, u + s}' "$out/time.txt"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
