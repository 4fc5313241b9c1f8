#!/usr/bin/env bash
# Peak memory of the real `tokex report` on an article-sized evidence folder
# (sanity + 3 stages × 3 rounds of 5.5 min at 100/250/500 per second:
# 844,500 request rows), measured with /usr/bin/time -v. Reports both paths:
# with summary.json (charts from the rows) and without it (every run's
# statistics recomputed from the rows as well). Goal: under 150 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && echo "kept $out" || rm -rf "$out"' EXIT
go build -o "$out/tokex" ./cmd/tokex
TOKEX_ARTICLE_FOLDER="$out/article" go test ./collector/evidence -run '^TestWriteArticleFolder$' -count=1 >/dev/null
du -sh "$out/article" | sed 's/^/folder: /'
rss() { # label, args…
  local label=$1; shift
  /usr/bin/time -v "$out/tokex" "$@" 2>"$out/time.txt" >/dev/null
  awk -v l="$label" -F': ' '/Maximum resident set size/ {rss = $2} /Elapsed \(wall clock\)/ {wall = $2}
    END {printf "%s: peak RSS %.1f MB, %s wall\n", l, rss / 1024, wall}' "$out/time.txt"
}
rss "report (summary.json present)" report -o "$out/r1.html" "$out/article"
rm "$out/article/summary.json"
rss "report (figures recomputed)  " report -o "$out/r2.html" "$out/article"
