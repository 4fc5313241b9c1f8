package tui

import (
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tokex-dev/tokex/collector/event"
)

// Program runs a dashboard and feeds it the event stream without ever
// blocking the emitter (the campaign must not wait for the screen).
type Program struct {
	Model *Model
	p     *tea.Program

	mu     sync.Mutex
	queue  []event.Event
	wake   chan struct{}
	closed bool
}

// frame is the least time between two batches of events: at most 20
// updates (and frames) a second however fast the stream.
const frame = 50 * time.Millisecond

// NewProgram prepares a full-screen program for m, with the mouse.
func NewProgram(m *Model, opts ...tea.ProgramOption) *Program {
	opts = append([]tea.ProgramOption{tea.WithAltScreen(), tea.WithMouseCellMotion()}, opts...)
	return &Program{Model: m, p: tea.NewProgram(m, opts...), wake: make(chan struct{}, 1)}
}

// Consume is the event-bus consumer: it queues and returns at once.
func (p *Program) Consume(e event.Event) {
	p.mu.Lock()
	if !p.closed {
		p.queue = append(p.queue, e)
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run shows the dashboard until the user quits.
func (p *Program) Run() error {
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-p.wake:
			}
			p.mu.Lock()
			batch := p.queue
			p.queue = nil
			p.mu.Unlock()
			p.p.Send(eventsMsg(batch))
			select { // let the next events gather
			case <-done:
				return
			case <-time.After(frame):
			}
		}
	}()
	_, err := p.p.Run()
	p.mu.Lock()
	p.closed, p.queue = true, nil
	p.mu.Unlock()
	close(done)
	return err
}
