package doc

import (
	"fmt"
	"strings"

	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/units"
)

// ScaleLine is one engine count of a campaign over engine counts in
// words, for terminals, summary.md and the report.
func ScaleLine(p summary.ScalePoint, base int) string {
	var parts []string
	if c := p.Capacity; c != nil {
		parts = append(parts, "capacity "+c.Bracket())
	}
	if p.Efficiency != nil && p.Replicas != base {
		parts = append(parts, "scaling efficiency "+p.Efficiency.String())
	}
	if p.PerCore != nil {
		parts = append(parts, fmt.Sprintf("%s exchanges/s per engine core at %s", p.PerCore, units.StageLabel(p.At)))
	}
	if p.Marginal != nil {
		parts = append(parts, fmt.Sprintf("marginal %.3f CPU-ms/ex (95%% CI %.3f–%.3f)", p.Marginal.Value, p.Marginal.Range[0], p.Marginal.Range[1]))
	}
	var obs []string
	for _, st := range p.Stages {
		o := fmt.Sprintf("%s p95 %s", units.StageLabel(st.TargetRPS), ms(st.P95Ms))
		if st.CPUMs > 0 {
			o += fmt.Sprintf(" %.3f CPU-ms/ex", st.CPUMs)
		}
		obs = append(obs, o)
	}
	if len(obs) > 0 {
		parts = append(parts, strings.Join(obs, ", "))
	}
	if p.Balance > 0 {
		parts = append(parts, fmt.Sprintf("engine CPU balance %.2f (max ÷ mean)", p.Balance))
	}
	if p.Connections != nil {
		parts = append(parts, "connections "+p.Connections.Line())
	}
	return fmt.Sprintf("%d engine(s): %s", p.Replicas, strings.Join(parts, "; "))
}

// ScalingLines are a campaign's engine counts in words, then what bounded
// the measurement ("" lines: none).
func ScalingLines(sc *summary.Scaling) []string {
	if sc == nil {
		return nil
	}
	var out []string
	for _, p := range sc.Counts {
		out = append(out, ScaleLine(p, sc.Base))
	}
	if sc.Limit != "" {
		out = append(out, "limit: "+sc.Limit)
	}
	return out
}

// ScalingShort is the scaling in one line for a dashboard panel: each count's
// efficiency (with a search) or engine-core throughput against the base
// count's ("" without counts).
func ScalingShort(sc *summary.Scaling) string {
	if sc == nil {
		return ""
	}
	var parts []string
	for _, p := range sc.Counts {
		switch {
		case p.Replicas == sc.Base:
		case p.Efficiency != nil:
			parts = append(parts, fmt.Sprintf("%d: %s", p.Replicas, p.Efficiency))
		case p.PerCoreRatio > 0:
			parts = append(parts, fmt.Sprintf("%d: %.2f/core", p.Replicas, p.PerCoreRatio))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("scaling vs %d engine(s): ", sc.Base) + strings.Join(parts, " · ")
}
