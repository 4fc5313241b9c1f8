#!/usr/bin/env bash
# The screenshots of what a newcomer sees, from the golden campaigns
# (testdata/campaigns, SOURCES.md there), so anyone can take them again:
#   scripts/screenshots.sh dashboard   # docs/dashboard.png: the dashboard's last screen of the
#                                      # `capacity` campaign, replayed under tmux at 120×40
#                                      # (capture-pane -e → HTML → headless Chromium)
#   scripts/screenshots.sh report [OUT_DIR]
#                                      # the first 1400×900 pixels of the reports of `run-busy`
#                                      # (every run on a busy machine) and `passed`, as
#                                      # OUT_DIR/report-NAME.png (default docs/),
#                                      # then where the verdict and the latency table are, in
#                                      # pixels (collector/report TestReportFirstScreen)
# Needs chromium, tmux and node (apt-get install chromium tmux; node for scripts/ansi2html.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
for tool in chromium tmux node; do
  command -v "$tool" >/dev/null || { echo "screenshots: $tool is not installed" >&2; exit 2; }
done
work=$(mktemp -d)
session=tokex-shot-$$
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/tokex" ./cmd/tokex

shot() { # shot URL OUT.png WIDTH HEIGHT
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$work/profile" \
    --window-size="$3,$4" --screenshot="$(realpath -m "$2")" "$1" 2>/dev/null >/dev/null
  echo "wrote $2 ($(stat -c %s "$2") bytes)"
}

dashboard() {
  tmux new-session -d -s "$session" -x 120 -y 40 \
    "TERM=xterm-256color COLORTERM=truecolor $work/tokex replay --speed 0 testdata/campaigns/capacity; sleep 60"
  for _ in $(seq 1 60); do
    sleep 1
    tmux capture-pane -p -t "$session" | grep -q "press q to exit" && break
  done
  tmux capture-pane -e -p -t "$session" >"$work/dashboard.ansi"
  tmux kill-session -t "$session"
  node scripts/ansi2html.mjs <"$work/dashboard.ansi" >"$work/dashboard.html"
  shot "file://$work/dashboard.html" docs/dashboard.png 980 680
}

report() {
  out=${1:-docs}
  mkdir -p "$out"
  for name in run-busy passed; do
    "$work/tokex" report "testdata/campaigns/$name" -o "$work/$name.html" >/dev/null
    shot "file://$work/$name.html" "$out/report-$name.png" 1400 900
  done
  go test -count=1 -run TestReportFirstScreen -v ./collector/report | grep -E 'from y=|^(---|ok|FAIL)|SKIP'
}

case $what in
  dashboard) dashboard ;;
  report) report "${2:-}" ;;
  all) dashboard; report "${2:-}" ;;
  *) echo "usage: scripts/screenshots.sh [dashboard|report [OUT_DIR]|all]" >&2; exit 2 ;;
esac
