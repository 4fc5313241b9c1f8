// Package cli is tokex's command line (cobra): one Options struct per
// command, completed from flags and config, validated, then run.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/tokex-dev/tokex/internal/termsafe"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
)

// Version is set at build time with -ldflags "-X …/cli.Version=…".
var Version = "dev"

// Exit codes.
const (
	ExitOK          = 0
	ExitThresholds  = 1   // a threshold failed
	ExitCannotRun   = 2   // bad input, unreachable target, write error
	ExitInterrupted = 130 // Ctrl-C / SIGTERM
)

// exitError carries a process exit code through cobra: ExitThresholds,
// ExitInterrupted, or the embedded server's own. Any other error exits
// ExitCannotRun, so a command returns it as it is.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// deps are what the commands run against; tests hand run and capacity a
// fake driver (runner/runnertest).
type deps struct {
	// driver makes a campaign's driver once its options are complete; nil:
	// the configured one, local or kube.
	driver func(c config.Campaign) (runner.Driver, error)
}

// NewRoot builds the command tree.
func NewRoot() *cobra.Command { return newRoot(deps{}) }

func newRoot(d deps) *cobra.Command {
	root := &cobra.Command{
		Use:           "tokex",
		Short:         "How expensive is an OAuth 2.0 token exchange, really? Measure it.",
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(flagErrors)
	wrapFlagHelp(root)
	root.AddCommand(newServeCmd(), newJWKSCmd(), newRunCmd(d), newCapacityCmd(d), newInitCmd(), newMintCmd(), newReplayCmd(), newLsCmd(), newReportCmd(), newCompareCmd(), newImportCmd(), newManifestsCmd(), newCleanupCmd(), newVerifyCmd(), newSmokeCmd(), newEngineCmd())
	return root
}

// wrapFlagHelp wraps every command's flag list to the terminal's width
// (HelpWidth without one): pflag's own lists ran to 200 columns, their
// descriptions padded behind the longest flag.
func wrapFlagHelp(root *cobra.Command) {
	cobra.AddTemplateFunc("wrappedFlagUsages", func(f *pflag.FlagSet) string { return f.FlagUsagesWrapped(helpWidth()) })
	root.SetUsageTemplate(strings.NewReplacer(
		"{{.LocalFlags.FlagUsages", "{{wrappedFlagUsages .LocalFlags",
		"{{.InheritedFlags.FlagUsages", "{{wrappedFlagUsages .InheritedFlags",
	).Replace(root.UsageTemplate()))
}

// HelpWidth is the width help text is wrapped to without a terminal.
const HelpWidth = 100

// helpWidth is the terminal's width (at most 160), or HelpWidth.
func helpWidth() int {
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w >= 40 {
		return min(w, 160)
	}
	return HelpWidth
}

// Main runs the CLI with args and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int { return mainWith(deps{}, args, stdout, stderr) }

func mainWith(d deps, args []string, stdout, stderr io.Writer) int {
	// Errors and warnings quote evidence, logs and servers: no control
	// character reaches the terminal through them.
	stderr = termsafe.Writer(stderr)
	root := newRoot(d)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	code := ExitCannotRun
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if ee == nil || ee.err != nil {
		fmt.Fprintln(stderr, "tokex:", err)
	}
	return code
}
