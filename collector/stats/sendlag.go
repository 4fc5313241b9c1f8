package stats

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

// lateLag is the send lag the late-generator rule judges, and what it is
// called: the k6 start lag when minting is part of the send lag.
func (r *Run) lateLag() (float64, string) {
	if r.SendLagParts != nil {
		return r.SendLagParts.StartLagMs.P99, "k6 start lag p99 (minting excluded)"
	}
	return r.SendLagMs.P99, "send lag p99"
}
