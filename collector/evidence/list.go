package evidence

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/table"
	"github.com/tokex-dev/tokex/internal/termsafe"
)

// Listing is one campaign found under an evidence parent folder: what
// `tokex ls` and the campaign picker show of it.
type Listing struct {
	Dir                      string
	ID, Name, Driver, Status string
	Reason                   string
	Started                  time.Time
	Stages                   []ListedStage
	Runs, Done               int    // counted runs planned, finished
	Verdict                  string // "passed", "failed", or "" without summary.json
	Report                   string // report.html's path when there is one
	SummaryErr               string // why summary.json could not be read, when it exists
}

// ListedStage is one stage of a listed campaign: its rate and, once a run
// of it finished, the reported run's p95.
type ListedStage struct {
	TargetRPS float64
	P95Ms     float64
	Reported  bool
}

// MaxListed bounds the folders List reads under one parent.
const MaxListed = 1000

// List reads every evidence folder directly under parent, newest first.
// Folders that are not evidence (or links) are skipped and counted; at most
// MaxListed folders are read.
func List(parent string) (out []Listing, skipped int, err error) {
	d, err := os.Open(parent)
	if err != nil {
		return nil, 0, err
	}
	defer d.Close()
	entries, err := d.ReadDir(4 * MaxListed)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	for _, e := range entries {
		if !e.IsDir() || len(out) >= MaxListed {
			skipped++
			continue
		}
		l, err := listOne(filepath.Join(parent, e.Name()))
		if err != nil {
			skipped++
			continue
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b Listing) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out, skipped, nil
}

func listOne(dir string) (Listing, error) {
	f, err := Open(dir)
	if err != nil {
		return Listing{}, err
	}
	defer f.Close()
	m := f.Manifest
	l := Listing{Dir: dir, ID: m.CampaignID, Name: m.Name, Driver: m.Driver, Status: string(m.Status), Reason: m.Reason, Started: m.Started}
	for _, r := range m.Runs {
		if r.Plan.Sanity {
			continue
		}
		l.Runs++
		if r.Status == "done" {
			l.Done++
		}
		if !slices.ContainsFunc(l.Stages, func(s ListedStage) bool { return s.TargetRPS == r.Plan.TargetRPS }) {
			l.Stages = append(l.Stages, ListedStage{TargetRPS: r.Plan.TargetRPS})
		}
	}
	if s, err := f.Summary(); err == nil {
		l.Verdict = "failed"
		if s.ThresholdsPassed {
			l.Verdict = "passed"
		}
		for _, st := range s.Stages {
			i := slices.IndexFunc(l.Stages, func(x ListedStage) bool { return x.TargetRPS == st.TargetRPS })
			if i < 0 {
				continue
			}
			if rep := st.Reported(); rep != nil && rep.Requests > 0 {
				l.Stages[i].P95Ms, l.Stages[i].Reported = rep.LatencyMs.P95, true
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		l.SummaryErr = err.Error()
	}
	if fi, err := os.Lstat(filepath.Join(dir, "report.html")); err == nil && fi.Mode().IsRegular() {
		l.Report = filepath.Join(dir, "report.html")
	}
	return l, nil
}

// ListTable is `tokex ls` without a terminal: one row per campaign.
func ListTable(ls []Listing) table.Table {
	t := table.New("Campaign", "Started (UTC)", "Status", "Stages", "p95 (ms)", "Runs", "Verdict", "Folder")
	for _, c := range [...]int{2, 3, 4, 6, 7} {
		t.Columns[c].Align = table.Left
	}
	for _, l := range ls {
		var rates, p95s []string
		for _, s := range l.Stages {
			rates = append(rates, stats.StageLabel(s.TargetRPS))
			p := "—"
			if s.Reported {
				p = fmt.Sprintf("%.2f", s.P95Ms)
			}
			p95s = append(p95s, p)
		}
		verdict, tone := "—", table.Plain
		switch l.Verdict {
		case "passed":
			verdict, tone = "✓ passed", table.Good
		case "failed":
			verdict, tone = "✗ failed", table.Bad
		}
		t.AddTone(tone, termsafe.Text(l.Name), l.Started.UTC().Format("2006-01-02 15:04"), termsafe.Text(l.Status), strings.Join(rates, " "),
			strings.Join(p95s, " "), fmt.Sprintf("%d/%d", l.Done, l.Runs), verdict, termsafe.Text(l.Dir))
	}
	return t
}
