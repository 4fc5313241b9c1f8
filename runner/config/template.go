package config

// Template is what `tokex init` writes: the seed article's campaign, every
// field commented. A test keeps it equal to Article().
const Template = `# tokex campaign — the defaults reproduce the seed article's campaign:
# 10 agents, 100 users, stages 100 → 250 → 500 exchanges/s repeated 3 times,
# 5-minute measured runs after a 30 s warmup, one discarded sanity run.
name: article

# local: in-process generator (the embedded default). kube comes with the
# Kubernetes driver.
driver: local

target:
  # Token endpoint of the server under test. Empty: tokex starts its own
  # reference server as a child process and measures that.
  url: ""
  # ca_file: /path/to/ca.pem         # trust for an https url
  # insecure_skip_verify: false
  # http2: true
  # How tokex measures the engine's CPU and memory (one of these):
  # pid: 12345                     # a server on this host: the process and all its descendants
  # pid_file: /run/my-as.pid       # or the file it writes its PID to, read at every start and resume
  # cgroup: /sys/fs/cgroup/system.slice/my-as.service   # a cgroup v2 directory
  # metrics_url: http://as.internal:9090/metrics      # Prometheus process_cpu_seconds_total, any host
  # And/or ask an existing Prometheus over each run's exact window (PromQL; docs/prometheus.md):
  # prometheus: http://prometheus.monitoring:9090
  # prometheus_cpu: process_cpu_seconds_total{job="my-as"}          # a CPU-seconds counter
  # prometheus_memory: process_resident_memory_bytes{job="my-as"}   # a memory gauge
  # Stop the campaign (exit 2, evidence kept, --resume continues) when the target
  # neither answered nor accepted a connection for this long (a slow one is not dead).
  unreachable_after: 10s
  # A kept-alive connection idle longer than this is closed, not reused: below the
  # 5 s after which Node, Apache and uvicorn close idle ones (local driver).
  keep_alive_idle: 4s
  embedded:
    signing_alg: RS256             # issued tokens of the embedded server
    # tls: true                    # HTTPS + HTTP/2, like the article's engines
    # config: serve.yaml           # a 'tokex serve' config to start from
    # engine: /opt/tokex/tokex-engine  # the server's program (default: beside tokex; docs/reference-server.md)
    # engines: [1, 2]              # engine counts measured in turn, sharing the port (docs/scaling.md)

# The RFC 8693 request, as in the article.
request:
  # access_token, jwt, id_token (Dex verifies id_tokens itself), or a URI
  subject_token_type: urn:ietf:params:oauth:token-type:access_token
  requested_token_type: urn:ietf:params:oauth:token-type:access_token
  resources:
    - https://mcp.example.internal/mcp
  # audiences: [billing]
  scope: mcp:tools:invoke
  # extra: {connector_id: tokex}   # extra form fields (Dex's connector_id, …); --form NAME=VALUE
  # client_secret_basic or client_secret_post; private_key_jwt (RFC 7523: a client assertion
  # signed per request with agents.client_key) or tls_client_auth (RFC 8705: agents.client_cert)
  auth_method: client_secret_basic
  # client_assertion:              # private_key_jwt's assertions: iss = sub = the client id, unique jti
  #   audience: https://as.example # default: the token endpoint URL
  #   lifetime: 60s
  timeout: 10s

# Fresh subject token per request, signed by the generator.
subject:
  # The iss the server trusts: 'tokex jwks --serve' prints it and serves
  # the discovery document and JWKS a server needs to trust tokex's keys.
  issuer: https://pf-perf-subject
  alg: RS256                       # RS256, ES256 or EdDSA: tokex stores one key per algorithm
  # key_file: subject-key.pem      # default: a per-campaign key (embedded) or tokex's stored key
  lifetime: 5m
  # premint: true                  # sign each run's tokens before it starts (memory only), so the
  #                                # measured window spends no CPU on signing: for RS256 at hundreds/s
  # kid: my-registered-kid         # default: the key's RFC 7638 thumbprint, as 'tokex jwks' publishes it
  # typ: at+jwt                    # header typ, default JWT
  # audience: https://as.example   # fixed aud; default the agent's client id (the article)
  # claims:                        # added to every token; {{user}}, {{user_number}}, {{client_id}} per token
  #   email: "{{user}}@example.com"
  #   email_verified: true
  #   groups: [perf, "team-{{user_number}}"]
  # actor:                         # the agent's own identity as actor_token with every exchange (act names it)
  #   source: minted               # minted: a JWT signed with tokex's actor key ('tokex jwks --serve' publishes it);
  #                                # client_credentials: a token the agent's client gets from the target, kept until
  #                                # refresh_before its expiry
  #   issuer: https://pf-perf-subject/actors   # default: subject.issuer + /actors
  #   lifetime: 5m
  #   refresh_before: 30s

# What counts as a successful exchange ('tokex smoke' applies the same check).
check:
  # required: [access_token, issued_token_type]   # members a 200 must carry, non-empty (the default; [] none)
  # token_type: bearer             # the expected token_type, any case (default: not checked)
  verify:                          # a sample of the issued tokens checked against the target's own keys
    sample: 0                      # fraction of successes verified, 0 (off) to 1; 0.01 is cheap
    # metadata_url: https://as.example/.well-known/openid-configuration   # default: discovered from target.url
    # audience: any                # expected in aud; default the first resource or audience
    # client: true                 # client_id or act.sub is the agent's client
    # lifetime: 5m                 # expected exp − iat

agents:
  count: 10                        # clients perf-agent-0 … perf-agent-9
  client_id_prefix: perf-agent-
  # client_secret: …               # better: TOKEX_CLIENT_SECRET; never written to evidence
  max_in_flight: 100               # per agent; an arrival finding it full is dropped
  # client_key:                    # private_key_jwt: one stored key per agent; 'tokex jwks --clients'
  #   alg: ES256                   # prints their public keys for the server to register
  #   file: client-key.pem         # or one key for every agent

users:
  count: 100                       # perf-user-001 … perf-user-100, round-robin
  prefix: perf-user-

stages: [100, 250, 500]            # total exchanges per second
rounds: 3
duration: 5m                       # measured phase of each run
warmup: 30s                        # before it, excluded from every figure
pause: 0s                          # between runs
idle: 30s                          # the engine at rest before the first run: its fixed cost, beside the fit's

capacity:                          # tokex capacity: the highest rate that meets the thresholds
  start: 0                         # first probe; 0: the first stage
  max: 0                           # highest probe; 0: what the agents can send
  resolution: 0.05                 # bisect until the bracket is this narrow
  rounds: 2                        # per probe (noise needs two; a third when a verdict is within noise)
  cool_down: 0s                    # after a broken probe, wait until the engine is back at rest, this long at most;
  #                                # 0: twice a probe's length, 30s to 10m (docs/cool-down.md)
  p99_ms: 0                        # also require p99 below this; 0: not checked
  project: 0                       # print the cores this rate needs; 0: none

sanity:
  enabled: true                    # a throwaway run before round 1
  duration: 30s
  rate: 0                          # 0: the first stage's rate

thresholds:
  p95_ms: 500
  success_ratio: 0.99
  max_dropped: 0
  # A run whose figures are the generator's or the host's rather than the
  # server's fails unless its warning is allowed here (it is still reported):
  # generator_late, generator_starved, host_saturated.
  # allow_warnings: [host_saturated]

# What each arrival does (docs/agentic.md).
workload:
  chain: 1                         # a delegation chain of 1–5 exchanges: hop k exchanges hop k−1's token; rates count chains
  # hops:                          # the services of hops 2…chain: default client <client_id_prefix>hop<k>, audience its id
  #   - {client_id: svc-a, audience: https://a.example/api}
  # steps: true                    # with a chain, also run chains of length 1…chain−1: each hop's CPU is a difference
  # baseline: client_credentials   # also run this plain grant (or jwt_bearer), interleaved: the exchange's premium
  # mix: {exchange: 70, client_credentials: 30}   # or draw each arrival's grant from weights, seeded:
  # seed: 0                        # 0: drawn at the start and written to the evidence's config.yaml

sample_interval: 1s                # engine and generator CPU/memory
out: tokex-evidence

# The Kubernetes driver (driver: kube): k6 agent Pods next to the engines.
# target.url is then the engines' token endpoint as seen from inside the cluster.
kube:
  # namespace: pf-perf             # default: the kubeconfig context's
  image: grafana/k6:2.2.0
  # engines:                       # the Pods whose CPU is measured, and their Service
  #   namespace: pf-perf
  #   selector: app.kubernetes.io/name=pingfederate-engine
  #   service: pf-pingfederate-engine
  #   port: 9031
  #   prometheus: http://prometheus.monitoring:9090   # each run's engine CPU and memory from cAdvisor's series (PromQL)
  #   replicas: [1, 2, 4]          # engine counts measured in turn, restored after (docs/scaling.md)
  #   workload: deployment/pf-pingfederate-engine  # default: the engine Pods' owner
  #   settle: 15s                  # after each count is Ready
  #   pause_hpa: false             # pin an HPA of the workload to each count (else refused)
  # resources:                     # agent Pods, in Kubernetes' own field names. Unset requests are
  #   requests: {cpu: 350m}        # sized per run: CPU 100m + rate per agent × 5 ms (RS256; ES256 3 ms), memory 64Mi
  #   limits: {cpu: "1"}           # + VUs × 0.4Mi (2 × max_in_flight with a warmup) + rate × 0.1Mi. A CPU limit can starve k6.
  # node_selector: {pool: load}
  # tolerations: [{key: dedicated, operator: Equal, value: load, effect: NoSchedule}]
  # affinity: {}
  # annotations: {}
  # labels: {}
  # insecure_skip_verify: false    # k6 accepts the engines' self-signed certificate
  ttl_after_finished: 10m
  metrics_interval: 5s
  start_timeout: 30s               # an agent Pod not running by then fails the run
  # summary_mode: full             # k6's --summary-mode: compact (default) or full (per-scenario sections)
  # evidence_file: auto            # each agent also keeps its output gzipped in its Pod, copied out (pods/exec)
  #                                # when k6 ends: auto (when a run's log passes the kubelet's rotation size), always, never
`
