package evidence

import (
	"fmt"
	"time"
)

// EngineProcess is the engine process a campaign sampled from a start or
// a resume on (target.pid and its kin): which process, and how tokex found
// it. A resumed campaign's server may have restarted under another PID;
// this history says which figures came from which process.
type EngineProcess struct {
	PID int `json:"pid"`
	// StartTicks is the process's start time (clock ticks after boot): a
	// later process reusing the PID has another.
	StartTicks uint64 `json:"start_ticks,omitempty"`
	Comm       string `json:"comm,omitempty"`
	// Found says how: "target.pid", "target.pid_file PATH", "--pid",
	// "--pid listen: the process listening on port N".
	Found string    `json:"found"`
	At    time.Time `json:"at"`
}

// String is "1234 (dex), found by target.pid".
func (p EngineProcess) String() string {
	s := fmt.Sprint(p.PID)
	if p.Comm != "" {
		s += " (" + p.Comm + ")"
	}
	return s + ", found by " + p.Found
}

// MaxEngineProcesses bounds the history kept in the manifest.
const MaxEngineProcesses = 64

// AddEngineProcess records the engine process sampled from now on.
func (w *Writer) AddEngineProcess(p EngineProcess) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.man.EngineProcesses = append(w.man.EngineProcesses, p)
	if n := len(w.man.EngineProcesses); n > MaxEngineProcesses {
		w.man.EngineProcesses = w.man.EngineProcesses[n-MaxEngineProcesses:]
	}
	return w.saveManifestLocked()
}

// LastEngineProcess is the engine process the campaign sampled last (nil:
// none recorded).
func (m *Manifest) LastEngineProcess() *EngineProcess {
	if n := len(m.EngineProcesses); n > 0 {
		p := m.EngineProcesses[n-1]
		return &p
	}
	return nil
}
