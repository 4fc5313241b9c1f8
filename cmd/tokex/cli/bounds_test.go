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
