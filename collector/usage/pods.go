package usage

import "math"

// PodCPU is one engine Pod's (or process's) CPU over a run's measured window.
type PodCPU struct {
	Name  string  `json:"name"`
	Cores float64 `json:"cores"`
}

// Pods is each member's cores over the window of secs seconds (its
// cumulative counter where it has one read around both ends, else its
// average sampled rate) and their balance, max ÷ mean (1: even); nil with
// fewer than two members.
func (g *Group) Pods(secs float64) ([]PodCPU, float64) {
	ms := g.Members()
	if secs <= 0 || len(ms) < 2 {
		return nil, 0
	}
	var pods []PodCPU
	for _, e := range ms {
		switch {
		case e.Cumulative:
			pods = append(pods, PodCPU{Name: e.Name, Cores: math.Round(e.CPUSeconds/secs*10000) / 10000})
		case e.Seconds > 0:
			pods = append(pods, PodCPU{Name: e.Name, Cores: math.Round(e.AvgMillicores/1000*10000) / 10000})
		}
	}
	return pods, balance(pods)
}

// balance is max ÷ mean of the members' cores (0: unknown), to three
// decimals as stats rounds.
func balance(pods []PodCPU) float64 {
	var sum, top float64
	for _, p := range pods {
		sum += p.Cores
		top = max(top, p.Cores)
	}
	if len(pods) < 2 || sum <= 0 {
		return 0
	}
	return math.Floor(top/(sum/float64(len(pods)))*1000+0.5) / 1000
}
