package cli

import (
	"fmt"
	"io"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/report"
	"github.com/tokex-dev/tokex/internal/termsafe"
	"github.com/tokex-dev/tokex/tui"
)

// defaultEvidence is where `tokex run` writes campaigns unless told.
const defaultEvidence = "tokex-evidence"

func newLsCmd() *cobra.Command {
	var noTUI bool
	var speed float64
	cmd := &cobra.Command{
		Use:   "ls [DIR]",
		Short: "List the campaigns under an evidence folder; pick one to replay",
		Long: `List the campaigns under DIR (default ./tokex-evidence), newest first: name, date,
status, stages, reported p95s and verdict. In a terminal, a list to filter (/):
Enter replays the campaign, o prints its report's path (writing the report if
there is none). Without a terminal, or with --no-tui, a table.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			parent := defaultEvidence
			if len(args) == 1 {
				parent = args[0]
			}
			out := cmd.OutOrStdout()
			if noTUI || !isTerminal(out) {
				return listTable(out, parent)
			}
			return pickAndReplay(cmd, parent, speed)
		},
	}
	cmd.Flags().BoolVar(&noTUI, "no-tui", false, "print a table instead of the list")
	cmd.Flags().Float64Var(&speed, "speed", 1, "playback speed of the campaign replayed from the list")
	return cmd
}

func listTable(out io.Writer, parent string) error {
	ls, skipped, err := evidence.List(parent)
	if err != nil {
		return err
	}
	if len(ls) == 0 {
		fmt.Fprintf(out, "no campaigns in %s\n", termsafe.Text(parent))
		return nil
	}
	fmt.Fprint(out, evidence.ListTable(ls).Text())
	if skipped > 0 {
		fmt.Fprintf(out, "(%d other entries of %s are not evidence folders)\n", skipped, termsafe.Text(parent))
	}
	return nil
}

// pickAndReplay shows the campaign picker; the campaign picked is replayed
// in the dashboard, or its report's path printed.
func pickAndReplay(cmd *cobra.Command, parent string, speed float64) error {
	ls, skipped, err := evidence.List(parent)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	p := tui.NewPicker(parent, ls, skipped)
	if _, err := tea.NewProgram(p, tea.WithAltScreen(), tea.WithOutput(out)).Run(); err != nil {
		return err
	}
	return actOnChoice(cmd, p.Choice(), speed)
}

// actOnChoice replays the campaign picked, or writes its report and
// prints the report's path: a folder's name is the evidence's, so the
// path is cleaned of control sequences like any other text it holds.
func actOnChoice(cmd *cobra.Command, c tui.PickerChoice, speed float64) error {
	switch {
	case c.Dir == "":
		return nil
	case c.Report:
		file, err := report.Write(c.Dir, "")
		if err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), "report:", termsafe.Text(file))
		return nil
	}
	return replayDir(cmd, c.Dir, speed, false)
}
