package stats

import "strings"

// SendLagParts splits the send lag of a k6 agent (the kube driver), where
// the subject token is minted inside the iteration: StartLagMs is how late
// k6 started the iteration after its scheduled time (the wait), MintMs how
// long the script then spent minting and signing the token. Send lag is
// about their sum. Both come from the agents' lines on JavaScript's
// millisecond clock (ClockResolutionMs), so each is ±1 ms per request.
type SendLagParts struct {
	StartLagMs        Latency `json:"start_lag_ms"`
	MintMs            Latency `json:"mint_ms"`
	ClockResolutionMs float64 `json:"clock_resolution_ms"`
	SigningAlg        string  `json:"signing_alg,omitempty"`
}

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

// lateLag is the send lag the late-generator rule judges, and what it is
// called: the k6 start lag when minting is part of the send lag.
func (r *Run) lateLag() (float64, string) {
	if r.SendLagParts != nil {
		return r.SendLagParts.StartLagMs.P99, "k6 start lag p99 (minting excluded)"
	}
	return r.SendLagMs.P99, "send lag p99"
}
