package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/collector/report"
	"github.com/tokex-dev/tokex/internal/termsafe"
)

func newReportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Write the self-contained HTML dashboard of an evidence folder",
		Long: `Render an evidence folder as one HTML file that needs no network: the verdict
and why, headline tiles, the article's tables and the cost curve, the warnings
that change what the numbers mean (one line per code, each run's folded), then
per-run charts of throughput, latency, engine CPU and memory and generator CPU
on one shared time axis and per-agent details. tokex run writes
DIR/report.html at the end of every campaign.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file, err := report.Write(args[0], out)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "wrote", termsafe.Text(file)) // a folder's name may be anyone's
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "output file (default DIR/report.html)")
	cmd.Flags().StringVar(&out, "output", "", "output file (default DIR/report.html)")
	_ = cmd.Flags().MarkDeprecated("output", "use --out (-o)")
	return cmd
}
