// Command judge reads the `go test -json` output of scripts/test's truth
// step on stdin, prints the tests' output as go test -v would, then one
// line per package, and exits 1 when a package's truth tests judged
// nothing: every measurement was skipped (package truth, Judge).
//
//	TOKEX_TRUTH=1 go test -json -run '^TestTruth' ./pkg/... | go run ./internal/truth/judge
package main

import (
	"fmt"
	"os"

	"github.com/tokex-dev/tokex/internal/truth"
)

func main() {
	verdicts, err := truth.Judge(os.Stdin, os.Stdout)
	fmt.Println("truth tests, per package:")
	for _, v := range verdicts {
		fmt.Println("  " + v.Line())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}
