package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/units"
	"github.com/tokex-dev/tokex/internal/termsafe"
)

// Picker lists the campaigns under an evidence folder (`tokex ls`, `tokex
// replay` without a folder): a bubbles list with filtering; Enter picks one
// to replay, o its report.
type Picker struct {
	list   list.Model
	keys   pickerKeys
	choice PickerChoice
}

// PickerChoice is what the user picked: nothing (Dir empty), a campaign to
// replay, or its report.
type PickerChoice struct {
	Dir    string
	Report bool
}

type pickerKeys struct{ Replay, Report key.Binding }

// campaignItem is one campaign in the list.
type campaignItem struct{ l evidence.Listing }

func (c campaignItem) Title() string {
	l := c.l
	name := termsafe.Text(l.Name)
	if name == "" {
		name = termsafe.Text(l.ID)
	}
	state := termsafe.Text(l.Status)
	if l.Verdict != "" {
		state += ", thresholds " + l.Verdict
	}
	return fmt.Sprintf("%s  ·  %s UTC  ·  %s", name, l.Started.UTC().Format("2006-01-02 15:04"), state)
}

func (c campaignItem) Description() string {
	l := c.l
	rates, p95s := l.StageCells(ms)
	d := fmt.Sprintf("%s  ·  p95 %s ms  ·  %d/%s", rates, p95s, l.Done, units.Count(l.Runs, "run"))
	if l.Verdict == "" {
		d += "  ·  no summary"
	}
	return d + "  ·  " + termsafe.Text(l.Dir)
}

// FilterValue is what the filter matches: the campaign's id (its date and
// name), status and verdict.
func (c campaignItem) FilterValue() string {
	l := c.l
	return termsafe.Text(strings.Join([]string{l.ID, l.Status, l.Verdict}, " "))
}

// NewPicker lists campaigns found under parent (skipped: folders that are
// not evidence).
func NewPicker(parent string, ls []evidence.Listing, skipped int) *Picker {
	items := make([]list.Item, len(ls))
	for i, l := range ls {
		items[i] = campaignItem{l}
	}
	keys := pickerKeys{
		Replay: key.NewBinding(key.WithKeys("enter"), key.WithHelp("⏎", "replay")),
		Report: key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "report path")),
	}
	l := list.New(items, list.NewDefaultDelegate(), 0, 0)
	l.Title = "Campaigns in " + termsafe.Text(parent)
	if skipped > 0 {
		l.Title += fmt.Sprintf(" (%d other folder%s skipped)", skipped, plural(skipped))
	}
	l.SetStatusBarItemName("campaign", "campaigns")
	l.AdditionalShortHelpKeys = func() []key.Binding { return []key.Binding{keys.Replay, keys.Report} }
	l.AdditionalFullHelpKeys = l.AdditionalShortHelpKeys
	return &Picker{list: l, keys: keys}
}

// Choice is what the user picked once the picker quit.
func (p *Picker) Choice() PickerChoice { return p.choice }

// Init implements tea.Model.
func (p *Picker) Init() tea.Cmd { return nil }

// Update implements tea.Model.
func (p *Picker) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		p.list.SetSize(msg.Width, msg.Height)
	case tea.KeyMsg:
		if p.list.FilterState() == list.Filtering {
			break // typing a filter: every key is text
		}
		item, ok := p.list.SelectedItem().(campaignItem)
		switch {
		case ok && key.Matches(msg, p.keys.Replay):
			p.choice = PickerChoice{Dir: item.l.Dir}
			return p, tea.Quit
		case ok && key.Matches(msg, p.keys.Report):
			p.choice = PickerChoice{Dir: item.l.Dir, Report: true}
			return p, tea.Quit
		}
	}
	var cmd tea.Cmd
	p.list, cmd = p.list.Update(msg)
	return p, cmd
}

// View implements tea.Model.
func (p *Picker) View() string {
	if w, h := p.list.Width(), p.list.Height(); w > 0 && (w < MinWidth || h < MinHeight) {
		return tooSmall(w, h)
	}
	return p.list.View()
}
