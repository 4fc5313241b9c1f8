#!/usr/bin/env bash
# Reference server on ONE core: `tokex serve` pinned to CPU 0, wrk pinned to
# CPU 1 replaying pre-signed subject tokens (RFC 8693 requests as in the
# article). Prints exchanges/s and the server's CPU-ms per exchange (from
# /proc/<pid>/stat utime+stime over the wrk run).
#   ALG=RS256|ES256|EdDSA (both ways)  DURATION=20s  CONN=16
set -euo pipefail
cd "$(dirname "$0")/.."
ALG=${ALG:-RS256} DURATION=${DURATION:-20s} CONN=${CONN:-16}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/tokex" ./cmd/tokex
export TOKEX_HOME="$work/home" TOKEX_CLIENT_SECRET="bench-secret-$RANDOM"
"$work/tokex" mint --subject-alg "$ALG" --count 5000 --aud perf-agent-0 > "$work/tokens.txt"
"$work/tokex" jwks > "$work/jwks.json"
taskset -c 0 "$work/tokex" serve --addr 127.0.0.1:0 --subject-jwks "$work/jwks.json" --signing-alg "$ALG" > "$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 50); do grep -q "listening on" "$work/serve.log" && break; sleep 0.1; done
url=$(sed -n 's/^tokex serve: listening on //p' "$work/serve.log")
auth="Basic $(printf 'perf-agent-0:%s' "$TOKEX_CLIENT_SECRET" | base64 -w0)"
cat > "$work/exchange.lua" <<EOF
local tokens = {}
for line in io.lines("$work/tokens.txt") do tokens[#tokens + 1] = line end
local i = 0
local prefix = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange"
  .. "&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token"
  .. "&requested_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token"
  .. "&resource=https%3A%2F%2Fmcp.example.internal%2Fmcp&scope=mcp%3Atools%3Ainvoke&subject_token="
local headers = { ["Content-Type"] = "application/x-www-form-urlencoded", ["Authorization"] = "$auth" }
request = function()
  i = i % #tokens + 1
  return wrk.format("POST", "/as/token.oauth2", headers, prefix .. tokens[i])
end
EOF
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
c0=$(cpu)
taskset -c 1 wrk -t1 -c"$CONN" -d"$DURATION" --latency -s "$work/exchange.lua" "$url" > "$work/wrk.txt"
c1=$(cpu)
cat "$work/wrk.txt"
python3 - "$work/wrk.txt" "$c0" "$c1" "$ALG" <<'PY'
import re, sys
txt = open(sys.argv[1]).read()
total = int(re.search(r"(\d+) requests in", txt).group(1))
bad = re.search(r"Non-2xx or 3xx responses: (\d+)", txt)
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", txt).group(1))
ticks = float(sys.argv[3]) - float(sys.argv[2])
print(f"\n{sys.argv[4]}: {rps:.0f} exchanges/s on one core, {ticks * 10 / total:.3f} CPU-ms per exchange "
      f"({total} requests, {int(bad.group(1)) if bad else 0} non-2xx)")
PY
