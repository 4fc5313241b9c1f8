package headless

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/evidence"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt: only on the code the goldens describe")

// TestGoldenReports: the final tables of every golden campaign with a
// summary (../../testdata/campaigns) print byte for byte as the code that
// wrote testdata/NAME.txt printed them.
func TestGoldenReports(t *testing.T) {
	t.Parallel()
	sums, err := filepath.Glob("../../testdata/campaigns/*/" + evidence.SummaryJSON)
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range sums {
		dir := filepath.Dir(sum)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			f, err := evidence.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			s, err := f.Summary()
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", filepath.Base(dir)+".txt")
			got := Report(s, "")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("the final tables differ at %s", firstDiff(got, string(want)))
			}
		})
	}
	if len(sums) < 7 {
		t.Fatalf("%d golden campaigns with a summary", len(sums))
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
