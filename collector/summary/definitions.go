package summary

import "strings"

// CampaignStatus is where a campaign is: running, or how it ended.
type CampaignStatus string

const (
	CampaignRunning CampaignStatus = "running"
	CampaignDone    CampaignStatus = "done"
	CampaignAborted CampaignStatus = "aborted"
	CampaignFailed  CampaignStatus = "failed"
)

// LatencyDefinition is stated in every summary so nobody has to guess.
const LatencyDefinition = "latency_ms: from the moment the request is sent to the full response, " +
	"like k6's http_req_duration; latency_from_schedule_ms: from the arrival's scheduled time " +
	"(includes any send lag, free of coordinated omission). Percentiles are exact " +
	"(linear interpolation between closest ranks), measured phase only."

// ReportedRunRule is how each stage's reported run is chosen, stated in
// every summary.
const ReportedRunRule = "the median of the stage's finished runs ordered by verdict, then measured p95: " +
	"a run that failed its thresholds ranks after every run that passed (a dead target answers fast), " +
	"a run without a completed exchange last; of an even count the upper middle run, the worse one"

// CPUDefinition states how CPU per exchange is computed (summary.json).
const CPUDefinition = "engine_cpu.cpu_ms_per_exchange: engine CPU used in the measured window " +
	"(cumulative CPU counters interpolated at its edges, method cumulative; else the average sampled rate × window, " +
	"method rate) ÷ engine_cpu.exchanges, the responses received in the same window by completion time " +
	"(any HTTP status, warmup arrivals included; timeouts, connection errors and dropped arrivals excluded). " +
	"CPU and the responses it paid for are counted over one interval, so the figure stays true when the " +
	"server falls behind its schedule. engine_cpu.source says what was sampled."

// SendLagDefinition says what send lag measures with a driver; it is stated
// in every summary next to the latency definition.
func SendLagDefinition(driver string) string {
	switch {
	case strings.HasPrefix(driver, "kube"):
		return "send_lag_ms (kube, k6 agents): from the arrival's scheduled slot to the moment k6 sends the request, " +
			"on JavaScript's 1 ms clock; it includes minting and signing the subject token inside the iteration " +
			"(send_lag_parts.mint_ms) besides k6 starting the iteration late (send_lag_parts.start_lag_ms), so it is " +
			"not comparable with the local driver's; the late-generator rule judges start_lag_ms."
	case driver == "k6 import":
		return "send_lag_ms (k6 import): unknown, k6 records no scheduled time; rows start at response time minus duration."
	default:
		return "send_lag_ms (local): from the arrival's scheduled time to the moment the request is handed to the HTTP " +
			"client, on the monotonic clock; subject tokens are minted ahead in a pipeline, so it is the generator's " +
			"own scheduling delay."
	}
}
