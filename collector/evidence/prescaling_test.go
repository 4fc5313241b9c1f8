package evidence

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvidenceBeforeScalingReads (issue 28): a folder written before runs
// carried an engine count reads as it did: one size, no scaling section,
// the same stages recomputed, and nothing new in its summary.json.
func TestEvidenceBeforeScalingReads(t *testing.T) {
	f, err := Open(filepath.Join("testdata", "pre-scaling", "20261202-011157.666-quick"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Manifest.Scaling) != 0 || len(f.Manifest.Runs) != 3 {
		t.Fatalf("manifest: %d scales, %d runs", len(f.Manifest.Scaling), len(f.Manifest.Runs))
	}
	s, err := f.Summary()
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.Recompute(s.Thresholds)
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range []*struct {
		name string
		v    any
	}{{"summary.json", s}, {"recomputed", again}} {
		b, _ := json.Marshal(sum.v)
		if strings.Contains(string(b), `"replicas"`) || strings.Contains(string(b), `"scaling"`) {
			t.Errorf("%s gained an engine count", sum.name)
		}
	}
	if s.Scaling != nil || again.Scaling != nil || len(again.Stages) != 2 || len(s.Stages) != 2 {
		t.Fatalf("stages %d / %d, scaling %v / %v", len(s.Stages), len(again.Stages), s.Scaling, again.Scaling)
	}
	for i, st := range again.Stages {
		if st.Replicas != 0 || st.Label() != s.Stages[i].Label() || st.Reported().Requests != s.Stages[i].Reported().Requests {
			t.Errorf("stage %s: replicas %d, %d requests, summary.json %d", st.Label(), st.Replicas, st.Reported().Requests, s.Stages[i].Reported().Requests)
		}
	}
}
