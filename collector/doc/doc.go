// Package doc is what tokex says about a campaign, composed once: an
// ordered document of titled sections (tables, lines, lists) built from the
// statistics (collector/stats, collector/summary), and rendered as text for
// the terminal, Markdown for summary.md and HTML for the report.
//
// The renderers know layout (headings, blank lines, escaping), never
// content: what is said, in which order, lives in the builder (Campaign).
// Where the three outputs still say different things, a section or block
// names the media it shows in (In); changing what the document says
// (answer first, warnings grouped by code) is done there, once.
package doc

import (
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/tokex-dev/tokex/collector/table"
)

// Medium is a set of outputs a section or block shows in.
type Medium uint8

const (
	Text     Medium = 1 << iota // the terminal
	Markdown                    // summary.md
	HTML                        // the report
	All      = Text | Markdown | HTML
)

// Document is a title and sections, in order.
type Document struct {
	Title    string
	Sections []Section
}

// Section is a titled part of the document. Brief, when set, follows the
// title in the terminal's one-line heading ("Title — brief": how the
// section's figures were chosen). A Sub section is a level below (### and
// <h3>).
type Section struct {
	ID     string
	Title  string
	Brief  string
	Sub    bool
	In     Medium // 0: All
	Blocks []Block
}

// Kind is what a block holds.
type Kind uint8

const (
	// Para is lines of prose: each on its own line in text, paragraphs in
	// Markdown, one <p> in HTML (of Class "meta": an explanation).
	Para Kind = iota
	// List is items: "  - " in text, "- " in Markdown, <ul> in HTML. An
	// item may fold its details away (Folds).
	List
	// Table is a table.Table; in HTML a Caption heads it (<h3>).
	Table
	// Byline is the line under the HTML title (<div class="meta">).
	Byline
	// Tiles are headline figures (HTML).
	Tiles
	// Figures are charts, already HTML (the report's SVG).
	Figures
	// Slot is what the caller writes in its place (HTML): the report's
	// runs, streamed.
	Slot
	// Footer closes the document: a rule and paragraphs in Markdown,
	// <footer> in HTML.
	Footer
)

// Block is one thing a section shows. Only the fields of its Kind are set.
type Block struct {
	Kind  Kind
	In    Medium // 0: All
	Lines []Line
	// Folds are a List's items' details, item by item (fewer, or an empty
	// one: none): a <details> in the item in HTML, a nested list in
	// Markdown; the terminal leaves them out.
	Folds     []Fold
	Table     *table.Table
	Caption   string
	Tiles     []Tile
	Figures   []template.HTML
	Slot      func(io.Writer) error
	Class, ID string // HTML: of a Para or List
}

// Fold is what a list item folds away: its details, under a summary.
type Fold struct {
	Summary string
	Lines   []Line
}

// Fold is item i's fold, nil when it has none.
func (b *Block) Fold(i int) *Fold {
	if i < len(b.Folds) && len(b.Folds[i].Lines) > 0 {
		return &b.Folds[i]
	}
	return nil
}

// Tile is a headline figure with its tone.
type Tile struct {
	Label, Value string
	Tone         table.Tone
}

// Span is a piece of a line: text from the evidence or the figures (HTML
// escapes it entirely), or, Ours, tokex's own fixed words (HTML escapes
// only what could make markup of them). Strong is emphasised.
type Span struct {
	Text   string
	Ours   bool
	Strong bool
}

// Line is one sentence or item.
type Line []Span

// Say is a line of one span of text.
func Say(s string) Line { return Line{{Text: s}} }

// String is the line's text without emphasis.
func (l Line) String() string {
	var b strings.Builder
	for _, s := range l {
		b.WriteString(s.Text)
	}
	return b.String()
}

func (m Medium) has(x Medium) bool { return m == 0 || m&x != 0 }

// empty reports a block with nothing to show.
func (b *Block) empty() bool {
	switch b.Kind {
	case Table:
		return b.Table == nil
	case Tiles:
		return len(b.Tiles) == 0
	case Figures:
		return len(b.Figures) == 0
	case Slot:
		return b.Slot == nil
	}
	return len(b.Lines) == 0
}

// blocks are the section's blocks shown in m, and whether any has
// something to show.
func (s *Section) blocks(m Medium) ([]*Block, bool) {
	var out []*Block
	full := false
	for i := range s.Blocks {
		if b := &s.Blocks[i]; b.In.has(m) {
			out = append(out, b)
			full = full || !b.empty()
		}
	}
	return out, full
}

// Only is the document with the sections of these IDs alone.
func (d *Document) Only(ids ...string) *Document {
	return d.pick(func(s *Section) bool { return slices.Contains(ids, s.ID) })
}

// Without is the document without the sections of these IDs.
func (d *Document) Without(ids ...string) *Document {
	return d.pick(func(s *Section) bool { return !slices.Contains(ids, s.ID) })
}

func (d *Document) pick(keep func(*Section) bool) *Document {
	out := &Document{Title: d.Title}
	for i := range d.Sections {
		if keep(&d.Sections[i]) {
			out.Sections = append(out.Sections, d.Sections[i])
		}
	}
	return out
}
