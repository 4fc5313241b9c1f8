package cli

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/runner/replay"
	"github.com/tokex-dev/tokex/tui"
	"github.com/tokex-dev/tokex/tui/headless"
)

func newReplayCmd() *cobra.Command {
	var speed float64
	var noTUI bool
	cmd := &cobra.Command{
		Use:   "replay [DIR]",
		Short: "Show a saved campaign through the same screens, with its original timing",
		Long: `Replay an evidence folder: its recorded events are emitted again with their
original spacing (scaled by --speed; --speed 0 jumps to the end) into the same
dashboard, or with --no-tui into the same progress lines and final table.
A folder from an aborted campaign replays as far as it got. Without DIR, in a
terminal, pick a campaign of ./tokex-evidence from a list (tokex ls).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(speed == 0 || speed >= 0.01 && speed <= 10000) { // NaN too
				return fmt.Errorf("--speed must be 0 or between 0.01 and 10000")
			}
			if len(args) == 0 {
				if noTUI || !isTerminal(cmd.OutOrStdout()) {
					return fmt.Errorf("replay needs an evidence folder without a terminal (tokex ls lists them)")
				}
				return pickAndReplay(cmd, defaultEvidence, speed)
			}
			return replayDir(cmd, args[0], speed, noTUI)
		},
	}
	cmd.Flags().Float64Var(&speed, "speed", 1, "playback speed (2 = twice as fast, 0 = jump to the end)")
	cmd.Flags().BoolVar(&noTUI, "no-tui", false, "print the headless progress lines and the final table")
	return cmd
}

// replayDir replays one evidence folder into the dashboard, or with noTUI
// (or without a terminal) into the headless printer.
func replayDir(cmd *cobra.Command, dir string, speed float64, noTUI bool) error {
	src, err := replay.Load(dir)
	if err != nil {
		return err
	}
	defer src.Close()
	out := cmd.OutOrStdout()
	ctx, cancel := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if noTUI || !isTerminal(out) {
		for _, n := range src.Notes {
			fmt.Fprintln(cmd.ErrOrStderr(), "replay:", n)
		}
		p := headless.New(out)
		if err := src.Play(ctx, speed, p.Consume); err != nil {
			return &exitError{code: ExitInterrupted}
		}
		return nil
	}
	m := tui.New(tui.Options{Source: "replay of " + dir})
	prog := tui.NewProgram(m, tea.WithOutput(out))
	go func() {
		_ = src.Play(ctx, speed, prog.Consume)
		for _, n := range src.Notes {
			prog.Consume(event.Log{At: lastTime(src), Source: "replay", Level: "warn", Message: n})
		}
	}()
	err = prog.Run()
	cancel()
	if err != nil {
		return err
	}
	return nil
}

func lastTime(s *replay.Source) time.Time { return event.Time(s.Last) }
