package evidence

import (
	"cmp"
	"encoding/json"
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
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/table"
	"github.com/tokex-dev/tokex/collector/units"
	"github.com/tokex-dev/tokex/internal/safefs"
	"github.com/tokex-dev/tokex/internal/termsafe"
)

// Listing is one campaign found under an evidence parent folder: what
// `tokex ls` and the campaign picker show of it. Its strings are bounded
// as they are read (ListNameMax, ListWordMax, ListReasonMax).
type Listing struct {
	Dir                      string
	ID, Name, Driver, Status string
	Reason                   string
	Started                  time.Time
	Stages                   []ListedStage // at most MaxListedStages
	MoreStages               bool          // the plan has more stages
	Runs, Done               int           // counted runs planned, finished
	Verdict                  string        // "passed", "failed", or "" without summary.json
	Report                   string        // report.html's path when there is one
	SummaryErr               string        // why summary.json could not be read, when it exists
}

// ListedStage is one stage of a listed campaign: its rate and, once a run
// of it finished, the reported run's p95.
type ListedStage struct {
	TargetRPS float64
	Replicas  int // the engine count (campaigns over engine counts)
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

// What List keeps of a campaign's strings, whatever its files hold: a
// manifest may be 16 MiB, a summary 32 MiB, and a hostile one holds a
// single string that long.
const (
	ListNameMax   = 64  // characters of the name (the config's limit)
	ListWordMax   = 32  // characters of the status and the driver
	ListReasonMax = 256 // characters of the reason and of SummaryErr
	// MaxListedStages bounds the stages listed; MoreStages says there were more.
	MaxListedStages = 32
	// listStringMax bounds a string literal as read (escapes included),
	// before the cuts above.
	listStringMax = 1024
)

// listManifest is what List reads of manifest.json.
type listManifest struct {
	SchemaVersion int                    `json:"schema_version"`
	CampaignID    string                 `json:"campaign_id"`
	Name          string                 `json:"name"`
	Driver        string                 `json:"driver"`
	Status        summary.CampaignStatus `json:"status"`
	Reason        string                 `json:"reason"`
	Started       time.Time              `json:"started"`
	Runs          []struct {
		ID   string `json:"id"`
		Plan struct {
			Sanity    bool    `json:"sanity"`
			TargetRPS float64 `json:"target_rps"`
			Replicas  int     `json:"replicas"`
		} `json:"plan"`
		Status stats.RunStatus `json:"status"`
	} `json:"runs"`
}

// listSummary is what List reads of summary.json.
type listSummary struct {
	ThresholdsPassed bool `json:"thresholds_passed"`
	Stages           []*struct {
		TargetRPS   float64 `json:"target_rps"`
		Replicas    int     `json:"replicas"`
		ReportedRun string  `json:"reported_run"`
		Runs        []*struct {
			ID        string `json:"id"`
			Requests  int64  `json:"requests"`
			LatencyMs struct {
				P95 float64 `json:"p95"`
			} `json:"latency_ms"`
		} `json:"runs"`
	} `json:"stages"`
	Sanity *struct {
		ID string `json:"id"`
	} `json:"sanity"`
}

// decodeShort decodes the JSON file name of d into v with every string
// cut to listStringMax bytes as it is read (shortStrings): memory is the
// document without its long strings, never the file.
func decodeShort(d *safefs.Dir, name string, max int64, v any) error {
	fh, err := d.Open(name)
	if err != nil {
		return err
	}
	defer fh.Close()
	lr := &io.LimitedReader{R: fh, N: max + 1}
	dec := json.NewDecoder(newShortStrings(lr, listStringMax))
	err = dec.Decode(v)
	if err == nil {
		if _, end := dec.Token(); end != io.EOF {
			err = errors.New("data after the document")
		}
	}
	if lr.N <= 0 { // the whole file is refused, as safefs.ReadFile does
		err = fmt.Errorf("%w: larger than %d bytes", safefs.ErrRefused, max)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", d.Join(name), err)
	}
	return nil
}

// listOne reads what the listing shows of the folder dir, with the checks
// Open makes (ids, runs, schema), streaming its manifest and summary.
func listOne(dir string) (Listing, error) {
	d, err := safefs.Open(dir)
	if err != nil {
		return Listing{}, err
	}
	defer d.Close()
	var m listManifest
	if err := decodeShort(d, ManifestFile, maxManifestBytes, &m); err != nil {
		return Listing{}, err
	}
	if m.CampaignID == "" {
		return Listing{}, fmt.Errorf("%s: %w (%s is unreadable)", dir, errNotEvidence, ManifestFile)
	}
	if m.SchemaVersion > stats.SchemaVersion {
		return Listing{}, fmt.Errorf("%s: written by a newer tokex (schema %d > %d)", dir, m.SchemaVersion, stats.SchemaVersion)
	}
	ids := Manifest{CampaignID: m.CampaignID, Runs: make([]RunEntry, len(m.Runs))}
	for i, r := range m.Runs {
		ids.Runs[i].ID = r.ID
	}
	if err := ids.check(); err != nil {
		return Listing{}, fmt.Errorf("%s: %s: %w", dir, ManifestFile, err)
	}
	l := Listing{Dir: dir, ID: m.CampaignID, Name: cutText(m.Name, ListNameMax), Driver: cutText(m.Driver, ListWordMax),
		Status: cutText(string(m.Status), ListWordMax), Reason: cutText(m.Reason, ListReasonMax), Started: m.Started}
	for _, r := range m.Runs {
		if r.Plan.Sanity {
			continue
		}
		l.Runs++
		if r.Status == stats.StatusDone {
			l.Done++
		}
		switch {
		case slices.ContainsFunc(l.Stages, func(s ListedStage) bool { return s.TargetRPS == r.Plan.TargetRPS && s.Replicas == r.Plan.Replicas }):
		case len(l.Stages) < MaxListedStages:
			l.Stages = append(l.Stages, ListedStage{TargetRPS: r.Plan.TargetRPS, Replicas: r.Plan.Replicas})
		default:
			l.MoreStages = true
		}
	}
	l.summary(d)
	if fi, err := os.Lstat(filepath.Join(dir, "report.html")); err == nil && fi.Mode().IsRegular() {
		l.Report = filepath.Join(dir, "report.html")
	}
	return l, nil
}

// summary adds the verdict and the reported p95s of summary.json, with the
// checks Folder.Summary makes.
func (l *Listing) summary(d *safefs.Dir) {
	var s listSummary
	err := decodeShort(d, SummaryJSON, maxSummaryBytes, &s)
	if err == nil {
		err = checkListSummary(&s)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		l.SummaryErr = cutText(err.Error(), ListReasonMax)
		return
	}
	l.Verdict = "failed"
	if s.ThresholdsPassed {
		l.Verdict = "passed"
	}
	for _, st := range s.Stages {
		if st == nil { // null entries are dropped, as checkSummary does
			continue
		}
		i := slices.IndexFunc(l.Stages, func(x ListedStage) bool { return x.TargetRPS == st.TargetRPS && x.Replicas == st.Replicas })
		if i < 0 {
			continue
		}
		for _, r := range st.Runs {
			if r != nil && r.ID == st.ReportedRun { // the first, as Stage.Reported
				if r.Requests > 0 {
					l.Stages[i].P95Ms, l.Stages[i].Reported = r.LatencyMs.P95, true
				}
				break
			}
		}
	}
}

// checkListSummary is checkSummary for the listing's view of a summary.
func checkListSummary(s *listSummary) error {
	n := 0
	for _, st := range s.Stages {
		if st == nil {
			continue
		}
		for _, r := range st.Runs {
			if r == nil {
				continue
			}
			if err := CheckID(r.ID); err != nil {
				return err
			}
		}
		if st.ReportedRun != "" {
			if err := CheckID(st.ReportedRun); err != nil {
				return err
			}
		}
		n += len(st.Runs) + 1
	}
	if s.Sanity != nil {
		if err := CheckID(s.Sanity.ID); err != nil {
			return err
		}
	}
	if n > 2*stats.MaxRuns {
		return fmt.Errorf("refused: more than %d runs", stats.MaxRuns)
	}
	return nil
}

// cutText keeps the first n characters of s, ending a cut one in "…".
func cutText(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + ellipsis
		}
		i++
	}
	return s
}

// ListTable is `tokex ls` without a terminal: one row per campaign.
func ListTable(ls []Listing) table.Table {
	t := table.New("Campaign", "Started (UTC)", "Status", "Stages", "p95 (ms)", "Runs", "Verdict", "Folder")
	for _, c := range [...]int{2, 3, 4, 6, 7} {
		t.Columns[c].Align = table.Left
	}
	for _, l := range ls {
		rates, p95s := l.StageCells(func(ms float64) string { return fmt.Sprintf("%.2f", ms) })
		verdict, tone := "—", table.Plain
		switch l.Verdict {
		case "passed":
			verdict, tone = "✓ passed", table.Good
		case "failed":
			verdict, tone = "✗ failed", table.Bad
		}
		t.AddTone(tone, termsafe.Text(l.Name), l.Started.UTC().Format("2006-01-02 15:04"), termsafe.Text(l.Status), rates,
			p95s, fmt.Sprintf("%d/%d", l.Done, l.Runs), verdict, termsafe.Text(l.Dir))
	}
	return t
}

// MaxStageCell bounds the stages cell and the p95s cell (characters).
const MaxStageCell = 48

// StageCells are the listing's stage rates and their reported p95s
// (formatted by p95, "—" when none), each cut to MaxStageCell characters.
func (l Listing) StageCells(p95 func(ms float64) string) (rates, p95s string) {
	var rs, ps []string
	for _, s := range l.Stages {
		r := units.StageLabel(s.TargetRPS)
		if s.Replicas > 0 { // "100/s@2": at 2 engines, as tokex compare DIR@2
			r += fmt.Sprintf("@%d", s.Replicas)
		}
		rs = append(rs, r)
		p := "—"
		if s.Reported {
			p = p95(s.P95Ms)
		}
		ps = append(ps, p)
	}
	if l.MoreStages {
		rs, ps = append(rs, ellipsis), append(ps, ellipsis)
	}
	return cutText(strings.Join(rs, " "), MaxStageCell), cutText(strings.Join(ps, " "), MaxStageCell)
}
