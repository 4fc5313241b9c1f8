package report

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/doc"
	"github.com/tokex-dev/tokex/collector/evidence"
)

// goldenCampaigns are the evidence folders of testdata/campaigns (see its
// SOURCES.md): real campaigns and two synthetic ones, with the report.html
// and summary.md tokex wrote for them.
func goldenCampaigns(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("../../testdata/campaigns/*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	if len(out) < 8 {
		t.Fatalf("%d golden campaigns in ../../testdata/campaigns", len(out))
	}
	return out
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

var update = flag.Bool("update", false, "rewrite report.html and summary.md of ../../testdata/campaigns: only when what the document says changes on purpose")

// TestGoldenCampaigns: the report and summary.md of every golden campaign
// render byte for byte as the code that wrote them rendered them (or, with
// -update, as the code now renders them: review the diff).
func TestGoldenCampaigns(t *testing.T) {
	t.Parallel()
	for _, dir := range goldenCampaigns(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join(dir, "report.html"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Build(dir)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				want = got
				write(t, filepath.Join(dir, "report.html"), got)
			}
			if string(got) != string(want) {
				t.Errorf("report.html differs at %s", firstDiff(string(got), string(want)))
			}
			mdPath := filepath.Join(dir, evidence.SummaryMD)
			md, err := os.ReadFile(mdPath)
			if errors.Is(err, fs.ErrNotExist) {
				return // a campaign that did not finish has none
			}
			if err != nil {
				t.Fatal(err)
			}
			f, err := evidence.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			s, err := f.Summary()
			if err != nil {
				t.Fatal(err)
			}
			got = []byte(doc.Campaign(s, nil).Markdown())
			if *update {
				md = got
				write(t, mdPath, got)
			}
			if string(got) != string(md) {
				t.Errorf("summary.md differs at %s", firstDiff(string(got), string(md)))
			}
		})
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
