package local

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/internal/jose"
)

// Fleet is a set of engine processes sharing one port that the local
// driver grows and shrinks for a campaign over engine counts (--engines):
// the embedded server's tokex-engine processes, or a test's server of
// known cost.
type Fleet interface {
	// Scale starts or stops engines (from the end) until n serve, engine
	// i pinned to cpus[i] when cpus has it (nil: unpinned).
	Scale(ctx context.Context, n int, cpus [][]int) error
	// Engines are the running engines, in order.
	Engines() []FleetEngine
	// Died is closed when an engine exited unasked.
	Died() <-chan struct{}
	// Describe says what the engines are ("2 tokex-engine processes …").
	Describe() string
	// TargetURL is the token endpoint; ClientTLS trusts it (nil: http).
	TargetURL() string
	ClientTLS() *tls.Config
}

// FleetEngine is one engine process.
type FleetEngine struct {
	PID   int
	Label string // its name in resources.csv: engine-0, engine-1, …
	CPUs  []int  // its CPU set; nil: unpinned
}

// EngineLabel names engine i of a fleet.
func EngineLabel(i int) string { return fmt.Sprintf("engine-%d", i) }

// embeddedFleet is the embedded server's engines: engine 0 is the one
// StartEmbedded started (with SO_REUSEPORT), the others join its port with
// the same configuration, keys and certificate.
type embeddedFleet struct {
	e    *Embedded
	cmd  serverCommand // engine 0's, with the joining config
	mu   sync.Mutex
	more []*serverProcess // engines 1…n-1
	cpus [][]int          // each engine's CPU set
	died chan struct{}
	once sync.Once
	gone map[*serverProcess]bool // stopped by a scale, not died
}

var _ Fleet = (*embeddedFleet)(nil)

func (f *embeddedFleet) TargetURL() string      { return f.e.URL }
func (f *embeddedFleet) ClientTLS() *tls.Config { return f.e.TLS }
func (f *embeddedFleet) Died() <-chan struct{}  { return f.died }

func (f *embeddedFleet) Describe() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprintf("local: %d tokex-engine process(es) sharing port %d (SO_REUSEPORT)", 1+len(f.more), f.e.port)
}

func (f *embeddedFleet) Engines() []FleetEngine {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []FleetEngine{{PID: f.e.PID, Label: EngineLabel(0), CPUs: at(f.cpus, 0)}}
	for i, p := range f.more {
		out = append(out, FleetEngine{PID: p.PID(), Label: EngineLabel(i + 1), CPUs: at(f.cpus, i+1)})
	}
	return out
}

func at(sets [][]int, i int) []int {
	if i < len(sets) {
		return sets[i]
	}
	return nil
}

// newEmbeddedFleet watches engine 0 and prepares the others' command: the
// same program and environment, a config on engine 0's port.
func newEmbeddedFleet(e *Embedded, cmd serverCommand) (*embeddedFleet, error) {
	f := &embeddedFleet{e: e, cmd: cmd, died: make(chan struct{}), gone: map[*serverProcess]bool{}}
	join := e.cfg
	join.Addr = fmt.Sprintf("127.0.0.1:%d", e.port)
	f.cmd.Config = filepath.Join(e.dir, "serve-join.yaml")
	if err := writeYAML(f.cmd.Config, join); err != nil {
		return nil, err
	}
	f.watch(e.proc)
	return f, nil
}

// watch closes died when p exits unless a scale stopped it.
func (f *embeddedFleet) watch(p *serverProcess) {
	go func() {
		<-p.Exited()
		f.mu.Lock()
		asked := f.gone[p]
		f.mu.Unlock()
		if !asked {
			f.once.Do(func() { close(f.died) })
		}
	}()
}

// Scale implements Fleet. Engine 0 is pinned where it runs; it is never
// stopped by a scale (a count is at least 1).
func (f *embeddedFleet) Scale(ctx context.Context, n int, cpus [][]int) error {
	if n < 1 {
		return errors.New("at least one engine")
	}
	f.mu.Lock()
	f.cpus = cpus
	more := len(f.more)
	f.mu.Unlock()
	if err := pin(f.e.PID, at(cpus, 0)); err != nil {
		return fmt.Errorf("engine 0: %w", err)
	}
	for i := more + 1; i < n; i++ {
		var p *serverProcess
		err := withAffinity(at(cpus, i), func() error {
			var err error
			p, err = startServer(ctx, f.cmd)
			return err
		})
		if err != nil {
			return fmt.Errorf("engine %d: %w", i, err)
		}
		f.mu.Lock()
		f.more = append(f.more, p)
		f.mu.Unlock()
		f.watch(p)
	}
	f.mu.Lock()
	var stop []*serverProcess
	if n-1 < len(f.more) {
		stop = f.more[n-1:]
		f.more = f.more[:n-1]
		for _, p := range stop {
			f.gone[p] = true
		}
	}
	f.mu.Unlock()
	for _, p := range stop {
		p.Stop(5 * time.Second)
	}
	return f.e.waitHealthy(ctx, f.e.proc.Ready.URL)
}

// close stops the engines beyond engine 0 (Embedded.Close stops it).
func (f *embeddedFleet) close() {
	f.mu.Lock()
	stop := f.more
	f.more = nil
	for _, p := range stop {
		f.gone[p] = true
	}
	f.mu.Unlock()
	for _, p := range stop {
		p.Stop(5 * time.Second)
	}
}

// signingKey writes one signing key every engine of a fleet signs with, so
// that a token verifies against the keys any of them serves.
func signingKey(dir, alg string) (string, error) {
	if alg == "" {
		alg = jose.RS256
	}
	k, err := jose.GenerateKey(alg)
	if err != nil {
		return "", err
	}
	pem, err := k.MarshalPEM()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "signing-key.pem")
	return path, os.WriteFile(path, pem, 0o600)
}
