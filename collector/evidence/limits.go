package evidence

import (
	"fmt"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/internal/names"
)

// What the readers accept. An evidence folder may come from anyone, so
// every size is bounded: a file over its limit is refused with an error
// that names it, never read into memory whole.
const (
	// stats.MaxRuns bounds the runs of a plan, a manifest and a summary,
	// stats.MaxRunRows one run's requests.csv.gz; MaxRequestBytes is its
	// decompressed size (about 60 bytes a row).
	MaxRequestBytes = 2 << 30
	// MaxResourceRows bounds one resources.csv.
	MaxResourceRows = 1_000_000
	// MaxEventLine is the longest events.jsonl line read; longer lines are
	// skipped and counted like damaged ones. tokex's own lines stay far
	// below it (stats.MaxRuns bounds the plan and the summary they carry).
	MaxEventLine = 16 << 20
	// maxRowLine bounds a line of requests.csv.gz or resources.csv.
	maxRowLine = 64 << 10

	maxManifestBytes = 16 << 20
	maxSummaryBytes  = 32 << 20
	maxStatsBytes    = 4 << 20
)

// limits are the caps the readers apply (tests lower them).
var limits = struct{ runRows, requestBytes int64 }{stats.MaxRunRows, MaxRequestBytes}

// CheckID accepts a campaign or run id only if it is one clean path
// element tokex could have written (names.IsFile: 1–128 letters, digits,
// '.', '_' or '-', not starting with '.'). Every reader checks ids with it
// before an id becomes part of a path.
func CheckID(id string) error {
	if id == "" || len(id) > names.IDMax || id[0] == '.' {
		return fmt.Errorf("id %q is not a valid campaign or run id", clip(id))
	}
	if !names.IsFile(id) {
		return fmt.Errorf("id %q is not a valid campaign or run id (one path element of letters, digits, '.', '_', '-')", clip(id))
	}
	return nil
}

// clip shortens a hostile value quoted in an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
