package k6import

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/replay"
)

func fixturePath(t *testing.T, name string) string {
	t.Helper()
	dir, _ := os.Getwd()
	for ; dir != "/"; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
	}
	p := filepath.Join(dir, "testdata", "k6", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return p
}

func copyFile(t *testing.T, src, dst string, extra string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	_, _ = out.WriteString(extra)
	out.Close()
}

func TestImportRealK6Results(t *testing.T) {
	src := t.TempDir()
	run := filepath.Join(src, "run-500")
	_ = os.Mkdir(run, 0o755)
	// The NDJSON fixture is the first 2000 lines of the run whose log is the
	// pod-quiet fixture: the summary must disagree with the points.
	copyFile(t, fixturePath(t, "gen-k6v2.2.0-out.ndjson"), filepath.Join(run, "agent-0.ndjson"), "{broken line\n")
	copyFile(t, fixturePath(t, "gen-k6v2.2.0-pod-quiet.log"), filepath.Join(run, "agent-0.log"), "")
	csv := filepath.Join(src, "monitor.csv")
	_ = os.WriteFile(csv, []byte("timestamp,kind,name,cpu,memory\n"+
		"2026-11-30T14:36:02Z,pod,pf-engine-0,1250m,1500Mi\n2026-11-30T14:36:03Z,pod,pf-engine-0,1.3,1500Mi\n"+
		"2026-11-30T14:36:03Z,node,ip-10-0-0-1,2100m,9Gi\nnot,a,line\n"), 0o644)
	res, err := Import(Options{Dir: src, Out: t.TempDir(), Resources: csv, Thresholds: stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}, Tool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var ws []string
	for _, w := range res.Warnings {
		ws = append(ws, w.String())
	}
	all := strings.Join(ws, "\n")
	for _, want := range []string{
		"incomplete evidence: agent-0.ndjson: the k6 summary counts 215 requests, the points hold 117",
		"1 malformed line(s) skipped",
		"monitor.csv: 1 malformed line(s) skipped",
		"inferred",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if len(res.Summary.Stages) != 1 || len(res.Summary.Stages[0].Runs) != 1 {
		t.Fatalf("summary %+v", res.Summary)
	}
	r := res.Summary.Stages[0].Runs[0]
	if r.Requests+r.WarmupRequests != 117 {
		t.Errorf("requests %d + warmup %d, want 117 points", r.Requests, r.WarmupRequests)
	}
	if r.Errors["http_error:503"] == 0 && len(r.Errors) == 0 {
		t.Errorf("no errors read from the points: %+v", r.Errors)
	}
	if r.EngineCPU == nil && r.MeasuredEnd.After(r.MeasuredStart) {
		t.Log("no engine samples inside the measured window (the CSV covers 2 s)")
	}
	// The folder works with replay and recomputes to the same figures.
	f, err := evidence.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replay.Load(res.Dir); err != nil {
		t.Fatal(err)
	}
	again, err := f.Recompute(stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99})
	if err != nil {
		t.Fatal(err)
	}
	if again.Stages[0].Runs[0].LatencyMs != r.LatencyMs {
		t.Errorf("recomputed %+v vs %+v", again.Stages[0].Runs[0].LatencyMs, r.LatencyMs)
	}
}

func TestImportRefusesNothingUsable(t *testing.T) {
	d := t.TempDir()
	_ = os.WriteFile(filepath.Join(d, "a.ndjson"), []byte("garbage\n{\"type\":\"Point\"}\n"), 0o644)
	if _, err := Import(Options{Dir: d, Out: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "nothing usable") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Import(Options{Dir: t.TempDir(), Out: t.TempDir()}); err == nil {
		t.Fatal("imported an empty folder")
	}
}

func TestMonitorQuantities(t *testing.T) {
	cases := []struct {
		cpu  string
		want float64
	}{{"250m", 250}, {"1.5", 1500}, {"2500000n", 2.5}, {"800u", 0.8}}
	for _, c := range cases {
		if got, err := parseCPU(c.cpu); err != nil || got != c.want {
			t.Errorf("parseCPU(%q) = %v %v", c.cpu, got, err)
		}
	}
	for in, want := range map[string]int64{"64Mi": 64 << 20, "1Gi": 1 << 30, "500K": 500000, "123": 123} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %v %v", in, got, err)
		}
	}
}

func FuzzReadMonitorCSV(f *testing.F) {
	f.Add("timestamp,kind,name,cpu,memory\n2026-11-30T14:36:02Z,pod,pf-engine-0,1250m,1500Mi\n")
	f.Add("1796049361.5,node,n,2,9Gi\n,,,,\n")
	f.Fuzz(func(t *testing.T, s string) {
		out, bad, err := ReadMonitorCSV(strings.NewReader(s))
		if err == nil && len(out) == 0 && bad > 0 {
			t.Fatal("only bad lines but no error")
		}
	})
}
