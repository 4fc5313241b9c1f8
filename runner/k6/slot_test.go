package k6

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/stats"
)

// realDrops reads tokex's own script under real k6 v2.2.0 with drops (see
// testdata/k6/SOURCES.md): per scenario, its start as the script saw it
// (exec.scenario.startTime, ms: iteration 0's scheduled time in that
// script's lines), when each started iteration began (k6's
// iteration_duration point minus its value, µs) and when each dropped
// arrival was counted (k6's dropped_iterations points, µs).
type realScenario struct {
	startMS int64
	begins  []int64
	drops   []int64
	lines   []stats.Request
}

func realDrops(t *testing.T) map[string]*realScenario {
	t.Helper()
	sc := map[string]*realScenario{"warmup": {}, "measured": {}}
	s := bufio.NewScanner(fixture(t, "tokex-script-k6v2.2.0-drops-agent-0.log"))
	for s.Scan() {
		r, ok, err := ParseLine(s.Text())
		if !ok || err != nil {
			continue
		}
		x := sc[string(r.Phase)]
		x.lines = append(x.lines, r.Request)
		if r.Seq == 0 {
			x.startMS = r.ScheduledUS / 1000
		}
	}
	zr, err := gzip.NewReader(fixture(t, "tokex-script-k6v2.2.0-drops-agent-0.ndjson.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadNDJSON(zr, func(p Point) error {
		x := sc[p.Tags["scenario"]]
		switch p.Metric {
		case "iteration_duration":
			x.begins = append(x.begins, p.Time.UnixMicro()-int64(math.Round(p.Value*1000)))
		case "dropped_iterations":
			x.drops = append(x.drops, p.Time.UnixMicro())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestSlotOnRealK6Drops checks the slot derivation against k6's own point
// timestamps: the slots of the started iterations and of the dropped
// arrivals together must be every arrival k6 fired, each exactly once.
// Expected counts from the run's summary (testdata/k6/SOURCES.md): warmup
// 40 sent + 60 dropped = 100 arrivals (20/s × 5 s), measured 161 + 240 =
// 401 (20/s × 20 s, plus the extra arrival k6 fires at the very end).
func TestSlotOnRealK6Drops(t *testing.T) {
	t.Parallel()
	const periodMS = 50.0 // RATE_MILLI 20000: 20 arrivals/s
	want := map[string]int{"warmup": 100, "measured": 401}
	for name, x := range realDrops(t) {
		if x.startMS == 0 || len(x.begins) != len(x.lines) {
			t.Fatalf("%s: fixture: start %d, %d iterations, %d lines", name, x.startMS, len(x.begins), len(x.lines))
		}
		seen := map[int64]int{}
		for _, b := range x.begins {
			seen[Slot(x.startMS, b/1000, periodMS)]++ // JavaScript's Date.now(): whole ms
		}
		// A dropped arrival is counted 1–3 ms after its slot: the nearest slot.
		for _, d := range x.drops {
			seen[int64(math.Round(float64(d/1000-x.startMS)/periodMS))]++
		}
		for k := int64(0); k < int64(want[name]); k++ {
			if seen[k] != 1 {
				t.Errorf("%s: slot %d claimed %d times", name, k, seen[k])
			}
		}
		if len(seen) != want[name] {
			t.Errorf("%s: %d distinct slots, want %d", name, len(seen), want[name])
		}
	}
}

// TestOldNumberingWasWrong documents issue 10 item 1 on the same real run:
// the script's old numbering (k6's iterationInTest, which skips dropped
// arrivals) put all 161 measured requests in the first 8 s of the 20 s
// window; the slots spread them over the whole window.
func TestOldNumberingWasWrong(t *testing.T) {
	t.Parallel()
	x := realDrops(t)["measured"]
	last := slices.MaxFunc(x.lines, func(a, b stats.Request) int { return int(a.Seq - b.Seq) })
	if span := float64(last.ScheduledUS/1000-x.startMS) / 1000; span > 8.1 {
		t.Fatalf("the fixture's old numbering spans %.1f s", span)
	}
	var maxSlot int64
	for _, b := range x.begins {
		maxSlot = max(maxSlot, Slot(x.startMS, b/1000, 50))
	}
	if span := float64(maxSlot) * 50 / 1000; span < 19.5 {
		t.Errorf("slots span %.2f s of the 20 s window", span)
	}
}

var slotFunc = regexp.MustCompile(`(?s)// slotOf:begin\n(.*)// slotOf:end`)

// TestSlotMirrorsScript runs the script's own slotOf under node on the real
// run's iteration starts and on a grid of rates, and compares it with Slot.
func TestSlotMirrorsScript(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	js, _ := Script(ScriptParams{})
	m := slotFunc.FindStringSubmatch(js)
	if m == nil {
		t.Fatal("the script has no slotOf block")
	}
	type in struct {
		Start, Now int64
		Period     float64
	}
	var ins []in
	for _, x := range realDrops(t) {
		for _, b := range x.begins {
			ins = append(ins, in{x.startMS, b / 1000, 50})
		}
	}
	for _, milli := range []int64{1000, 3000, 7000, 20000, 30000, 50000, 333333, 1000000} {
		p := 1e6 / float64(milli)
		for now := int64(1796064361036000 / 1000); now < 1796064361036000/1000+30*int64(p)+5; now += 1 + now%7 {
			ins = append(ins, in{1796064361036000 / 1000, now, p})
		}
	}
	b, _ := json.Marshal(ins)
	prog := m[1] + "const ins = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n" +
		"console.log(JSON.stringify(ins.map(x => slotOf(x.Start, x.Now, x.Period))));\n"
	f := filepath.Join(t.TempDir(), "slot.js")
	_ = os.WriteFile(f, []byte(prog), 0o644)
	cmd := exec.Command(node, f)
	cmd.Stdin = strings.NewReader(string(b))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []int64
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(ins) {
		t.Fatalf("node output: %v (%d of %d)", err, len(got), len(ins))
	}
	for i, x := range ins {
		if w := Slot(x.Start, x.Now, x.Period); got[i] != w {
			t.Fatalf("%+v: script %d, Slot %d", x, got[i], w)
		}
	}
	t.Logf("%d inputs agree", len(ins))
}
