package curve

// CoolDown is how a capacity search cooled down before a probe, after a
// broken one: until the engine's CPU was back near its at-rest level and a
// probe request answered at its unloaded latency, bounded. It is recorded
// in the stats of the run it preceded.
type CoolDown struct {
	Seconds      float64 `json:"seconds"`
	BoundSeconds float64 `json:"bound_seconds"`
	// Settled: both held (or what could be watched held) before the bound.
	Settled bool   `json:"settled"`
	Reason  string `json:"reason"`
	// The engine's cores at the end (its samples over the last seconds),
	// the level it had to come down to, and the level at rest (campaign.idle;
	// absent when not measured).
	EngineCores *float64 `json:"engine_cores,omitempty"`
	TargetCores *float64 `json:"target_cores,omitempty"`
	RestCores   *float64 `json:"rest_cores,omitempty"`
	// The last probe request's latency, the unloaded latency it was held
	// against (the median of probe requests before the first probe) and
	// the most it could be.
	ProbeMs    *float64 `json:"probe_ms,omitempty"`
	UnloadedMs *float64 `json:"unloaded_ms,omitempty"`
	MaxProbeMs *float64 `json:"max_probe_ms,omitempty"`
	// Probes are the exchanges sent while cooling down: not part of any
	// run's figures, but the server counted them.
	Probes int `json:"probes"`
}
