package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/tui/headless"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt: only on the code the goldens describe")

// TestGoldenTerminal: what the terminal gets from every golden campaign
// (../../../testdata/campaigns) is byte for byte what the code that wrote
// testdata/ printed: `tokex replay --no-tui --speed 0` (the progress
// lines, then the final tables; campaigns with events), and the end of `tokex run` (the final
// tables, then the capacity, probes and cost).
func TestGoldenTerminal(t *testing.T) {
	dirs, err := filepath.Glob("../../../testdata/campaigns/*/" + evidence.ManifestFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 8 {
		t.Fatalf("%d golden campaigns", len(dirs))
	}
	for _, m := range dirs {
		dir := filepath.Dir(m)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, evidence.EventsFile)); err == nil {
				code, out, errs := run(t, "replay", "--no-tui", "--speed", "0", dir)
				if code != ExitOK {
					t.Fatalf("replay: exit %d\n%s", code, errs)
				}
				golden(t, "replay-"+name+".txt", out)
			}
			f, err := evidence.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			s, err := f.Summary()
			if err != nil {
				return // a campaign that did not finish: replay shows how far it got
			}
			golden(t, "final-"+name+".txt", headless.Report(s, "DIR/report.html"))
		})
	}
}

// golden compares got with testdata/name (written first with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs at %s", name, firstDiff(got, string(want)))
	}
}

// firstDiff says where got and want part: the first differing line of each.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		if i >= len(g) || i >= len(w) || g[i] != w[i] {
			line := func(l []string) string {
				if i < len(l) {
					return l[i]
				}
				return "(end)"
			}
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, line(g), line(w))
		}
	}
	return "same lines, different bytes"
}
