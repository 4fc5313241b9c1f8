package layout

// rule says what one folder or package may import of the module.
type rule struct {
	from string
	// may lists what from may import besides itself: top-level folders in
	// folders, packages in packages (internal/... is allowed wherever the
	// folder rule allows internal; its own packages have rules).
	may []string
	// tests lists what from's test files may import besides may.
	tests []string
	// anything: from may import the whole module (cmd).
	anything bool
}

// folders are the rules between top-level folders, drawn in README.md
// ("Layout"). Test files follow the same rules, except end-to-end suites.
var folders = []rule{
	{from: "cmd", anything: true},
	{from: "tui", may: []string{"collector", "charts", "internal"}},
	{from: "runner", may: []string{"collector", "authserver", "exchange", "subject", "internal"}},
	{from: "collector", may: []string{"charts", "exchange", "internal"}},
	{from: "authserver", may: []string{"exchange", "subject", "internal"}},
	{from: "exchange", may: []string{"internal"}},
	{from: "subject", may: []string{"internal"}},
	{from: "charts"},
	{from: "bench"}, // standalone tools of the bench/ scripts
	{from: "internal"},
}

// layered are the top-level folders whose every package has a rule of its
// own in packages (docs/layout.md draws them).
var layered = []string{"collector", "runner", "tui", "internal"}

// packages are the rules of each package of a layered folder, bottom up:
// which packages of the module it may import, across folders too (a
// folder's rule bounds them).
var packages = []rule{
	{from: "collector/units"},
	{from: "collector/curve", may: []string{"collector/units"}},
	{from: "collector/table"},
	{from: "collector/decimate"},
	{from: "collector/sample"},
	{from: "collector/usage", may: []string{"collector/sample"}},
	{from: "collector/stats", may: []string{"collector/curve", "collector/sample", "collector/units", "collector/usage", "exchange"}},
	{from: "collector/summary", may: []string{"collector/curve", "collector/sample", "collector/stats", "collector/units", "collector/usage", "exchange"}},
	{from: "collector/forecast", may: []string{"collector/stats", "collector/units"}},
	{from: "collector/search", may: []string{"collector/curve", "collector/stats", "collector/summary"}},
	{from: "collector/promql", may: []string{"collector/sample", "collector/stats"}},
	{from: "collector/event", may: []string{"collector/curve", "collector/forecast", "collector/sample", "collector/search", "collector/stats", "collector/summary", "exchange"}},
	{from: "collector/proc", may: []string{"collector/event", "collector/sample", "collector/stats"}},
	{from: "collector/doc", may: []string{"collector/curve", "collector/sample", "collector/stats", "collector/summary", "collector/table", "collector/units"},
		tests: []string{"collector/search", "exchange"}},
	{from: "collector/evidence", may: []string{"collector/doc", "collector/event", "collector/sample", "collector/search", "collector/stats", "collector/summary", "collector/table", "collector/units", "exchange"}},
	{from: "collector/compare", may: []string{"collector/curve", "collector/doc", "collector/stats", "collector/summary", "collector/table", "collector/units"}},
	{from: "collector/junit", may: []string{"collector/compare", "collector/curve", "collector/doc", "collector/stats", "collector/summary", "collector/units"}},
	{from: "collector/promexport", may: []string{"collector/doc", "collector/event", "collector/stats"}},
	{from: "collector/report", may: []string{"collector/compare", "collector/curve", "collector/decimate", "collector/doc", "collector/evidence",
		"collector/sample", "collector/stats", "collector/summary", "collector/table", "collector/units", "charts"}, tests: []string{"collector/event", "collector/search"}},

	{from: "runner/config", may: []string{"collector/promql", "collector/stats", "exchange", "subject"}},
	{from: "runner/k6", may: []string{"collector/stats", "exchange"}},
	{from: "runner/replay", may: []string{"collector/event", "collector/evidence", "collector/stats", "collector/summary", "collector/units"}},
	{from: "runner", may: []string{"runner/config", "collector/curve", "collector/doc", "collector/event", "collector/evidence", "collector/promql",
		"collector/sample", "collector/search", "collector/stats", "collector/summary", "collector/units", "exchange"}, tests: []string{"runner/runnertest"}},
	{from: "runner/runnertest", may: []string{"runner", "runner/config", "collector/event", "collector/stats"}},
	{from: "runner/k6import", may: []string{"runner", "runner/k6", "collector/event", "collector/evidence", "collector/sample", "collector/stats", "collector/summary", "collector/units", "exchange"},
		tests: []string{"runner/replay", "collector/doc"}},
	{from: "runner/smoke", may: []string{"runner/config", "exchange", "subject"}, tests: []string{"authserver"}},
	{from: "runner/local", may: []string{"runner", "runner/config", "authserver", "collector/event", "collector/evidence", "collector/forecast",
		"collector/proc", "collector/sample", "collector/stats", "collector/summary", "collector/units", "exchange", "subject"},
		tests: []string{"runner/local/localtest", "runner/replay", "collector/curve", "collector/doc"}},
	{from: "runner/local/localtest", may: []string{"runner", "runner/config", "runner/local", "authserver", "collector/event", "collector/evidence", "collector/stats", "collector/summary", "exchange"}},
	{from: "runner/local/costcurve", tests: []string{"runner", "runner/config", "runner/local", "collector/curve", "collector/doc", "collector/event", "collector/evidence", "collector/stats", "collector/summary"}},
	{from: "runner/kube", may: []string{"runner", "runner/config", "runner/k6", "collector/event", "collector/stats", "collector/summary", "exchange"},
		tests: []string{"runner/local", "collector/evidence"}},

	{from: "tui/health", may: []string{"collector/sample", "collector/stats"}},
	{from: "tui/headless", may: []string{"tui/health", "collector/curve", "collector/doc", "collector/event", "collector/stats", "collector/summary", "collector/units"},
		tests: []string{"collector/evidence", "collector/sample", "collector/search"}},
	{from: "tui", may: []string{"tui/health", "charts", "collector/curve", "collector/doc", "collector/event", "collector/evidence", "collector/sample", "collector/search",
		"collector/stats", "collector/summary", "collector/table", "collector/units"}, tests: []string{"collector/forecast"}},

	{from: "internal/confload"},
	{from: "internal/gosrc"},
	{from: "internal/jwks"},
	{from: "internal/knowncost"},
	{from: "internal/lines"},
	{from: "internal/names"},
	{from: "internal/safefs"},
	{from: "internal/statedir"},
	{from: "internal/termsafe"},
	{from: "internal/truth", tests: []string{"internal/gosrc"}},
	{from: "internal/truth/judge", may: []string{"internal/truth"}},
	{from: "internal/funclen", tests: []string{"internal/gosrc"}},
	{from: "internal/layout", tests: []string{"internal/gosrc"}},
	{from: "internal/jose", may: []string{"internal/jwks"}},
	{from: "internal/owner", may: []string{"internal/statedir"}},
	{from: "internal/tlscert", may: []string{"internal/confload"}},
}
