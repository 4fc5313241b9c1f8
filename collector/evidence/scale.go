package evidence

import (
	"fmt"

	"github.com/tokex-dev/tokex/collector/summary"
)

// MaxScales bounds the scaling history kept in the manifest.
const MaxScales = 256

// AddScale records an engine count set (or restored).
func (w *Writer) AddScale(s summary.Scale) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(s.Engines) > 64 { // the manifest stays small whatever the count
		s.Notes = append(s.Notes, fmt.Sprintf("%d engines, the first 64 listed", len(s.Engines)))
		s.Engines, s.CPUs = s.Engines[:64], s.CPUs[:min(len(s.CPUs), 64)]
	}
	w.man.Scaling = append(w.man.Scaling, s)
	if n := len(w.man.Scaling); n > MaxScales {
		w.man.Scaling = w.man.Scaling[n-MaxScales:]
	}
	return w.saveManifestLocked()
}
