package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/collector/compare"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/junit"
	"github.com/tokex-dev/tokex/collector/report"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/internal/termsafe"
)

func newCompareCmd() *cobra.Command {
	var asJSON, asMD, gate bool
	var htmlOut, junitOut string
	cmd := &cobra.Command{
		Use:   "compare DIR_A DIR_B",
		Short: "Compare two campaigns stage by stage, judging differences against round-to-round noise",
		Long: `Set the reported runs of two evidence folders side by side per stage: p50, p95,
p99 and CPU-ms per exchange, B − A, and a verdict. A difference no larger than
the spread between the rounds of that stage (in A or B) is "within noise".
Then the marginal costs (engine cores fitted against rate) and their
difference with its 95 % interval, and the capacities when searched.
--html FILE also writes the two cost curves overlaid. DIR@N is engine count
N of a campaign over engine counts (--engines, --replicas): tokex compare
DIR@1 DIR@2 sets two counts of one campaign side by side.

--fail-on-regression makes it a CI gate: exit 1 when p95, p99 or CPU-ms per
exchange of a stage got worse beyond noise (higher in B by more than the
largest spread between rounds of the stage in A or B), naming the figure and
by how much; 0 otherwise (a figure with one round each cannot be judged and
is listed). --junit FILE writes a test case per compared figure per stage.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var sums [2]*summary.Summary
			for i, arg := range args {
				s, err := compareSummary(arg)
				if err != nil {
					return err
				}
				sums[i] = s
			}
			r := compare.Compare(sums[0], sums[1])
			if htmlOut != "" {
				if err := writeCompareHTML(htmlOut, sums[0], sums[1], r); err != nil {
					return err
				}
			}
			out := termsafe.Writer(cmd.OutOrStdout()) // campaign ids and names come from the folders
			switch {
			case asJSON:
				b, err := r.JSON()
				if err != nil {
					return err
				}
				fmt.Fprintln(out, string(b))
			case asMD:
				fmt.Fprint(out, r.Markdown())
			default:
				fmt.Fprint(out, r.Text())
			}
			if junitOut != "" {
				if err := writeJUnitFile(junitOut, junit.FromCompare(r, sums[1].Started)); err != nil {
					return fmt.Errorf("--junit: %w", err)
				}
			}
			if regressed := sayGate(termsafe.Writer(cmd.ErrOrStderr()), r); regressed && gate {
				return &exitError{code: ExitThresholds}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&asMD, "markdown", false, "print a Markdown table")
	cmd.MarkFlagsMutuallyExclusive("json", "markdown")
	cmd.Flags().StringVar(&htmlOut, "html", "", "also write an HTML page with the two cost curves overlaid")
	cmd.Flags().BoolVar(&gate, "fail-on-regression", false, "exit 1 when p95, p99 or CPU-ms per exchange got worse beyond noise (a CI gate)")
	cmd.Flags().StringVar(&junitOut, "junit", "", "write a JUnit XML file: a test case per compared figure per stage")
	return cmd
}

// sayGate prints the gate's findings: each regression with its figures, or
// that there is none; and what it could not judge. It reports a regression.
func sayGate(w io.Writer, r *compare.Result) bool {
	regs := r.Regressions()
	for _, f := range regs {
		fmt.Fprintln(w, "tokex: regression:", f.String())
	}
	if len(regs) == 0 {
		fmt.Fprintf(w, "tokex: no regression beyond noise in %s\n", strings.Join(compare.Gated, ", "))
	}
	if u := r.Unjudged(); len(u) > 0 {
		fmt.Fprintln(w, "tokex: not judged:", strings.Join(u, "; "))
	}
	return len(regs) > 0
}

func writeCompareHTML(path string, a, b *summary.Summary, r *compare.Result) error {
	page, err := report.Compare(a, b, r)
	if err != nil {
		return err
	}
	return os.WriteFile(path, page, 0o644)
}

// compareSummary reads the summary of DIR, or of DIR@N: engine count N of
// a campaign over engine counts (a folder whose name has an @ is itself).
func compareSummary(arg string) (*summary.Summary, error) {
	dir, n := arg, 0
	if i := strings.LastIndexByte(arg, '@'); i > 0 {
		if v, err := strconv.Atoi(arg[i+1:]); err == nil && v > 0 {
			if _, serr := os.Stat(arg); serr != nil {
				dir, n = arg[:i], v
			}
		}
	}
	f, err := evidence.Open(dir)
	if err != nil {
		return nil, err
	}
	s, err := f.Summary()
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: no summary.json (unfinished campaign?): %w", dir, err)
	}
	if n == 0 {
		return s, nil
	}
	one, ok := s.OfReplicas(n)
	if !ok {
		return nil, fmt.Errorf("%s: no run of %d engine(s) (%s)", dir, n, countsOf(s))
	}
	return one, nil
}

// countsOf names a summary's engine counts.
func countsOf(s *summary.Summary) string {
	if s.Scaling == nil {
		return "not a campaign over engine counts"
	}
	var c []string
	for _, p := range s.Scaling.Counts {
		c = append(c, strconv.Itoa(p.Replicas))
	}
	return "its counts: " + strings.Join(c, ", ")
}
