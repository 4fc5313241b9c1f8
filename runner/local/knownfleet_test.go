package local

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tokex-dev/tokex/internal/knowncost"
)

// knownFleet is a Fleet of knowncost servers sharing one port
// (SO_REUSEPORT), each burning cost per request on GOMAXPROCS 1: the
// truth for the scaling efficiency, since n of them serve n times one when
// each has its own core.
type knownFleet struct {
	exe  string
	cost time.Duration
	mu   sync.Mutex
	ps   []*knowncost.Process
	port int
	url  string
	died chan struct{}
	once sync.Once
	gone map[*knowncost.Process]bool
}

var _ Fleet = (*knownFleet)(nil)

// startKnownFleet starts the first server (this test binary re-executed:
// TestMain calls knowncost.RunIfServer).
func startKnownFleet(ctx context.Context, cost time.Duration) (*knownFleet, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	f := &knownFleet{exe: exe, cost: cost, died: make(chan struct{}), gone: map[*knowncost.Process]bool{}}
	p, err := knowncost.Start(ctx, exe, knowncost.Options{Cost: cost, Procs: 1, ReusePort: true})
	if err != nil {
		return nil, err
	}
	f.url = p.URL
	if _, err := fmt.Sscanf(p.URL[strings.LastIndexByte(p.URL, ':')+1:], "%d", &f.port); err != nil {
		p.Close()
		return nil, err
	}
	f.add(p)
	return f, nil
}

func (f *knownFleet) add(p *knowncost.Process) {
	f.mu.Lock()
	f.ps = append(f.ps, p)
	f.mu.Unlock()
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

func (f *knownFleet) Scale(ctx context.Context, n int, cpus [][]int) error {
	f.mu.Lock()
	have := len(f.ps)
	first := f.ps[0]
	f.mu.Unlock()
	if err := pin(first.ServerPID, at(cpus, 0)); err != nil {
		return err
	}
	for i := have; i < n; i++ {
		var p *knowncost.Process
		err := withAffinity(at(cpus, i), func() error {
			var err error
			p, err = knowncost.Start(ctx, f.exe, knowncost.Options{Addr: fmt.Sprintf("127.0.0.1:%d", f.port), Cost: f.cost, Procs: 1, ReusePort: true})
			return err
		})
		if err != nil {
			return err
		}
		f.add(p)
	}
	f.mu.Lock()
	var stop []*knowncost.Process
	if n < len(f.ps) {
		stop, f.ps = f.ps[n:], f.ps[:n]
		for _, p := range stop {
			f.gone[p] = true
		}
	}
	f.mu.Unlock()
	for _, p := range stop {
		p.Close()
	}
	return nil
}

func (f *knownFleet) Engines() []FleetEngine {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []FleetEngine
	for i, p := range f.ps {
		out = append(out, FleetEngine{PID: p.ServerPID, Label: EngineLabel(i)})
	}
	return out
}

func (f *knownFleet) Died() <-chan struct{}  { return f.died }
func (f *knownFleet) TargetURL() string      { return f.url + "/token" }
func (f *knownFleet) ClientTLS() *tls.Config { return nil }
func (f *knownFleet) Describe() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprintf("%d knowncost server(s) of %s a request sharing port %d (SO_REUSEPORT)", len(f.ps), f.cost, f.port)
}

func (f *knownFleet) close() {
	f.mu.Lock()
	ps := f.ps
	f.ps = nil
	for _, p := range ps {
		f.gone[p] = true
	}
	f.mu.Unlock()
	for _, p := range ps {
		p.Close()
	}
}
