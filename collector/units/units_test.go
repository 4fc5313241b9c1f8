package units

import (
	"math"
	"testing"
)

// TestThousandsEveryInt64 is issue 9 item 13: math.MinInt64 cannot be
// negated, and Thousands used to recurse on it until the stack overflowed.
func TestThousandsEveryInt64(t *testing.T) {
	t.Parallel()
	cases := []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{7, "7"},
		{999, "999"},
		{1000, "1,000"},
		{150008, "150,008"},
		{-1, "-1"},
		{-1000, "-1,000"},
		{-150008, "-150,008"},
		{math.MaxInt64, "9,223,372,036,854,775,807"},
		{math.MinInt64, "-9,223,372,036,854,775,808"},
	}
	for _, c := range cases {
		if got := Thousands(c.n); got != c.want {
			t.Errorf("Thousands(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestStageLabelAndBytes(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]string{500: "500/s", 0.5: "0.5/s", 12.25: "12.2/s"} {
		if got := StageLabel(in); got != want {
			t.Errorf("StageLabel(%g) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[int64]string{2048: "2 KiB", 3 << 20: "3.0 MiB", 5 << 30: "5.00 GiB"} {
		if got := BytesIEC(in); got != want {
			t.Errorf("BytesIEC(%d) = %q, want %q", in, got, want)
		}
	}
}

// TestCount: "1 run", never "1 runs", wherever a count of runs is printed
// (the goldens of cmd/tokex/cli and collector/report hold "1 run" in the
// header, the poor fit and summary.md).
func TestCount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int64
		word string
		want string
	}{{0, "run", "0 runs"}, {1, "run", "1 run"}, {2, "run", "2 runs"}, {1, "counted run", "1 counted run"}, {-1, "rate", "-1 rates"}, {1_000, "rate", "1000 rates"}} {
		if got := Count(tc.n, tc.word); got != tc.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tc.n, tc.word, got, tc.want)
		}
	}
	if got := Count(1, "run"); got != "1 run" { // an int as well
		t.Errorf("Count(1) = %q", got)
	}
}
