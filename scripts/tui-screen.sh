#!/usr/bin/env bash
# Shows the real dashboard: runs `tokex run` (or `tokex replay DIR`) under tmux
# at a fixed size and prints capture-pane snapshots while it runs and at the
# end, then quits it with q.
#   scripts/tui-screen.sh [run|replay DIR] [-- extra tokex flags]
#   SIZE=120x40 EVERY=20 (seconds between snapshots)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tmux >/dev/null || { apt-get update -qq && apt-get install -y -qq tmux >/dev/null; }
SIZE=${SIZE:-120x40} EVERY=${EVERY:-20}
mode=${1:-run}; shift || true
target=()
if [ "$mode" = replay ]; then target=("$1"); shift; fi
[ "${1:-}" = "--" ] && shift
bin=$(mktemp -d)/tokex
go build -o "$bin" ./cmd/tokex
session=tokex-screen-$$
tmux kill-session -t "$session" 2>/dev/null || true
tmux new-session -d -s "$session" -x "${SIZE%x*}" -y "${SIZE#*x}" \
  "$bin $mode ${target[*]} $*; echo; echo '[tokex exited with '\$?']'; sleep 600"
trap 'tmux kill-session -t "$session" 2>/dev/null || true' EXIT
snap() { echo "=== $1 ==="; tmux capture-pane -p -t "$session"; }
for _ in $(seq 1 200); do
  sleep "$EVERY"
  screen=$(tmux capture-pane -p -t "$session")
  if grep -q "press q to exit" <<<"$screen"; then
    snap "final screen"
    tmux send-keys -t "$session" q
    sleep 1
    snap "after quitting (the final table stays in the terminal)"
    exit 0
  fi
  grep -q "tokex exited" <<<"$screen" && { snap "tokex exited"; exit 1; }
  snap "$(date +%T)"
done
