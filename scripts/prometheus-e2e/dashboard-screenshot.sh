#!/usr/bin/env bash
# The screenshot of docs/prometheus.md: a real campaign watched by a real
# Prometheus, drawn as the Grafana dashboard lays it out.
#   1. installs Debian's prometheus (install.sh) and chromium when missing;
#   2. builds tokex and tokex-engine;
#   3. starts Prometheus on loopback (1 s scrapes, storage in a temporary
#      folder) scraping the reference server's metrics.addr and tokex's
#      --metrics-addr;
#   4. runs a campaign (sanity, then 100, 200 and 300/s for 20 s each after
#      5 s of warmup) on the embedded server, its engine figure by PromQL;
#   5. runs every panel's queries of deploy/grafana/tokex-campaign.json over
#      the campaign (dashboard.mjs) and screenshots the page in headless
#      Chromium.
# Grafana itself is not installable here: the picture is the dashboard's
# queries and their answers, drawn by dashboard.mjs, not Grafana's look.
#   scripts/prometheus-e2e/dashboard-screenshot.sh [OUT.png]   (default docs/prometheus-dashboard.png)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(realpath -m "${1:-docs/prometheus-dashboard.png}")
./scripts/prometheus-e2e/install.sh
command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }
command -v node >/dev/null || { echo "node is needed to draw the panels" >&2; exit 1; }
tmp=$(mktemp -d)
prom_pid=
trap '[ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

free_port() { # a loopback port nothing listens on
  local p
  while :; do
    p=$((20000 + RANDOM % 20000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}
engine_port=$(free_port) tokex_port=$(free_port) prom_port=$(free_port)

go build -o "$tmp/" ./cmd/tokex ./cmd/tokex-engine
cat >"$tmp/prometheus.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}
scrape_configs:
  - job_name: tokex-engine
    static_configs: [{targets: ['127.0.0.1:$engine_port']}]
  - job_name: tokex
    static_configs: [{targets: ['127.0.0.1:$tokex_port']}]
YML
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$tmp/prometheus.log" 2>&1 &
prom_pid=$!
prom=http://127.0.0.1:$prom_port
for _ in $(seq 300); do curl -fsS "$prom/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
sleep 6 # Prometheus starts its scrape loops once service discovery settled

cat >"$tmp/serve.yaml" <<YML
metrics: {addr: "127.0.0.1:$engine_port"}
YML
cat >"$tmp/campaign.yaml" <<YML
name: dashboard
stages: [100, 200, 300]
rounds: 1
duration: 20s
warmup: 5s
pause: 2s
idle: 0s
sample_interval: 500ms
agents: {count: 2}
subject: {alg: ES256}
target:
  embedded: {config: $tmp/serve.yaml, signing_alg: ES256}
  prometheus: $prom
  prometheus_cpu: process_cpu_seconds_total{job="tokex-engine"}
  prometheus_memory: process_resident_memory_bytes{job="tokex-engine"}
thresholds: {allow_warnings: [generator_late, generator_starved, host_saturated]}
YML
from=$(date +%s)
TOKEX_HOME="$tmp/home" "$tmp/tokex" run --config "$tmp/campaign.yaml" --engine "$tmp/tokex-engine" --no-tui \
  --metrics-addr "127.0.0.1:$tokex_port" --metrics-linger 5s --out "$tmp/evidence" | tail -n 30 || true
sleep 2 # the last scrape may fall in the second after tokex exits
to=$(date +%s)
id=$(basename "$(ls -d "$tmp"/evidence/*-dashboard)")
node scripts/prometheus-e2e/dashboard.mjs "$prom" deploy/grafana/tokex-campaign.json "$id" "$from" "$to" 4s >"$tmp/dashboard.html"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --hide-scrollbars --user-data-dir="$tmp/profile" \
  --window-size=1400,1150 --screenshot="$out" "file://$tmp/dashboard.html" 2>/dev/null
echo "wrote $out ($(du -k "$out" | cut -f1) KB): campaign $id, $from–$to"
