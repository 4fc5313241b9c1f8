package kube

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tokex-dev/tokex/subject"
)

// Agent Pod sizing: what each k6 agent requests unless kube.resources sets
// it. Measured with real k6 v2.2.0 running tokex's script (issue 10): each
// request costs 3.6–5 ms of CPU with RS256, 3.3 ms of it minting the subject
// token; ES256 mints about ten times cheaper, so its requests cost about
// 5 − 3.3 + 0.33 ≈ 2 ms. A k6 process with 200 pre-allocated VUs (the
// script's 100 per scenario, warmup and measured) used 105–139 MB. Requests
// take the upper ends:
//
//	CPU    = 100m + per-agent rate × CPU-ms per request (RS256 5 ms, ES256 2 ms)
//	memory = 64 MiB + pre-allocated VUs × 0.4 MiB
//
// so the article's 50/s per agent requests 350m and, with 2 × 100 VUs, 144 MiB.
// No limit is set: a CPU limit throttles k6 (a starved agent shows as
// generator_starved), a memory limit turns growth into OOMKilled.
const (
	agentBaseMilliCPU = 100
	agentBaseMemMiB   = 64
	agentMemPerVUMiB  = 0.4
)

// agentCPUMsPerRequest is k6's CPU per request by signing algorithm.
var agentCPUMsPerRequest = map[string]float64{subject.RS256: 5, subject.ES256: 2}

// AgentRequests is what one agent Pod requests at perAgentRPS with vus
// pre-allocated VUs, and how the figures were reached.
func AgentRequests(perAgentRPS float64, alg string, vus int) (cpuMilli, memMiB int64, why string) {
	ms, ok := agentCPUMsPerRequest[alg]
	if !ok {
		ms = agentCPUMsPerRequest[subject.RS256]
	}
	cpuMilli = agentBaseMilliCPU + int64(math.Ceil(perAgentRPS*ms))
	memMiB = agentBaseMemMiB + int64(math.Ceil(float64(vus)*agentMemPerVUMiB))
	why = fmt.Sprintf("%dm + %g/s × %g ms (%s); %d Mi + %d VUs × %g Mi", agentBaseMilliCPU, perAgentRPS, ms, alg, agentBaseMemMiB, vus, agentMemPerVUMiB)
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
