package stats

import "github.com/tokex-dev/tokex/collector/sample"

// promqlCPU is the record as an engine CPU figure: the members' rates summed,
// × the window ÷ exchanges for CPU-ms per exchange (method rate, source
// promql), and the members' average memory summed.
func promqlCPU(p *sample.PromQL, m RunMeta, exchanges int64) (*CPU, int64) {
	c := &CPU{Method: "rate", Source: sample.SourcePromQL, Exchanges: exchanges}
	var mem int64
	for _, mb := range p.Members {
		c.AvgCores += mb.Cores
		c.Samples += mb.Samples
		mem += mb.MemoryBytes
	}
	c.PeakCores = Round3(max(p.PeakCores, c.AvgCores))
	seconds := m.MeasuredEnd.Sub(m.MeasuredStart).Seconds()
	if exchanges > 0 {
		c.CPUMsPerExchange = Round3(c.AvgCores * 1000 * seconds / float64(exchanges))
	}
	c.AvgCores = Round3(c.AvgCores)
	return c, mem
}

// engineFigure picks the run's engine CPU: PromQL's when the run has a
// valid record, with what the samplers measured of the same window kept
// beside it (EngineCPUSampled); else the samples' alone.
func (r *Run) engineFigure(m RunMeta, sampled *CPU, sampledMem, exchanges int64) {
	r.EngineCPU, r.EngineMemoryBytes = sampled, sampledMem
	if m.PromQL == nil {
		return
	}
	r.PromQL = m.PromQL
	if !m.PromQL.Valid() {
		if len(m.PromQL.Members) > 0 { // a record with impossible values: hostile or broken
			r.Warnings = append(r.Warnings, Warn(WarnPromQLNoData, m.ID, "the recorded PromQL result holds impossible values: not used"))
		}
		return
	}
	r.EngineCPU, r.EngineMemoryBytes = promqlCPU(m.PromQL, m, exchanges)
	if m.PromQL.Query("memory") == "" || !hasMemory(m.PromQL) {
		r.EngineMemoryBytes = sampledMem
	}
	r.EngineCPUSampled = sampled
}

func hasMemory(p *sample.PromQL) bool {
	for _, m := range p.Members {
		if m.MemoryBytes > 0 {
			return true
		}
	}
	return false
}
