package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tokex-dev/tokex/collector/event"
)

// The kubelet rotates a container's log file once it passes
// containerLogMaxSize (default 10 MiB), and the API server serves only the
// current file: a follow that falls behind a rotation, or stops at it
// (kubernetes/kubernetes #115701), loses the lines of the rotated file.
// tokex states each run's budget — one agent's log bytes against the
// smallest rotation size of the agents' nodes — before the lines come.
const defaultContainerLogMaxSize int64 = 10 << 20

// criPrefix is what the container runtime writes before every line in the
// log file the kubelet rotates (CRI format: timestamp, stream, tag).
const criPrefix = "2006-01-02T15:04:05.000000000Z stdout F "

// agentLogEstimate is one agent's log in a run: its request lines and the
// bytes of one line in the node's log file, for a successful request at the
// run's widest agent index and slot (error lines are longer). The summary,
// a few KiB, is left out.
func agentLogEstimate(p event.PlannedRun, agents int) (lines, lineBytes int64) {
	perAgent := p.TargetRPS / float64(agents)
	lines = int64(perAgent*(p.Warmup+p.Duration).Seconds()) + 2
	slot := int64(perAgent * max(p.Warmup, p.Duration).Seconds())
	// As the agent script prints it: agent, phase, slot, scheduled µs, send
	// lag, duration, status, outcome, detail, start lag, mint (µs).
	l := fmt.Sprintf("tokex2,%d,measured,%d,1796064356036000,4800,12500,200,ok,,1500,3300\n", agents-1, slot)
	return lines, int64(len(criPrefix) + len(l))
}

// nodeLogLimits caches each node's containerLogMaxSize for a campaign.
type nodeLogLimits struct {
	mu  sync.Mutex
	max map[string]int64 // node → bytes; 0: not visible (the default applies)
}

// limit is the smallest rotation size of the nodes seen so far, and whether
// any node's configuration was read (else it is the kubelet's default).
func (n *nodeLogLimits) limit() (int64, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	lim, read := int64(0), false
	for _, b := range n.max {
		if b <= 0 {
			b = defaultContainerLogMaxSize
		} else {
			read = true
		}
		if lim == 0 || b < lim {
			lim = b
		}
	}
	if lim == 0 {
		lim = defaultContainerLogMaxSize
	}
	return lim, read
}

// note reads a node's rotation size the first time the node is seen.
func (n *nodeLogLimits) note(ctx context.Context, c kubernetes.Interface, node string) {
	if node == "" {
		return
	}
	n.mu.Lock()
	_, seen := n.max[node]
	if !seen {
		if n.max == nil {
			n.max = map[string]int64{}
		}
		n.max[node] = 0
	}
	n.mu.Unlock()
	if seen {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	b, err := containerLogMaxSize(ctx, c, node)
	if err != nil {
		return // not visible (no nodes/proxy, a proxy refusing the node): the default
	}
	n.mu.Lock()
	n.max[node] = b
	n.mu.Unlock()
}

// containerLogMaxSize reads a node's kubelet configuration through the
// API server's nodes proxy (/configz) and returns its containerLogMaxSize.
func containerLogMaxSize(ctx context.Context, c kubernetes.Interface, node string) (int64, error) {
	rc := c.CoreV1().RESTClient()
	if p, ok := rc.(*rest.RESTClient); ok && p == nil {
		return 0, fmt.Errorf("no REST client") // a fake clientset
	}
	raw, err := rc.Get().AbsPath("/api/v1/nodes/" + node + "/proxy/configz").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	return parseConfigz(raw)
}

// parseConfigz reads containerLogMaxSize from a kubelet's /configz answer;
// a configuration without it has the default.
func parseConfigz(raw []byte) (int64, error) {
	var cz struct {
		KubeletConfig *struct {
			ContainerLogMaxSize string `json:"containerLogMaxSize"`
		} `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(raw, &cz); err != nil {
		return 0, fmt.Errorf("kubelet configz: %w", err)
	}
	if cz.KubeletConfig == nil {
		return 0, fmt.Errorf("kubelet configz: no kubeletconfig")
	}
	s := strings.TrimSpace(cz.KubeletConfig.ContainerLogMaxSize)
	if s == "" {
		return defaultContainerLogMaxSize, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Value() <= 0 {
		return 0, fmt.Errorf("kubelet configz: containerLogMaxSize %q", s)
	}
	return q.Value(), nil
}

// logBudget says, once per run, how much log each agent writes against the
// nodes' rotation size, and warns when a rotation will come mid-run.
func (r *kubeRun) logBudget() {
	lines, per := agentLogEstimate(r.p, r.d.Cfg.Agents.Count)
	limit, read := r.d.logLimits.limit()
	src := "the kubelet default; the nodes' configuration is not visible"
	if read {
		src = "the smallest containerLogMaxSize of the agents' nodes"
	}
	total := lines * per
	msg := fmt.Sprintf("log budget: each agent writes about %s of log this run (%s lines × %d bytes); the kubelet rotates at %s (%s)",
		mib(total), strconv.FormatInt(lines, 10), per, mib(limit), src)
	if r.file {
		r.d.log(r.out, "info", msg+"; the agents keep their output gzipped in their Pods, and tokex copies from it the lines the log stream loses")
		return
	}
	if total <= limit {
		r.d.log(r.out, "info", msg)
		return
	}
	need := (int64(r.d.Cfg.Agents.Count)*total + limit - 1) / limit
	r.d.log(r.out, "warn", msg+fmt.Sprintf(": the log rotates mid-run, and lines not yet read at a rotation are lost or the follow stops "+
		"(kubernetes #115701; incomplete evidence is flagged); use %d or more agents, or raise containerLogMaxSize", need))
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
