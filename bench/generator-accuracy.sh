#!/usr/bin/env bash
# Generator accuracy: 2,000 exchanges/s for 30 s against the embedded
# reference server with ES256 both ways (subject and issued tokens).
# Prints achieved rate vs target, dropped arrivals and the send-lag
# percentiles (scheduled -> sent) of the measured phase, from stats.json.
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${RATE:-2000} DURATION=${DURATION:-30s}
out=$(mktemp -d)
go build -o "$out/tokex" ./cmd/tokex
"$out/tokex" run --no-tui --no-sanity --subject-alg ES256 --stages "$RATE" --rounds 1 \
  --duration "$DURATION" --warmup 5s --out "$out/ev" | tail -n 20
stats=$(ls "$out"/ev/*/runs/*/stats.json)
python3 - "$stats" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"target {s['target_rps']}/s  achieved {s['achieved_rps']}/s  ratio {s['achieved_ratio']:.4f}  "
      f"dropped {s['dropped']}  success {s['success_ratio']:.4f}")
lag = s['send_lag_ms']
print(f"send lag (ms): p50 {lag['p50']}  p99 {lag['p99']}  max {lag['max']}")
print(f"engine {s['engine_cpu']['avg_cores']} cores, {s['engine_cpu']['cpu_ms_per_exchange']} CPU-ms/exchange; "
      f"generator {s['generator_cpu']['avg_cores']} cores")
PY
[ -n "${KEEP:-}" ] && echo "kept $out" || rm -rf "$out"
