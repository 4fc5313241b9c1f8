package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/collector/report"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/k6import"
	"github.com/tokex-dev/tokex/tui/headless"
)

func newImportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Turn results of other tools into a tokex evidence folder",
	}
	o := k6import.Options{}
	var p95 float64
	k := &cobra.Command{
		Use:   "k6 DIR",
		Short: "Import k6 results: per-agent --out json files, logs with summaries, a resource CSV",
		Long: `Read a folder of k6 results and write a tokex evidence folder, so report,
replay and compare work on it. DIR holds one run's files, or one sub-folder per
run: per-agent --out json NDJSON (*.json, *.ndjson, plain or .gz), per-agent k6
logs or summaries (*.log, *.txt: legacy, v1 and v2 formats; --summary-export
*.json). Points tagged with --warmup-tag (or from a scenario named *warmup*)
are the warmup. A summary whose counts disagree with the points is reported as
incomplete evidence with both figures; malformed lines are counted, never fatal
unless nothing usable remains. k6 records no scheduled time: imported rows
start at the response time minus the duration, with no send lag.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// NaN-proof: every comparison with NaN is false.
			if !(o.Rate == 0 || o.Rate >= config.MinRate && o.Rate <= config.MaxRate) {
				return fmt.Errorf("--rate must be 0 (inferred) or between %g and %d", config.MinRate, config.MaxRate)
			}
			if !(p95 > 0 && p95 <= config.MaxP95Ms) {
				return fmt.Errorf("--p95-ms must be positive and at most %d", config.MaxP95Ms)
			}
			o.Dir, o.Tool = args[0], Version
			o.Thresholds = stats.Thresholds{P95Ms: p95, SuccessRatio: 0.99}
			res, err := k6import.Import(o)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, w := range res.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			file, err := report.Write(res.Dir, "")
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "tokex: report:", err)
			}
			fmt.Fprint(out, headless.Report(res.Summary, file))
			fmt.Fprintf(out, "\nevidence: %s\n", res.Dir)
			return nil
		},
	}
	f := k.Flags()
	f.StringVarP(&o.Out, "out", "o", "tokex-evidence", "evidence parent folder")
	f.StringVar(&o.Name, "name", "", "campaign name (default k6-import)")
	f.StringVar(&o.WarmupTag, "warmup-tag", "phase=warmup", "tag key=value marking warmup points")
	f.StringVar(&o.Resources, "resources", "", "resource CSV: timestamp,kind,name,cpu,memory")
	f.Float64Var(&o.Rate, "rate", 0, "target exchanges/s of the run(s) (default: inferred)")
	f.Float64Var(&p95, "p95-ms", 500, "p95 threshold for the verdict")
	cmd.AddCommand(k)
	return cmd
}
