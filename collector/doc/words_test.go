package doc

import (
	"testing"

	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/collector/stats"
)

func TestThresholdsText(t *testing.T) {
	th := stats.Thresholds{P95Ms: 500, SuccessRatio: 0.99}
	if got := ThresholdsText(th); got != "p95 < 500 ms, success ≥ 99%, dropped ≤ 0, no generator/host warning" {
		t.Errorf("%q", got)
	}
	th.AllowWarnings = []stats.WarningCode{stats.WarnHostSaturated, stats.WarnGeneratorLate}
	if got := ThresholdsText(th); got != "p95 < 500 ms, success ≥ 99%, dropped ≤ 0, no generator/host warning but host_saturated, generator_late" {
		t.Errorf("%q", got)
	}
}

func TestErrorKindText(t *testing.T) {
	k := stats.ErrorKind{Error: "oauth_error:invalid_client", Count: 70,
		Descriptions: []sample.ErrorDescription{{Text: "client authentication failed", Count: 60}, {Text: "unknown client", Count: 10}}}
	if got := ErrorKindText(k); got != `oauth_error:invalid_client ×70 ("client authentication failed", "unknown client")` {
		t.Errorf("%s", got)
	}
	if got := ErrorKindText(stats.ErrorKind{Error: "http_error:503", Count: 1}); got != "http_error:503 ×1" {
		t.Errorf("%s", got)
	}
}
