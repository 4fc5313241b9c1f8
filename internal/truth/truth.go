// Package truth gates the tests that judge tokex's figures against a measured
// truth (a server of known cost, a real campaign of many seconds): they run
// only when TOKEX_TRUTH=1, which scripts/test sets for a step of their own.
// Name such tests TestTruth… so that step can select them.
package truth

import (
	"os"
	"testing"
)

// Env is the variable that turns the truth tests on.
const Env = "TOKEX_TRUTH"

// Require skips t unless the truth tests were asked for.
func Require(t testing.TB) {
	t.Helper()
	if os.Getenv(Env) != "1" {
		t.Skip("a truth test (measures real campaigns for many seconds): set " + Env + "=1; scripts/test runs these as their own step")
	}
}

// UnavailableMark starts the skip message of Unavailable.
const UnavailableMark = "unavailable here: "

// Unavailable skips t because something it needs is not on this machine (a
// tool, a package scripts/test installs): the truth step counts it as not
// run here, not as a measurement the host could not judge (Judge).
func Unavailable(t testing.TB, why string) {
	t.Helper()
	t.Skip(UnavailableMark + why)
}
