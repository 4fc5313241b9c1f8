package config

import (
	"strings"
	"testing"
)

// TestConfigBounds is issue 9 item 22: .nan thresholds and sanity rates
// passed validation and failed later without file, line and field; a rate
// of 1e-300 made a 300-character run id; max_in_flight 100000000 and
// users.count 2000000000 ran out of memory with a stack dump; rounds and
// sanity.rate had no bound. Every number is now finite and every size
// bounded, with the usual file:line: field: message.
func TestConfigBounds(t *testing.T) {
	many := strings.Repeat("1, ", MaxStages) + "1"
	cases := []struct {
		name, body string
		want       []string
	}{
		{"stage NaN", "stages: [100, .nan]\n", []string{"campaign.yaml:1: stages[1]: .nan is not a finite number"}},
		{"stage Inf", "stages:\n  - .inf\n", []string{"campaign.yaml:2: stages[0]: .inf is not a finite number"}},
		{"p95 NaN", "thresholds:\n  p95_ms: .nan\n", []string{"campaign.yaml:2: thresholds.p95_ms: .nan is not a finite number"}},
		{"success ratio -Inf", "thresholds:\n  success_ratio: -.inf\n", []string{"campaign.yaml:2: thresholds.success_ratio"}},
		{"sanity rate NaN", "sanity:\n  rate: .NaN\n", []string{"campaign.yaml:2: sanity.rate: .NaN is not a finite number"}},
		{"sanity rate 1e12", "sanity:\n  rate: 1e12\n", []string{"campaign.yaml:2: sanity.rate: must be 0"}},
		{"tiny rate", "stages: [1e-300]\n", []string{"campaign.yaml:1: stages[0]: rate 1e-300 must be between 0.01 and 100000"}},
		{"max_in_flight", "agents:\n  max_in_flight: 100000000\n", []string{"campaign.yaml:2: agents.max_in_flight: must be between 1 and 10000"}},
		{"workers", "agents:\n  count: 1000\n  max_in_flight: 1000\n", []string{"campaign.yaml:3: agents.max_in_flight:", "at most 100000"}},
		{"users", "users:\n  count: 2000000000\n", []string{"campaign.yaml:2: users.count: must be between 1 and 1000000"}},
		{"rounds", "rounds: 1000000000\n", []string{"campaign.yaml:1: rounds: must be between 1 and 100"}},
		{"runs", "rounds: 100\nstages: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n", []string{"campaign.yaml:1: rounds:", "1000 runs"}},
		{"stage count", "stages: [" + many + "]\n", []string{"campaign.yaml:1: stages: needs between 1 and 100 rates"}},
		{"duration", "duration: 100000h\n", []string{"campaign.yaml:1: duration: must be between 1s and 24h"}},
		{"warmup", "warmup: 48h\n", []string{"campaign.yaml:1: warmup"}},
		{"pause", "pause: 25h\n", []string{"campaign.yaml:1: pause"}},
		{"sanity duration", "sanity:\n  duration: 25h\n", []string{"campaign.yaml:2: sanity.duration"}},
		{"arrivals per run", "stages: [100000]\nduration: 2h\n", []string{"campaign.yaml:1: stages[0]:", "arrivals in one run; at most 20000000"}},
		{"subject lifetime", "subject:\n  lifetime: 48h\n", []string{"campaign.yaml:2: subject.lifetime"}},
		{"request timeout", "request:\n  timeout: 1h\n", []string{"campaign.yaml:2: request.timeout"}},
		{"sample interval", "sample_interval: 2h\n", []string{"campaign.yaml:1: sample_interval"}},
		{"p95 huge", "thresholds:\n  p95_ms: 1e12\n", []string{"campaign.yaml:2: thresholds.p95_ms"}},
		{"name", "name: " + strings.Repeat("x", MaxNameLen+1) + "\n", []string{"campaign.yaml:1: name:"}},
		{"pid", "target:\n  pid: -1\n", []string{"campaign.yaml:2: target.pid"}},
		{"port", "kube:\n  engines:\n    port: 70000\n", []string{"campaign.yaml:3: kube.engines.port"}},
		{"ttl", "kube:\n  ttl_after_finished: 1000h\n", []string{"campaign.yaml:2: kube.ttl_after_finished"}},
		{"evidence file", "driver: kube\ntarget:\n  url: https://e:9031/t\nkube:\n  evidence_file: sometimes\n",
			[]string{"campaign.yaml:5: kube.evidence_file: unknown mode \"sometimes\" (auto, always, never)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantErrors(t, tc.body, tc.want) })
	}
	// At the limits, a campaign is valid.
	edge := "stages: [0.01, 100000]\nagents:\n  count: 10\n  max_in_flight: 10000\nrounds: 100\nduration: 1m\nwarmup: 30s\n" +
		"users:\n  count: 1000000\nsanity:\n  rate: 0.01\n"
	if err := loadAndValidate(t, edge); err != nil {
		t.Fatalf("limits refused: %v", err)
	}
}

func loadAndValidate(t *testing.T, body string) error {
	t.Helper()
	c, doc, err := Load(write(t, body), "article")
	if err == nil {
		err = c.Validate(doc)
	}
	return err
}

// wantErrors fails unless body is refused with every piece of want.
func wantErrors(t *testing.T, body string, want []string) {
	t.Helper()
	err := loadAndValidate(t, body)
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}
