// Command tokex-engine is tokex's reference RFC 8693 server alone, as the
// local driver starts it: `tokex-engine --config FILE [--ready-fd N] [-v]`.
// It links only the server (authserver and the packages it needs), so the
// memory a campaign reports for the embedded server is its own,
// not tokex's whole binary's. `go install ./cmd/...` installs it beside tokex.
package main

import (
	"os"

	"github.com/tokex-dev/tokex/authserver"
)

func main() { os.Exit(authserver.EmbeddedMain(os.Args[1:], os.Stdout, os.Stderr)) }
