package cli

import (
	"strings"
	"testing"
)

// TestStagesFlagBounds is issue 9 item 22 for the command line: --stages
// NaN passed validation, and --stages 1e-300 made a 300-character run id.
func TestStagesFlagBounds(t *testing.T) {
	for _, tc := range []struct{ stages, want string }{
		{"NaN", `--stages: "NaN" is not a finite number`},
		{"100,+Inf", `--stages: "+Inf" is not a finite number`},
		{"infinity", `--stages: "infinity" is not a finite number`},
		{"1e400", `--stages: "1e400" is not a finite number`},
		{"1e-300", "stages[0]: rate 1e-300 must be between 0.01 and 100000"},
		{"-5", "stages[0]: rate -5 must be between"},
	} {
		code, _, errs := run(t, "run", "--stages", tc.stages, "--no-tui")
		if code != ExitCannotRun || !strings.Contains(errs, tc.want) {
			t.Errorf("--stages %s: exit %d, %q; want %q", tc.stages, code, errs, tc.want)
		}
	}
}

// TestFloatFlagsAreFinite: the other float flags, siblings of --stages.
func TestFloatFlagsAreFinite(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--speed", "NaN", dir}, "--speed must be 0 or between 0.01 and 10000"},
		{[]string{"replay", "--speed", "1e-300", dir}, "--speed must be 0 or between"},
		{[]string{"import", "k6", "--rate", "NaN", dir}, "--rate must be 0 (inferred) or between 0.01 and 100000"},
		{[]string{"import", "k6", "--rate", "1e-300", dir}, "--rate must be 0"},
		{[]string{"import", "k6", "--p95-ms", "NaN", dir}, "--p95-ms must be positive"},
	} {
		code, _, errs := run(t, tc.args...)
		if code != ExitCannotRun || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %q; want %q", tc.args, code, errs, tc.want)
		}
	}
}
