// Command tokex measures what an OAuth 2.0 token exchange (RFC 8693) costs.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// exitError carries a process exit code through cobra.
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

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "tokex",
		Short:         "How expensive is an OAuth 2.0 token exchange, really? Measure it.",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCmd(), newJWKSCmd())
	return root
}

func main() {
	err := newRoot().Execute()
	if err == nil {
		return
	}
	code := 2
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if ee == nil || ee.err != nil {
		fmt.Fprintln(os.Stderr, "tokex:", err)
	}
	os.Exit(code)
}
