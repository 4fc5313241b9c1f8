package evidence

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/exchange"
)

func TestRequestRowRoundTrip(t *testing.T) {
	rows := []stats.Request{
		{Agent: 3, Seq: 42, Phase: stats.Measured, ScheduledUS: 1789978138000001, SendLagUS: 17, DurationUS: 5321, Status: 200, Outcome: "ok"},
		{Agent: 0, Seq: 1, Phase: stats.Warmup, ScheduledUS: 1, Outcome: "dropped"},
		{Agent: 9, Seq: 7, Phase: stats.Measured, ScheduledUS: 5, SendLagUS: 1, DurationUS: 2, Status: 400, Outcome: "oauth_error", Detail: "invalid_grant"},
		{Agent: 1, Seq: 2, Phase: stats.Measured, ScheduledUS: 5, Outcome: "conn_error", Detail: "a,b\nc"},
		{Agent: 4, Seq: -1, Phase: stats.Measured, ScheduledUS: 9, Outcome: "dropped", Count: 1_000_000_000_000},
		{Agent: 2, Seq: 3, Phase: stats.Measured, ScheduledUS: 7, SendLagUS: 1, DurationUS: 900, Status: 200, Outcome: "ok", Retried: true},
		{Agent: 2, Seq: 4, Phase: stats.Warmup, ScheduledUS: 8, SendLagUS: 1, DurationUS: 90, Outcome: "conn_error", Retried: true},
		{Agent: 2, Seq: 5, Phase: stats.Measured, ScheduledUS: 9, SendLagUS: 3, DurationUS: 900, Status: 200, Outcome: "ok", Hop: 3, TokenBytes: 1234},
		{Agent: 2, Seq: 6, Phase: stats.Measured, ScheduledUS: 9, SendLagUS: 3, DurationUS: 900, Status: 400, Outcome: "oauth_error", Detail: "invalid_grant", Hop: 2},
		{Agent: 2, Seq: 7, Phase: stats.Measured, ScheduledUS: 9, SendLagUS: 3, DurationUS: 700, Status: 200, Outcome: "ok", Kind: exchange.GrantClientCredentials, TokenBytes: 700},
		{Agent: 2, Seq: 8, Phase: stats.Measured, ScheduledUS: 9, Outcome: "dropped", Kind: exchange.GrantJWTBearer},
		{Agent: 2, Seq: 9, Phase: stats.Measured, ScheduledUS: 9, Outcome: "dropped", Hop: 1},
	}
	for _, r := range rows {
		line := string(AppendRequest(nil, &r))
		got, err := ParseRequest(strings.TrimSuffix(line, "\n"))
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		want := r
		want.Detail = clean(exchange.SafeDetail(r.Detail))
		if got != want {
			t.Errorf("round trip of %+v gave %+v", want, got)
		}
	}
	for _, bad := range []string{"", "1,2,3", "x,1,measured,1,1,1,200,ok,,", "1,1,later,1,1,1,200,ok,,", "1,1,measured,1,1,1,200,,,",
		"1,1,measured,1,1,1,200,ok,,5,", "1,1,measured,1,,,0,dropped,,-2,", "-1,1,measured,1,1,1,200,ok,,,", "1,1,measured,1,1,1,20000,ok,,,",
		"1,1,measured,1,1,1,200,ok,,", "1,1,measured,1,1,1,200,ok,,,0", "1,1,measured,1,1,1,200,ok,,,2", "1,1,measured,1,1,1,200,ok,,,true",
		"1,1,measured,1,,,0,dropped,,,1", "1,1,measured,1,1,1,200,ok,,,1,",
		// kind, hop, token_bytes
		"1,1,measured,1,1,1,200,ok,,,,exchange,,", "1,1,measured,1,1,1,200,ok,,,,password,,", "1,1,measured,1,1,1,200,ok,,,,,6,",
		"1,1,measured,1,1,1,200,ok,,,,,-1,", "1,1,measured,1,1,1,200,ok,,,,client_credentials,1,", "1,1,measured,1,1,1,200,ok,,,,,,-5",
		"1,1,measured,1,1,1,400,oauth_error,invalid_grant,,,,1,30", "1,1,measured,1,1,1,200,ok,,,,,,1048577", "1,1,measured,1,1,1,200,ok,,,,,x,",
		"1,1,measured,1,1,1,200,ok,,,,,1,,"} {
		if _, err := ParseRequest(bad); err == nil {
			t.Errorf("ParseRequest(%q) accepted", bad)
		}
	}
}

func TestWriterReaderAndEvents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	w, err := Create(dir, []byte("name: t\n"), Manifest{CampaignID: "c", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	p := event.PlannedRun{ID: "01-r1-10rps", Round: 1, TargetRPS: 10, Duration: time.Second, Agents: 1}
	_ = w.SetPlan([]event.PlannedRun{p})
	w.Consume(event.CampaignStarted{At: time.Now(), ID: "c", Runs: []event.PlannedRun{p}})
	start := time.Now()
	rec := NewRecorder(w, nil)
	run, err := rec.Begin(p, start)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		run.Record(&stats.Request{Seq: int64(i), Phase: stats.Measured, ScheduledUS: start.Add(time.Duration(i) * 100 * time.Millisecond).UnixMicro(), DurationUS: 1000, Status: 200, Outcome: "ok"})
	}
	w.Consume(event.Resource{At: start.Add(500 * time.Millisecond), Role: "engine", Name: "e", CPUMillicores: 100})
	st, err := run.End(time.Now(), stats.RunMeta{ID: p.ID, Round: 1, TargetRPS: 10, Started: start, MeasuredStart: start, MeasuredEnd: start.Add(time.Second), Status: stats.StatusDone}, stats.Thresholds{P95Ms: 10, SuccessRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	if st.Requests != 10 || st.EngineCPU == nil || !st.ThresholdsPassed {
		t.Fatalf("stats %+v", st)
	}
	s := &summary.Summary{CampaignID: "c", Status: "done", Finished: time.Now()}
	summary.BuildSummary(s, []*stats.Run{st}, true)
	if err := rec.Finish(s); err != nil {
		t.Fatal(err)
	}
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	evs, info := allEvents(t, f)
	if len(info.Notes) != 0 {
		t.Fatal(info.Notes)
	}
	var kinds []string
	for i, e := range evs {
		if i > 0 && evs[i-1].Seq >= e.Seq {
			t.Error("events out of order")
		}
		kinds = append(kinds, string(e.Event.Kind()))
	}
	if got := strings.Join(kinds, ","); got != "campaign_started,run_started,resource,run_finished,campaign_finished" {
		t.Errorf("events: %s", got)
	}
	res, _, _ := f.Resources(p.ID)
	if len(res) != 1 || res[0].CPUMillicores != 100 {
		t.Errorf("resources %+v", res)
	}
}

func TestOpenRefusesNonEvidence(t *testing.T) {
	d := t.TempDir()
	_ = os.WriteFile(filepath.Join(d, "x.txt"), []byte("x"), 0o644)
	for _, dir := range []string{d, filepath.Join(d, "x.txt"), filepath.Join(d, "missing")} {
		if _, err := Open(dir); err == nil {
			t.Errorf("Open(%s) accepted", dir)
		}
	}
	_ = os.WriteFile(filepath.Join(d, ManifestFile), []byte("{not json"), 0o644)
	if _, err := Open(d); err == nil || !strings.Contains(err.Error(), "not a tokex evidence folder") {
		t.Errorf("err = %v", err)
	}
}

func TestCreateReportsUnwritableFolder(t *testing.T) {
	// root ignores permissions; a path under a regular file fails for everyone.
	d := t.TempDir()
	file := filepath.Join(d, "file")
	_ = os.WriteFile(file, nil, 0o644)
	if _, err := Create(filepath.Join(file, "c"), nil, Manifest{CampaignID: "c"}); err == nil {
		t.Fatal("created evidence under a regular file")
	}
	// An existing campaign folder is never overwritten.
	dir := filepath.Join(d, "c")
	if _, err := Create(dir, nil, Manifest{CampaignID: "c"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir, nil, Manifest{CampaignID: "c"}); err == nil {
		t.Fatal("overwrote an existing evidence folder")
	}
}

func TestTruncatedRequestsKeepWhatWasRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	w, _ := Create(dir, nil, Manifest{CampaignID: "c"})
	p := event.PlannedRun{ID: "r"}
	_ = w.SetPlan([]event.PlannedRun{p})
	run, err := NewRecorder(w, nil).Begin(p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5000; i++ {
		run.Record(&stats.Request{Seq: int64(i), Phase: stats.Measured, Outcome: "ok", Status: 200, DurationUS: int64(i)})
	}
	_, _ = run.End(time.Now(), stats.RunMeta{ID: "r", Status: stats.StatusDone}, stats.Thresholds{})
	path := filepath.Join(dir, RunsDir, "r", RequestsFile)
	b, _ := os.ReadFile(path)
	_ = os.WriteFile(path, b[:len(b)/2], 0o644) // a crash mid-write
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	info, err := f.Requests("r", func(*stats.Request) { n++ })
	if err != nil || !info.Truncated || n == 0 || n >= 5000 || info.Rows != n {
		t.Fatalf("rows %d info %+v err %v", n, info, err)
	}
	st, err := f.ComputeRun(stats.RunMeta{ID: "r", Status: stats.StatusDone}, stats.Thresholds{})
	if err != nil || st.Requests != n || !strings.Contains(fmt.Sprint(st.Warnings), "truncated after") {
		t.Fatalf("recomputed run: %v %+v", err, st)
	}
}

// allEvents reads a folder's whole stream.
func allEvents(t *testing.T, f *Folder) ([]Sequenced, EventInfo) {
	t.Helper()
	var out []Sequenced
	info, err := f.EachEvent(func(e Sequenced) error { out = append(out, e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return out, info
}

// Rows of every layout tokex wrote read back, the retried flag of the
// current one counted in the run's statistics and none in older ones.
func TestRequestsOfEveryLayoutRead(t *testing.T) {
	rows := "0,1,measured,1000000,5,900,200,ok,,\n0,2,measured,1000100,5,800,200,ok,,\n"
	for _, tc := range []struct {
		name, text string
		retried    int64
	}{
		{"v1: before count", requestsHeaderV1 + "\n0,1,measured,1000000,5,900,200,ok,\n0,2,measured,1000100,5,800,200,ok,\n", 0},
		{"v2: before retried", requestsHeaderV2 + "\n" + rows, 0},
		{"v3: before kind, hop and token_bytes", requestsHeaderV3 + "\n0,1,measured,1000000,5,900,200,ok,,,1\n0,2,measured,1000100,5,800,200,ok,,,\n0,3,warmup,900000,5,800,200,ok,,,1\n", 1},
		{"v4", RequestsHeader + "\n0,1,measured,1000000,5,900,200,ok,,,1,,,912\n0,2,measured,1000100,5,800,200,ok,,,,,,\n0,3,warmup,900000,5,800,200,ok,,,1,,,\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := stats.RunMeta{ID: "r", Status: stats.StatusDone, MeasuredStart: time.UnixMicro(999_000), MeasuredEnd: time.UnixMicro(2_000_000)}
			tally := stats.NewTally(meta)
			if _, err := parseRequests("requests", strings.NewReader(tc.text), tally.Add); err != nil {
				t.Fatal(err)
			}
			r := tally.Run(meta, stats.Thresholds{})
			if r.Requests != 2 || r.OK != 2 || r.Retried != tc.retried {
				t.Errorf("%d requests, %d ok, %d retried; want 2, 2, %d", r.Requests, r.OK, r.Retried, tc.retried)
			}
		})
	}
}
