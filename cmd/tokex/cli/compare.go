package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/collector/compare"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/report"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/internal/termsafe"
)

func newCompareCmd() *cobra.Command {
	var asJSON, asMD bool
	var htmlOut string
	cmd := &cobra.Command{
		Use:   "compare DIR_A DIR_B",
		Short: "Compare two campaigns stage by stage, judging differences against round-to-round noise",
		Long: `Set the reported runs of two evidence folders side by side per stage: p50, p95,
p99 and CPU-ms per exchange, B − A, and a verdict. A difference no larger than
the spread between the rounds of that stage (in A or B) is "within noise".
Then the marginal costs (engine cores fitted against rate) and their
difference with its 95 % interval, and the capacities when searched.
--html FILE also writes the two cost curves overlaid.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var sums [2]*stats.Summary
			for i, dir := range args {
				f, err := evidence.Open(dir)
				if err != nil {
					return &exitError{code: ExitCannotRun, err: err}
				}
				s, err := f.Summary()
				f.Close()
				if err != nil {
					return &exitError{code: ExitCannotRun, err: fmt.Errorf("%s: no summary.json (unfinished campaign?): %w", dir, err)}
				}
				sums[i] = s
			}
			r := compare.Compare(sums[0], sums[1])
			if htmlOut != "" {
				if err := writeCompareHTML(htmlOut, sums[0], sums[1], r); err != nil {
					return &exitError{code: ExitCannotRun, err: err}
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
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&asMD, "markdown", false, "print a Markdown table")
	cmd.MarkFlagsMutuallyExclusive("json", "markdown")
	cmd.Flags().StringVar(&htmlOut, "html", "", "also write an HTML page with the two cost curves overlaid")
	return cmd
}

func writeCompareHTML(path string, a, b *stats.Summary, r *compare.Result) error {
	page, err := report.Compare(a, b, r)
	if err != nil {
		return err
	}
	return os.WriteFile(path, page, 0o644)
}
