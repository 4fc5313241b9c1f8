package kube

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tokex-dev/tokex/internal/jose"
)

// Agent Pod sizing: what each k6 agent requests unless kube.resources sets
// it, from what real k6 v2.2.0 running tokex's script cost
// (testdata/k6-agent-cost.csv, with its sources): RS256 3.6–5 ms of CPU per
// request (3.3 ms minting), ES256 2.6 ms; 105–139 MB with 200 pre-allocated
// VUs at 50/s, 144 MiB at 200/s. Requests keep at least 15 % over the
// typical cost and cover the highest measured:
//
//	CPU    = 100m + per-agent rate × CPU-ms per request (RS256 5 ms, ES256 3 ms)
//	memory = 64 MiB + pre-allocated VUs × 0.4 MiB + per-agent rate × 0.1 MiB
//
// (memory grew 0.076 MiB per exchange/s from 50/s to 200/s), so the
// article's 50/s per agent requests 350m and, with 2 × 100 VUs, 149 MiB;
// 200/s ES256 requests 700m and 164 MiB. TestAgentSizingCoversMeasurements
// holds the figures to the file. No limit is set: a CPU limit throttles k6
// (a starved agent shows as generator_starved), a memory limit turns growth
// into OOMKilled.
const (
	agentBaseMilliCPU  = 100
	agentBaseMemMiB    = 64
	agentMemPerVUMiB   = 0.4
	agentMemPerRateMiB = 0.1
)

// agentCPUMsPerRequest is k6's CPU per request by signing algorithm.
var agentCPUMsPerRequest = map[string]float64{jose.RS256: 5, jose.ES256: 3}

// AgentRequests is what one agent Pod requests at perAgentRPS with vus
// pre-allocated VUs, and how the figures were reached.
func AgentRequests(perAgentRPS float64, alg string, vus int) (cpuMilli, memMiB int64, why string) {
	ms, ok := agentCPUMsPerRequest[alg]
	if !ok {
		ms = agentCPUMsPerRequest[jose.RS256]
	}
	cpuMilli = agentBaseMilliCPU + int64(math.Ceil(perAgentRPS*ms))
	memMiB = agentBaseMemMiB + int64(math.Ceil(float64(vus)*agentMemPerVUMiB+perAgentRPS*agentMemPerRateMiB))
	why = fmt.Sprintf("%dm + %g/s × %g ms (%s); %d Mi + %d VUs × %g Mi + %g/s × %g Mi", agentBaseMilliCPU, perAgentRPS, ms, alg,
		agentBaseMemMiB, vus, agentMemPerVUMiB, perAgentRPS, agentMemPerRateMiB)
	return cpuMilli, memMiB, why
}

// sizeAgent fills the CPU and memory requests kube.resources left unset.
func sizeAgent(r *corev1.ResourceRequirements, perAgentRPS float64, alg string, vus int) {
	cpu, mem, _ := AgentRequests(perAgentRPS, alg, vus)
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	if _, set := r.Requests[corev1.ResourceCPU]; !set {
		r.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(cpu, resource.DecimalSI)
	}
	if _, set := r.Requests[corev1.ResourceMemory]; !set {
		r.Requests[corev1.ResourceMemory] = *resource.NewQuantity(mem<<20, resource.BinarySI)
	}
}

// preallocatedVUs is how many VUs k6 pre-allocates for the script: its VU
// count per scenario, for the warmup and the measured scenario (they
// overlap by the warmup's graceful stop).
func preallocatedVUs(maxInFlight int, warmup bool) int {
	if warmup {
		return 2 * maxInFlight
	}
	return maxInFlight
}
