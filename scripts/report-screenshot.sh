#!/usr/bin/env bash
# Renders an evidence folder's HTML report in headless Chromium to a PNG, to
# check what a person sees (installs Debian's chromium when missing).
#   scripts/report-screenshot.sh DIR [OUT.png]   (WIDTH=1200 HEIGHT=3000 DARK=1)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1 out=${2:-report.png}
command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/tokex" ./cmd/tokex
"$bin/tokex" report "$dir" -o "$bin/report.html" >/dev/null
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
  --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$bin/profile"
  --window-size="${WIDTH:-1200},${HEIGHT:-3000}" --screenshot="$(realpath -m "$out")")
[ -n "${DARK:-}" ] && flags+=(--force-dark-mode --blink-settings=preferredColorScheme=0)
chromium "${flags[@]}" "file://$bin/report.html" 2>/dev/null
echo "wrote $out"
