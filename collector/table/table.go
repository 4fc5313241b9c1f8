// Package table is the one table model of tokex's figures: columns with an
// alignment, rows of cells with a tone, computed once from the statistics
// (collector/stats builds them) and rendered here as aligned text, GitHub
// Markdown and HTML, and by the dashboard (tui) with its own styles.
package table

import (
	"bytes"
	"html/template"
	"slices"
	"strings"
	"unicode/utf8"
)

// Align is where a cell sits in its column when padded.
type Align uint8

const (
	Left Align = iota
	Right
)

// Tone is how a row reads: neutral, passed, failed or to be read with care.
// Renderers that have colour (the TUI, HTML) show it; text and Markdown say
// it in the cells themselves (✓, ✗, ⚠).
type Tone uint8

const (
	Plain Tone = iota
	Good
	Bad
	Warn
)

// Class is the tone's CSS class in the HTML report ("" for Plain).
func (t Tone) Class() string {
	return [...]string{"", "good", "bad", "warn"}[t]
}

// Column is a header with its alignment. Drop > 0 marks a column a narrow
// renderer may leave out, lowest Drop first. In HTML, Class is the class of
// the column's cells, and a Toned column shows its row's tone in its cells
// alone (a verdict) instead of on the whole row.
type Column struct {
	Name  string
	Align Align
	Drop  int
	Class string
	Toned bool
}

// Row is one line of cells, in column order.
type Row struct {
	Cells []string
	Tone  Tone
}

// Table is columns and rows; ID names it in HTML, Class classes it. A cell
// may hold several lines: HTML breaks them (<br>), text and Markdown join
// them with "; ".
type Table struct {
	ID      string
	Class   string
	Columns []Column
	Rows    []Row
}

// New returns a table of the named columns, the first left-aligned and the
// others right-aligned (labels, then figures).
func New(names ...string) Table {
	t := Table{Columns: make([]Column, len(names))}
	for i, n := range names {
		t.Columns[i] = Column{Name: n, Align: Right}
	}
	if len(names) > 0 {
		t.Columns[0].Align = Left
	}
	return t
}

// Add appends a plain row.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, Row{Cells: cells}) }

// AddTone appends a row with a tone.
func (t *Table) AddTone(tone Tone, cells ...string) {
	t.Rows = append(t.Rows, Row{Cells: cells, Tone: tone})
}

// Header is the column names.
func (t Table) Header() []string {
	h := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		h[i] = c.Name
	}
	return h
}

// Widths is each column's width, header included, as measured by width.
func (t Table) Widths(width func(string) int) []int {
	w := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		w[i] = width(c.Name)
	}
	for _, r := range t.Rows {
		for i, c := range r.Cells {
			if i < len(w) {
				w[i] = max(w[i], width(c))
			}
		}
	}
	return w
}

// Line lays cells out in columns of widths w, sep between them; cells
// beyond the columns are left out.
func (t Table) Line(cells []string, w []int, sep string, width func(string) int) string {
	var b strings.Builder
	for i, c := range cells {
		if i >= len(w) {
			break
		}
		if i > 0 {
			b.WriteString(sep)
		}
		pad := strings.Repeat(" ", max(0, w[i]-width(c)))
		if t.Columns[i].Align == Right {
			b.WriteString(pad + c)
		} else {
			b.WriteString(c + pad)
		}
	}
	return b.String()
}

// Fit leaves out droppable columns, lowest Drop first, until the table is
// at most max cells wide with sep between columns.
func (t Table) Fit(maxWidth int, sep string, width func(string) int) Table {
	for {
		w := t.Widths(width)
		total := len(sep) * max(0, len(w)-1)
		for _, n := range w {
			total += n
		}
		drop := -1
		for i, c := range t.Columns {
			if c.Drop > 0 && (drop < 0 || c.Drop < t.Columns[drop].Drop) {
				drop = i
			}
		}
		if total <= maxWidth || drop < 0 {
			return t
		}
		t = t.without(drop)
	}
}

// without returns a copy of t without column i.
func (t Table) without(i int) Table {
	out := Table{ID: t.ID, Class: t.Class, Columns: make([]Column, 0, len(t.Columns)-1)}
	out.Columns = append(append(out.Columns, t.Columns[:i]...), t.Columns[i+1:]...)
	for _, r := range t.Rows {
		cells := make([]string, 0, len(r.Cells))
		for j, c := range r.Cells {
			if j != i {
				cells = append(cells, c)
			}
		}
		out.Rows = append(out.Rows, Row{Cells: cells, Tone: r.Tone})
	}
	return out
}

// Text renders aligned columns two spaces apart under a ─ rule.
func (t Table) Text() string {
	w := t.Widths(utf8.RuneCountInString)
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString(t.Line(cells, w, "  ", utf8.RuneCountInString) + "\n")
	}
	line(t.Header())
	rule := make([]string, len(w))
	for i, n := range w {
		rule[i] = strings.Repeat("─", n)
	}
	line(rule)
	for _, r := range t.Rows {
		line(flat(r.Cells))
	}
	return b.String()
}

// flat joins each cell's lines with "; " for the one-line renderers.
func flat(cells []string) []string {
	if !slices.ContainsFunc(cells, func(c string) bool { return strings.Contains(c, "\n") }) {
		return cells
	}
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.ReplaceAll(c, "\n", "; ")
	}
	return out
}

// Markdown renders a GitHub Markdown table.
func (t Table) Markdown() string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(t.Header(), " | ") + " |\n|")
	for range t.Columns {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("| " + strings.Join(flat(r.Cells), " | ") + " |\n")
	}
	return b.String()
}

var html = template.Must(template.New("table").Parse(`<table{{with .ID}} id="{{.}}"{{end}}{{with .Class}} class="{{.}}"{{end}}><thead><tr>` +
	`{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>` + "\n" +
	`<tbody>{{range .Rows}}<tr{{with .Class}} class="{{.}}"{{end}}>` +
	`{{range .Cells}}<td{{with .Class}} class="{{.}}"{{end}}>{{range $i, $l := .Lines}}{{if $i}}<br>{{end}}{{$l}}{{end}}</td>{{end}}` +
	`</tr>{{end}}</tbody></table>`))

// htmlView is a table as the HTML template draws it: classes resolved,
// cells split into lines.
type htmlView struct {
	ID, Class string
	Header    []string
	Rows      []htmlRow
}

type htmlRow struct {
	Class string
	Cells []htmlCell
}

type htmlCell struct {
	Class string
	Lines []string
}

// view resolves where each row's tone shows: on the row, or in the cells
// of its Toned columns.
func (t Table) view() htmlView {
	v := htmlView{ID: t.ID, Class: t.Class, Header: t.Header()}
	toned := slices.ContainsFunc(t.Columns, func(c Column) bool { return c.Toned })
	for _, r := range t.Rows {
		hr := htmlRow{Cells: make([]htmlCell, len(r.Cells))}
		if !toned {
			hr.Class = r.Tone.Class()
		}
		for i, c := range r.Cells {
			hr.Cells[i].Lines = strings.Split(c, "\n")
			if i < len(t.Columns) {
				col := t.Columns[i]
				hr.Cells[i].Class = col.Class
				if col.Toned {
					hr.Cells[i].Class = strings.TrimSpace(col.Class + " " + r.Tone.Class())
				}
			}
		}
		v.Rows = append(v.Rows, hr)
	}
	return v
}

// HTML renders an HTML table, every cell escaped.
func (t Table) HTML() template.HTML {
	var b bytes.Buffer
	if err := html.Execute(&b, t.view()); err != nil {
		panic(err) // the template is fixed and a Table always fits it
	}
	return template.HTML(b.String())
}
