package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/tui/headless"
)

// TestLastScreenOneLinePerCode: the terminal's final output of the golden
// campaign run on a busy machine (every run host_saturated and
// generator_late, both stages failed), as `tokex run` prints it and as
// `tokex replay --no-tui` ends, opens with the answer and says each warning
// code on exactly one line, before the tables; every run's details are in
// summary.md (issue 27: on main the terminal printed ten warning lines
// after the tables, one per run and code, and no verdict first).
func TestLastScreenOneLinePerCode(t *testing.T) {
	dir := filepath.Join("../../../testdata/campaigns", "run-busy")
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Summary()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	codes := map[stats.WarningCode]int{}
	for _, w := range s.Warnings {
		codes[w.Code]++
	}
	for _, st := range s.Stages {
		for _, r := range st.Runs {
			for _, w := range r.Warnings {
				codes[w.Code]++
			}
		}
	}
	if len(codes) < 3 || codes[stats.WarnHostSaturated] < 4 {
		t.Fatalf("the golden was meant to be busy: warnings %v", codes)
	}
	code, replay, errs := run(t, "replay", "--no-tui", "--speed", "0", dir)
	if code != ExitOK {
		t.Fatalf("replay: exit %d\n%s", code, errs)
	}
	_, replayEnd, ok := strings.Cut(replay, "\n\nFAILED — ")
	if !ok {
		t.Fatalf("replay's final output has no verdict:\n%s", replay)
	}
	for medium, out := range map[string]string{
		"tokex run's last screen":  headless.Report(s, "DIR/report.html"),
		"tokex replay's last part": "FAILED — " + replayEnd,
	} {
		lines := strings.Split(out, "\n")
		if !strings.HasPrefix(lines[0], "FAILED — the figures are this machine's, not the server's: ") {
			t.Errorf("%s does not open with the verdict: %q", medium, lines[0])
		}
		tables := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Latency by stage") })
		warnings := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Warnings") })
		if tables < 0 || warnings < 0 || warnings > tables {
			t.Fatalf("%s: warnings at line %d, the tables at line %d:\n%s", medium, warnings, tables, out)
		}
		// The answer: at most five lines before the warnings.
		if answer := slices.Index(lines[:warnings], ""); answer < 0 || answer > 5 {
			t.Errorf("%s: the answer takes %d lines:\n%s", medium, answer, strings.Join(lines[:warnings], "\n"))
		}
		for c := range codes {
			var where []int
			for i, l := range lines {
				if strings.Contains(l, string(c)) {
					where = append(where, i)
				}
			}
			if len(where) != 1 || where[0] < warnings || where[0] > tables {
				t.Errorf("%s: %s on lines %v, want one line between the warnings' heading (%d) and the tables (%d)", medium, c, where, warnings, tables)
			}
		}
		// Nothing but the grouped lines between the heading and the tables.
		if n := tables - warnings - 2; n != len(codes) {
			t.Errorf("%s: %d lines under Warnings for %d codes:\n%s", medium, n, len(codes), strings.Join(lines[warnings:tables], "\n"))
		}
	}
}
