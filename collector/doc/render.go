package doc

import (
	"html/template"
	"io"
	"strings"
)

// Text renders the document for the terminal: no title; each section a
// heading line ("Title — Brief"; "Title:" over a list), then its blocks
// line by line; a blank line between sections. A section with nothing to
// show is left out.
func (d *Document) Text() string {
	var parts []string
	for i := range d.Sections {
		s := &d.Sections[i]
		bs, full := s.blocks(Text)
		if !s.In.has(Text) || !full {
			continue
		}
		var b strings.Builder
		if s.Title != "" {
			b.WriteString(s.Title)
			if s.Brief != "" {
				b.WriteString(" — " + s.Brief)
			}
			if firstFull(bs).Kind == List {
				b.WriteString(":")
			}
			b.WriteString("\n")
		}
		for _, bl := range bs {
			switch bl.Kind {
			case Para, Footer:
				for _, l := range bl.Lines {
					b.WriteString(l.String() + "\n")
				}
			case List:
				for _, l := range bl.Lines {
					b.WriteString("  - " + l.String() + "\n")
				}
			case Table:
				if bl.Table != nil {
					b.WriteString(bl.Table.Text())
				}
			}
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "\n")
}

func firstFull(bs []*Block) *Block {
	for _, b := range bs {
		if !b.empty() {
			return b
		}
	}
	return &Block{}
}

// Markdown renders the document as GitHub Markdown: the title as "#",
// sections as "##" ("###" a Sub one), blocks a blank line apart. A section
// with nothing to show is left out.
func (d *Document) Markdown() string {
	var b strings.Builder
	if d.Title != "" {
		b.WriteString("# " + d.Title + "\n")
	}
	for i := range d.Sections {
		s := &d.Sections[i]
		bs, full := s.blocks(Markdown)
		if !s.In.has(Markdown) || !full {
			continue
		}
		b.WriteString("\n")
		if s.Title != "" {
			level := "## "
			if s.Sub {
				level = "### "
			}
			b.WriteString(level + s.Title + "\n\n")
		}
		var parts []string
		for _, bl := range bs {
			if !bl.empty() {
				parts = append(parts, markdownBlock(bl))
			}
		}
		b.WriteString(strings.Join(parts, "\n"))
	}
	return b.String()
}

func markdownBlock(bl *Block) string {
	var b strings.Builder
	switch bl.Kind {
	case Para:
		b.WriteString(markdownLines(bl.Lines, "\n\n") + "\n")
	case Footer:
		b.WriteString("---\n" + markdownLines(bl.Lines, "\n\n") + "\n")
	case List:
		for i, l := range bl.Lines {
			b.WriteString("- " + markdownLine(l) + "\n")
			if f := bl.Fold(i); f != nil {
				for _, d := range f.Lines {
					b.WriteString("  - " + markdownLine(d) + "\n")
				}
			}
		}
	case Table:
		b.WriteString(bl.Table.Markdown())
	}
	return b.String()
}

func markdownLines(ls []Line, sep string) string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = markdownLine(l)
	}
	return strings.Join(out, sep)
}

func markdownLine(l Line) string {
	var b strings.Builder
	for _, s := range l {
		if s.Strong {
			b.WriteString("**" + s.Text + "**")
		} else {
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

var htmlBlocks = template.Must(template.New("doc").Funcs(template.FuncMap{"ours": ours}).Parse(
	`{{define "line"}}{{range .}}{{if .Strong}}<strong>{{end}}{{if .Ours}}{{ours .Text}}{{else}}{{.Text}}{{end}}{{if .Strong}}</strong>{{end}}{{end}}{{end}}` +
		`{{define "lines"}}{{range $i, $l := .}}{{if $i}} {{end}}{{template "line" $l}}{{end}}{{end}}` +
		`{{define "title"}}<h1>{{.}}</h1>{{end}}` +
		`{{define "h2"}}<h2>{{.}}</h2>{{end}}` +
		`{{define "h3"}}<h3>{{.}}</h3>{{end}}` +
		`{{define "para"}}<p{{with .Class}} class="{{.}}"{{end}}{{with .ID}} id="{{.}}"{{end}}>{{template "lines" .Lines}}</p>{{end}}` +
		`{{define "list"}}<ul{{with .Class}} class="{{.}}"{{end}}{{with .ID}} id="{{.}}"{{end}}>{{range $i, $l := .Lines}}<li>{{template "line" $l}}` +
		`{{with $.Fold $i}}<details><summary>{{.Summary}}</summary><ul>{{range .Lines}}<li>{{template "line" .}}</li>{{end}}</ul></details>{{end}}</li>{{end}}</ul>{{end}}` +
		`{{define "byline"}}<div class="meta">{{template "lines" .Lines}}</div>{{end}}` +
		`{{define "tiles"}}<div class="tiles" id="tiles">` + "\n" +
		`{{range .Tiles}}<div class="tile"><div class="label">{{.Label}}</div><div class="value {{.Tone.Class}}">{{.Value}}</div></div>` + "\n" +
		`{{end}}</div>{{end}}` +
		`{{define "table"}}{{with .Caption}}<h3>{{.}}</h3>` + "\n" + `{{end}}{{.Table.HTML}}{{end}}` +
		`{{define "footer"}}<footer>{{template "lines" .Lines}}</footer>{{end}}`))

// ours escapes tokex's own words for an HTML text node: what could make
// markup of them, and nothing else.
func ours(s string) template.HTML {
	return template.HTML(strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s))
}

var htmlKinds = map[Kind]string{Para: "para", List: "list", Table: "table", Byline: "byline", Tiles: "tiles", Footer: "footer"}

// HTML writes the document as the report's body: the title as <h1>, then
// each section after a blank line (the first after none): its heading,
// then each block as an element on a line of its own — one with nothing
// to show as an empty line (a list as an empty list), figures one a line,
// a slot as its writer writes it. A section with nothing to show is one
// empty line.
func (d *Document) HTML(w io.Writer) error {
	h := htmlWriter{w: w}
	if d.Title != "" {
		h.exec("title", d.Title)
		h.nl()
	}
	first := true
	for i := range d.Sections {
		s := &d.Sections[i]
		if !s.In.has(HTML) {
			continue
		}
		if !first {
			h.nl()
		}
		first = false
		bs, full := s.blocks(HTML)
		if !full {
			h.nl()
			continue
		}
		if s.Title != "" {
			level := "h2"
			if s.Sub {
				level = "h3"
			}
			h.exec(level, s.Title)
			h.nl()
		}
		for _, b := range bs {
			h.block(b)
		}
	}
	return h.err
}

type htmlWriter struct {
	w   io.Writer
	err error
}

func (h *htmlWriter) exec(name string, data any) {
	if h.err == nil {
		h.err = htmlBlocks.ExecuteTemplate(h.w, name, data)
	}
}

func (h *htmlWriter) write(s string) {
	if h.err == nil {
		_, h.err = io.WriteString(h.w, s)
	}
}

func (h *htmlWriter) nl() { h.write("\n") }

func (h *htmlWriter) block(b *Block) {
	switch {
	case b.Kind == Figures:
		for _, f := range b.Figures {
			h.write(string(f) + "\n")
		}
		return
	case b.Kind == Slot:
		if b.Slot != nil && h.err == nil {
			h.err = b.Slot(h.w)
		}
		return
	case b.Kind == List || !b.empty(): // a list is drawn also empty
		h.exec(htmlKinds[b.Kind], b)
	}
	h.nl()
}
