package stats

// The most a campaign's statistics are computed over, which a campaign's
// config, the evidence writer and its readers all hold to.
const (
	// MaxRuns bounds the runs of a plan, a manifest and a summary.
	MaxRuns = 1000
	// MaxRunRows bounds one run's rows (20 million: a run of 50,000
	// exchanges/s for 400 s, whose exact statistics take 12 bytes a row).
	MaxRunRows = 20_000_000
)

// SchemaVersion of summary.json and stats.json; bump on incompatible change.
// 2: warnings are {code, run, detail}; 3: requests.csv.gz has kind, hop and
// token_bytes, summary.json variants and agentic (issue 30).
const SchemaVersion = 3
