#!/usr/bin/env bash
# Idle memory of the embedded server: tokex-engine (the server alone) against
# tokex re-executed as its own engine (`tokex engine`, the fallback that
# carries engine_memory_inflated). Both serve the same config (TLS, RS256,
# 10 default clients); RSS is read from /proc/PID/status once the ready
# report arrived and the process has idled for IDLE seconds (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$out"' EXIT
go build -o "$out/tokex" ./cmd/tokex
go build -o "$out/tokex-engine" ./cmd/tokex-engine
TOKEX_HOME="$out/home" "$out/tokex" jwks >"$out/jwks.json"
cat >"$out/serve.yaml" <<YAML
addr: 127.0.0.1:0
tls: {enabled: true, self_signed: true}
subject: {jwks_file: $out/jwks.json}
YAML
ls -l "$out/tokex" "$out/tokex-engine" | awk '{printf "%s: %.1f MiB binary\n", $NF, $5 / 1048576}' | sed "s#$out/##"
rss() { # label, program…
  local label=$1; shift
  exec 3>"$out/ready.$label"
  TOKEX_CLIENT_SECRET=bench-secret "$@" --config "$out/serve.yaml" --ready-fd 3 >/dev/null 2>&1 &
  local pid=$!
  pids+=("$pid")
  exec 3>&-
  for _ in $(seq 100); do [ -s "$out/ready.$label" ] && break; sleep 0.1; done
  [ -s "$out/ready.$label" ] || { echo "$label: no ready report" >&2; exit 1; }
  sleep "${IDLE:-3}"
  awk -v l="$label" '/^(VmRSS|RssAnon|RssFile):/ {v[$1] = $2 / 1024}
    END {printf "%-13s idle RSS %5.1f MiB (RssAnon %4.1f, RssFile %4.1f)\n", l ":", v["VmRSS:"], v["RssAnon:"], v["RssFile:"]}' "/proc/$pid/status"
  kill "$pid"
}
rss tokex-engine "$out/tokex-engine"
rss "tokex engine" "$out/tokex" engine
