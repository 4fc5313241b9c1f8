#!/usr/bin/env bash
# The same campaign against Dex and against tokex's reference server, side by
# side on this machine: tokex's subject issuer (`tokex jwks --serve`) is Dex's
# upstream; both servers run with GOMAXPROCS=1 as external targets measured
# through target.pid; the subject tokens (ES256, per-user email and groups
# claims) and the load are the same, only the request differs as each server
# needs it (Dex: id_token subject tokens and connector_id). Prints p95 and
# CPU-ms per exchange of each stage's reported run.
#   STAGES=20,50,100  ROUNDS=3  DURATION=20s  WARMUP=5s  AGENTS=2
set -euo pipefail
cd "$(dirname "$0")/.."
STAGES=${STAGES:-20,50,100} ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-20s} WARMUP=${WARMUP:-5s} AGENTS=${AGENTS:-2}
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
dex=$(./scripts/dex-e2e/build.sh)
go build -o "$work/tokex" ./cmd/tokex
export TOKEX_HOME="$work/home" TOKEX_CLIENT_SECRET="bench-secret-$RANDOM$RANDOM"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
iss_port=$(port) dex_port=$(port) tel_port=$(port) ref_port=$(port)
issuer=http://127.0.0.1:$iss_port
"$work/tokex" jwks --serve "127.0.0.1:$iss_port" > "$work/issuer.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q "subject.issuer" "$work/issuer.log" && break; sleep 0.1; done

clients=""
for i in $(seq 0 $((AGENTS - 1))); do
  clients+="- {id: perf-agent-$i, name: perf-agent-$i, secret: $TOKEX_CLIENT_SECRET}"$'\n'
done
cat > "$work/dex.yaml" <<EOF
issuer: http://127.0.0.1:$dex_port/dex
storage: {type: memory}
web: {http: 127.0.0.1:$dex_port}
telemetry: {http: 127.0.0.1:$tel_port}
logger: {level: warn, format: text}
oauth2:
  grantTypes: ["urn:ietf:params:oauth:grant-type:token-exchange"]
  skipApprovalScreen: true
staticClients:
$clients
connectors:
- type: oidc
  id: tokex
  name: tokex
  config:
    issuer: $issuer
    clientID: dex-unused
    clientSecret: unused
    redirectURI: http://127.0.0.1:$dex_port/dex/callback
    scopes: ["openid", "email", "groups"]
    userNameKey: sub
    insecureEnableGroups: true
EOF
GOMAXPROCS=1 "$dex" serve "$work/dex.yaml" > "$work/dex.log" 2>&1 &
dex_pid=$!
pids+=($dex_pid)
GOMAXPROCS=1 "$work/tokex" serve --addr "127.0.0.1:$ref_port" --subject-issuer "$issuer" --clients "$AGENTS" > "$work/serve.log" 2>&1 &
ref_pid=$!
pids+=($ref_pid)
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$dex_port/dex/.well-known/openid-configuration" >/dev/null &&
    curl -sf "http://127.0.0.1:$ref_port/healthz" >/dev/null && break
  sleep 0.2
done

common="subject:
  issuer: $issuer
  alg: ES256
  claims:
    email: \"{{user}}@example.com\"
    email_verified: true
    groups: [perf, \"team-{{user_number}}\"]
agents: {count: $AGENTS}
stages: [$STAGES]
rounds: $ROUNDS
duration: $DURATION
warmup: $WARMUP
sanity: {duration: 5s}
thresholds:
  allow_warnings: [generator_late, generator_starved, host_saturated]"
cat > "$work/dex-campaign.yaml" <<EOF
name: dex
target: {url: "http://127.0.0.1:$dex_port/dex/token", pid: $dex_pid}
request:
  subject_token_type: id_token
  requested_token_type: access_token
  resources: []
  scope: openid email groups
  extra: {connector_id: tokex}
$common
EOF
cat > "$work/ref-campaign.yaml" <<EOF
name: reference
target: {url: "http://127.0.0.1:$ref_port/as/token.oauth2", pid: $ref_pid}
$common
EOF
for t in dex ref; do
  echo "== $t: $(grep -m1 url: "$work/$t-campaign.yaml")" >&2
  "$work/tokex" run --config "$work/$t-campaign.yaml" --no-tui --out "$work/ev-$t" > "$work/$t.out" 2>&1 || true
  tail -n 25 "$work/$t.out" >&2
done
python3 - "$work" <<'PY'
import glob, json, sys
work = sys.argv[1]
print(f"\n{'server':<10} {'stage':>6} {'p95 ms':>8} {'CPU-ms/exchange':>16} {'success':>8}  warnings")
for name, label in (("dex", "Dex"), ("ref", "reference")):
    found = glob.glob(f"{work}/ev-{name}/*/summary.json")
    s = json.load(open(found[0])) if found else {}
    if not s.get("stages"):
        print(f"{label:<10} no summary: the campaign stopped early (its output is above)")
        continue
    for st in s["stages"]:
        rid = st.get("reported_run")
        run = next((r for r in st["runs"] if r["id"] == rid), None)
        if run is None:
            print(f"{label:<10} {st['target_rps']:>5g}/s  no reported run")
            continue
        cpu = (run.get("engine_cpu") or {}).get("cpu_ms_per_exchange")
        warns = sorted({w["code"] for w in s.get("warnings", []) if w.get("run") == rid})
        print(f"{label:<10} {st['target_rps']:>5g}/s {run['latency_ms']['p95']:>8.2f} {cpu if cpu is not None else float('nan'):>16.2f} "
              f"{run['success_ratio'] * 100:>7.2f}%  {', '.join(warns)}")
PY
