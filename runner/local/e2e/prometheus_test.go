package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/promexport"
	"github.com/tokex-dev/tokex/collector/sample"
	"github.com/tokex-dev/tokex/internal/truth"
	"github.com/tokex-dev/tokex/runner/local/localtest"
)

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// prometheus is a real Prometheus server (Debian's package) on loopback
// scraping targets every second, with its storage in a temporary folder.
type prometheus struct {
	URL string
	cmd *exec.Cmd
}

func startPrometheus(t *testing.T, jobs map[string]string) *prometheus {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		truth.Unavailable(t, "prometheus is not installed (Debian's prometheus package; scripts/prometheus-e2e/install.sh installs it): the real-Prometheus test cannot run")
	}
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\nscrape_configs:\n")
	for job, addr := range jobs {
		fmt.Fprintf(&cfg, "  - job_name: %s\n    static_configs:\n      - targets: ['%s']\n", job, addr)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(port), "--storage.tsdb.retention.time=1h")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &prometheus{URL: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		log.Close()
		if t.Failed() {
			// Only its warnings and errors: the info lines would push the
			// test's own failure out of a CI log's tail.
			b, _ := os.ReadFile(log.Name())
			var bad []string
			for _, l := range strings.Split(string(b), "\n") {
				if l != "" && !strings.Contains(l, "level=info") {
					bad = append(bad, l)
				}
			}
			t.Logf("prometheus log, %d lines not at level=info:\n%s", len(bad), strings.Join(bad[max(0, len(bad)-20):], "\n"))
		}
	})
	// Prometheus starts its scrape loops once service discovery has
	// settled (about 5 s): wait for the first scrape of every job.
	deadline := time.Now().Add(30 * time.Second)
	for job := range jobs {
		for {
			if _, ok := p.query(t, fmt.Sprintf(`up{job=%q}`, job), time.Now()); ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("prometheus did not scrape %s within 30 s", job)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return p
}

// await repeats an instant query of now for up to 5 s until its value
// satisfies good; it returns the last value and whether any was found.
func (p *prometheus) await(t *testing.T, q string, good func(float64) bool) (v float64, found bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		got, ok := p.query(t, q, time.Now())
		if ok {
			v, found = got, true
		}
		if (ok && good(got)) || time.Now().After(deadline) {
			return v, found
		}
	}
}

// query is an instant query's single value at ts.
func (p *prometheus) query(t *testing.T, q string, ts time.Time) (float64, bool) {
	t.Helper()
	resp, err := http.PostForm(p.URL+"/api/v1/query", url.Values{"query": {q}, "time": {strconv.FormatFloat(float64(ts.UnixMilli())/1000, 'f', 3, 64)}})
	if err != nil {
		return 0, false // not listening yet
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusServiceUnavailable {
		return 0, false // starting
	}
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Status != "success" {
		t.Fatalf("%s: %v %s", q, err, b)
	}
	if len(r.Data.Result) != 1 {
		return 0, false
	}
	v, err := strconv.ParseFloat(r.Data.Result[0].Value[1].(string), 64)
	return v, err == nil
}

// TestTruthPrometheus: a real Prometheus scrapes the reference server's
// /metrics (metrics.addr) and tokex's --metrics-addr, every second, during
// a short local campaign (300/s, 2 s of warmup, 10 s measured). tokex's
// PromQL engine figure (method promql) must
// agree with its PID-based one of the same window within 5 %, and a query
// of tokex's achieved rate must return the run's rate. A truth test: the
// campaign, the waits for scrapes past its end and Prometheus's start (its
// scrape loops begin about 5 s in) take about 25 s.
func TestTruthPrometheus(t *testing.T) {
	truth.Require(t)
	enginePort := freePort(t)
	exp := promexport.New()
	srv, err := promexport.Serve("127.0.0.1:0", exp)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	prom := startPrometheus(t, map[string]string{"tokex-engine": "127.0.0.1:" + strconv.Itoa(enginePort), "tokex": srv.Addr()})
	base := filepath.Join(t.TempDir(), "serve.yaml")
	if err := os.WriteFile(base, []byte(fmt.Sprintf("metrics:\n  addr: 127.0.0.1:%d\n", enginePort)), 0o600); err != nil {
		t.Fatal(err)
	}
	c := localtest.Tiny()
	c.Name = "prometheus"
	c.Stages, c.Rounds = []float64{300}, 1
	// The engine starts with the campaign: its first scrapes come in the
	// warmup, so samples bracket the measured window.
	// 10 s measured: /proc counts the PID figure's CPU in 10 ms ticks
	// (user and system each), about 1 % of the 2–3 CPU-s in the window at
	// each edge; a 6 s window at 200/s left 3 %, and the two differed by
	// up to 5.6 % on a busy machine.
	c.Warmup, c.Duration = 2*time.Second, 10*time.Second
	c.Sanity.Enabled = false
	c.Sampling = 100 * time.Millisecond // the PID figure's counters read every 100 ms
	c.Agents.Count = 2
	c.Target.Embedded.Config = base
	c.Target.Prometheus = prom.URL
	c.Target.PrometheusCPU = `process_cpu_seconds_total{job="tokex-engine"}`
	c.Target.PrometheusMemory = `process_resident_memory_bytes{job="tokex-engine"}`
	r := localtest.Run(t, context.Background(), c, filepath.Join(t.TempDir(), "c"), localtest.Options{Observe: exp.Consume})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	ended := time.Now()
	run := r.Summary.Stages[0].Runs[0]
	promql, pid := run.EngineCPU, run.EngineCPUSampled
	if promql == nil || promql.Source != sample.SourcePromQL || pid == nil || run.PromQL == nil {
		t.Fatalf("engine %+v, sampled %+v, promql %+v, warnings %v", promql, pid, run.PromQL, run.Warnings)
	}
	for _, w := range run.Warnings {
		if strings.HasPrefix(string(w.Code), "promql_") {
			t.Errorf("data-quality warning on a 1 s scrape of a 10 s run: %s", w)
		}
	}
	diff := (promql.CPUMsPerExchange - pid.CPUMsPerExchange) / pid.CPUMsPerExchange
	t.Logf("engine CPU over the measured window: PromQL %.3f cores, %.4f CPU-ms per exchange (%d samples); PID (%s, %s) %.3f cores, %.4f CPU-ms per exchange; PromQL − PID %+.2f %%",
		promql.AvgCores, promql.CPUMsPerExchange, promql.Samples, pid.Source, pid.Method, pid.AvgCores, pid.CPUMsPerExchange, diff*100)
	for _, q := range run.PromQL.Queries {
		t.Logf("asked %-7s %s", q.Name, q.Query)
	}
	if math.Abs(diff) > 0.05 {
		t.Errorf("PromQL and PID engine figures differ by %+.1f %%, more than 5 %%", diff*100)
	}
	if run.EngineMemoryBytes < 1<<20 {
		t.Errorf("engine memory by PromQL: %d", run.EngineMemoryBytes)
	}
	// tokex's own figures, as Prometheus scraped them.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !srv.WaitScrape(ctx, ended) {
		t.Fatal("Prometheus did not scrape --metrics-addr after the campaign")
	}
	sel := fmt.Sprintf(`{run=%q,phase="measured"}`, run.ID)
	q := "sum(tokex_responses_total" + sel + ") / sum(tokex_window_seconds_total" + sel + ")"
	// The scrape answered after the campaign may not be in Prometheus's
	// head block yet: each query waits up to 5 s for its figure.
	got, ok := prom.await(t, q, func(v float64) bool { return math.Abs(v-run.AchievedRPS)/run.AchievedRPS <= 0.01 })
	t.Logf("achieved rate: Prometheus %s = %.3f/s; the run's %.3f/s (%d responses in %.3f s)", q, got, run.AchievedRPS, run.Responses, run.MeasuredSeconds)
	if !ok || math.Abs(got-run.AchievedRPS)/run.AchievedRPS > 0.01 {
		t.Errorf("Prometheus's achieved rate %.3f/s, the run's %.3f/s", got, run.AchievedRPS)
	}
	if v, ok := prom.await(t, `tokex_run_engine_cpu_ms_per_exchange`+fmt.Sprintf(`{run=%q}`, run.ID), func(v float64) bool { return math.Abs(v-promql.CPUMsPerExchange) <= 1e-9 }); !ok || math.Abs(v-promql.CPUMsPerExchange) > 1e-9 {
		t.Errorf("tokex_run_engine_cpu_ms_per_exchange %v (found %v), want %v", v, ok, promql.CPUMsPerExchange)
	}
}
