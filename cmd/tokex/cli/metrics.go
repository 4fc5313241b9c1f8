package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/junit"
	"github.com/tokex-dev/tokex/collector/promexport"
	"github.com/tokex-dev/tokex/collector/summary"
)

// liveOptions are run's and capacity's outputs for CI and monitoring:
// --metrics-addr (docs/prometheus.md) and --junit.
type liveOptions struct {
	metricsAddr   string
	metricsLinger time.Duration
	junit         string
}

func (l *liveOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&l.metricsAddr, "metrics-addr", "", "serve the campaign's figures for Prometheus (OpenMetrics) at HOST:PORT/metrics while it runs (docs/prometheus.md)")
	f.DurationVar(&l.metricsLinger, "metrics-linger", 15*time.Second, "with --metrics-addr: after the campaign, wait this long at most for a last scrape")
	f.StringVar(&l.junit, "junit", "", "write a JUnit XML file: one test case per threshold per stage, the figures in the message")
}

// exporter serves the bus's figures at --metrics-addr until the returned
// stop is called; stop first waits (at most --metrics-linger) for a scrape
// after the campaign ended, so Prometheus holds its last figures.
func (l *liveOptions) exporter(bus *event.Bus, stderr io.Writer) (stop func(interrupted bool), err error) {
	if l.metricsAddr == "" {
		return func(bool) {}, nil
	}
	e := promexport.New()
	s, err := promexport.Serve(l.metricsAddr, e)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	bus.Subscribe(e.Consume)
	fmt.Fprintf(stderr, "tokex: serving the campaign's figures for Prometheus at http://%s/metrics\n", s.Addr())
	return func(interrupted bool) {
		defer s.Close()
		if interrupted || l.metricsLinger <= 0 {
			return
		}
		ended := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), l.metricsLinger)
		defer cancel()
		if !s.WaitScrape(ctx, ended) {
			fmt.Fprintf(stderr, "tokex: no scrape of --metrics-addr in the %s after the campaign: Prometheus may lack its last figures\n", l.metricsLinger)
		}
	}, nil
}

// writeJUnit writes --junit from the campaign's summary: run's and
// capacity's verdicts as test cases (nothing when the campaign produced no
// summary).
func (l *liveOptions) writeJUnit(sum *summary.Summary, search bool) error {
	if l.junit == "" || sum == nil {
		return nil
	}
	command := "run"
	if search {
		command = "capacity"
	}
	return writeJUnitFile(l.junit, junit.FromSummary(sum, command))
}

func writeJUnitFile(path string, d *junit.Suites) error {
	b, err := d.Marshal()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
