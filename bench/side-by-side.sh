#!/usr/bin/env bash
# tokex's generator and vegeta side by side, one after the other in one run,
# against the same no-delay loopback endpoint (bench/sink): process CPU per
# request of each, as ratios. tokex signs a fresh ES256 subject token per
# request and writes its evidence; vegeta sends one fixed body (a pre-signed
# token) and writes its binary results. Both are run under `nice -n $NICE`
# and measured whole, start to exit (wait4 user+system via /usr/bin/time),
# over warmup + duration; tokex's includes its start-up and the statistics
# it computes from its evidence at the end of the run. vegeta is installed
# from the Go module proxy; k6 cannot be (no registry here ships a k6 binary).
#   RATES="2000 5000"  DURATION=20s  WARMUP=2s  ALG=ES256  NICE=10  KEEP=1
set -euo pipefail
cd "$(dirname "$0")/.."
RATES=${RATES:-2000 5000} DURATION=${DURATION:-20s} WARMUP=${WARMUP:-2s} ALG=${ALG:-ES256} NICE=${NICE:-10}
VEGETA=github.com/tsenart/vegeta/v12@v12.13.0
bin=${TOKEX_BENCH_BIN:-$HOME/.cache/tokex-bench/bin}
work=$(mktemp -d)
sink=
trap '[ -n "$sink" ] && kill "$sink" 2>/dev/null; [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"' EXIT
[ -x "$bin/vegeta" ] || GOBIN=$bin go install "$VEGETA"
go build -o "$work/tokex" ./cmd/tokex
go build -o "$work/sink" ./bench/sink
export TOKEX_HOME="$work/home" TOKEX_CLIENT_SECRET="bench-secret-$RANDOM"

nice -n "$NICE" "$work/sink" > "$work/sink.log" &
sink=$!
for _ in $(seq 50); do grep -q "listening on" "$work/sink.log" && break; sleep 0.1; done
url=$(sed -n 's/^sink: listening on //p' "$work/sink.log")

# vegeta's request: the one tokex sends (same form, Basic auth, headers),
# with one pre-signed subject token.
tok=$("$work/tokex" mint --subject-alg "$ALG" --count 1 --aud perf-agent-0)
printf 'grant_type=%s&requested_token_type=%s&resource=%s&scope=%s&subject_token_type=%s&subject_token=%s' \
  'urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange' \
  'urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token' 'https%3A%2F%2Fmcp.example.internal%2Fmcp' \
  'mcp%3Atools%3Ainvoke' 'urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token' "$tok" > "$work/body.txt"
cat > "$work/targets.txt" <<T
POST $url
Content-Type: application/x-www-form-urlencoded
Accept: application/json
Authorization: Basic $(printf 'perf-agent-0:%s' "$TOKEX_CLIENT_SECRET" | base64 -w0)
@$work/body.txt
T
secs() { python3 -c 'import sys,re; v=sys.argv[1]; m=re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)",v); print(float(m[1])*{"ms":.001,"s":1,"m":60}[m[2]])' "$1"; }
total=$(python3 -c "print($(secs "$DURATION") + $(secs "$WARMUP"))")
timed() { # out-file, command… ; records "elapsed user sys maxrss_kb"
  local out=$1; shift
  /usr/bin/time -o "$out" -f '%e %U %S %M' nice -n "$NICE" "$@"
}

report() { # rate, load before, load after
  python3 - "$1" "$work" "$2" "$3" <<'PY'
import glob, gzip, json, sys
rate, work, la0, la1 = sys.argv[1:]
def rusage(name):
    el, u, s, rss = open(f"{work}/{name}-{rate}.time").read().split()[-4:]
    return float(u) + float(s), float(el), int(rss) / 1024
st = json.load(open(glob.glob(f"{work}/ev-{rate}/*/runs/*/stats.json")[0]))
with gzip.open(glob.glob(f"{work}/ev-{rate}/*/runs/*/requests.csv.gz")[0], "rt") as f:
    head = f.readline().rstrip("\n").split(",")
    lag = head.index("send_lag_us")
    sent = sum(1 for line in f if line.split(",")[lag] != "")
v = json.load(open(f"{work}/vegeta-{rate}.json"))
tcpu, tel, trss = rusage("tokex")
vcpu, vel, vrss = rusage("vegeta")
rcpu, _, _ = rusage("vreport")
t_us, v_us, vr_us = tcpu / sent * 1e6, vcpu / v["requests"] * 1e6, (vcpu + rcpu) / v["requests"] * 1e6
lagms = st["send_lag_ms"]
warn = ",".join(w["code"] for w in st.get("warnings", []) if w["code"] != "engine_cpu_unknown") or "-"
print(f"tool           requests  CPU s   CPU µs/req  ratio  peak RSS  notes")
print(f"tokex          {sent:8d}  {tcpu:5.2f}  {t_us:10.1f}  {t_us / v_us:5.2f}  {trss:5.0f} MB  "
      f"{st['target_rps']}/s: achieved {st['achieved_ratio'] * 100:.2f} %, dropped {st['dropped']} "
      f"(+{st.get('warmup_dropped', 0)} in warmup), send lag p50 {lagms['p50']} ms p99 {lagms['p99']} ms, warnings {warn}")
print(f"vegeta         {v['requests']:8d}  {vcpu:5.2f}  {v_us:10.1f}  {1:5.2f}  {vrss:5.0f} MB  "
      f"rate {v['rate']:.1f}/s, success {v['success'] * 100:.2f} %")
print(f"vegeta+report  {v['requests']:8d}  {vcpu + rcpu:5.2f}  {vr_us:10.1f}  {vr_us / v_us:5.2f}  "
      f"          `vegeta report` of its results added")
print(f"k6 v2.2.0      (not run: no registry here ships k6; the issue measured 439 µs/req at 2,000/s on a like machine)")
print(f"load average (1, 5 min) before {la0}, after {la1}")
PY
}

echo "# side-by-side: $ALG, ${DURATION} + ${WARMUP} warmup per rate, nice -n $NICE, $(nproc) cores, $(go version | cut -d' ' -f3)"
for rate in $RATES; do
  read -r l1 l5 _ < /proc/loadavg
  echo "## $rate/s   load average before: $l1 $l5"
  timed "$work/tokex-$rate.time" "$work/tokex" run --no-tui --no-sanity --subject-alg "$ALG" --target "$url" \
    --stages "$rate" --rounds 1 --duration "$DURATION" --warmup "$WARMUP" --out "$work/ev-$rate" > "$work/tokex-$rate.log" 2>&1 || true
  timed "$work/vegeta-$rate.time" "$bin/vegeta" attack -targets "$work/targets.txt" -rate "$rate/1s" \
    -duration "${total}s" -output "$work/vegeta-$rate.bin"
  timed "$work/vreport-$rate.time" "$bin/vegeta" report -type json -output "$work/vegeta-$rate.json" "$work/vegeta-$rate.bin"
  read -r l1b l5b _ < /proc/loadavg
  report "$rate" "$l1 $l5" "$l1b $l5b"
done
kill "$sink"; wait "$sink" 2>/dev/null || true; sink=
cat "$work/sink.log" | sed -n 's/^sink: answered/sink answered/p'
