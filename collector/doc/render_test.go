package doc

import (
	"bytes"
	"html/template"
	"io"
	"testing"

	"github.com/tokex-dev/tokex/collector/table"
)

// TestRenderers holds the three renderers to their layout rules on one
// document: media, empty sections and blocks, headings, emphasis, and
// HTML escaping (the evidence's text entirely, tokex's own words only
// where they could make markup).
func TestRenderers(t *testing.T) {
	t.Parallel()
	tiny := table.New("k", "v")
	tiny.Add("a", "1")
	d := &Document{Title: "T <1>", Sections: []Section{
		{ID: "a", Title: "Alpha", Brief: "how", Blocks: []Block{
			{Kind: Para, Lines: []Line{Say("one"), {{Text: "two "}, {Text: "bold", Strong: true}}}}, {Kind: Table, Table: &tiny}}},
		{ID: "e", Title: "Empty", Blocks: []Block{{Kind: List}}},
		{ID: "b", Title: "Beta", Sub: true, Blocks: []Block{
			{Kind: List, Lines: []Line{Say("x <y>"), Say("z'+&")}, Folds: []Fold{{Summary: "2 <more>", Lines: []Line{Say("x1"), Say("x<2>")}}}},
			{Kind: Para, In: HTML, Class: "meta", Lines: []Line{{{Text: "k6's <b> ", Ours: true}, {Text: "data's"}}}}}},
		{ID: "h", In: HTML, Title: "Web", Blocks: []Block{
			{Kind: Figures, Figures: []template.HTML{"<svg/>"}}, {Kind: Para}, {Kind: List, ID: "l"},
			{Kind: Slot, Slot: func(w io.Writer) error { _, err := io.WriteString(w, "SLOT\n"); return err }}}},
		{ID: "f", Blocks: []Block{{Kind: Footer, Lines: []Line{Say("d1"), Say("d2")}}}},
	}}
	wantText := "Alpha — how\none\ntwo bold\n" + tiny.Text() +
		"\nBeta:\n  - x <y>\n  - z'+&\n" + // no fold in the terminal
		"\nd1\nd2\n"
	if got := d.Text(); got != wantText {
		t.Errorf("text:\n%q\nwant\n%q", got, wantText)
	}
	wantMD := "# T <1>\n" +
		"\n## Alpha\n\none\n\ntwo **bold**\n\n" + tiny.Markdown() +
		"\n### Beta\n\n- x <y>\n  - x1\n  - x<2>\n- z'+&\n" +
		"\n---\nd1\n\nd2\n"
	if got := d.Markdown(); got != wantMD {
		t.Errorf("markdown:\n%q\nwant\n%q", got, wantMD)
	}
	wantHTML := "<h1>T &lt;1&gt;</h1>\n" +
		"<h2>Alpha</h2>\n<p>one two <strong>bold</strong></p>\n" + string(tiny.HTML()) + "\n" +
		"\n\n" +
		"\n<h3>Beta</h3>\n<ul><li>x &lt;y&gt;<details><summary>2 &lt;more&gt;</summary><ul><li>x1</li><li>x&lt;2&gt;</li></ul></details></li><li>z&#39;&#43;&amp;</li></ul>\n<p class=\"meta\">k6's &lt;b&gt; data&#39;s</p>\n" +
		"\n<h2>Web</h2>\n<svg/>\n\n<ul id=\"l\"></ul>\nSLOT\n" +
		"\n<footer>d1 d2</footer>\n"
	var b bytes.Buffer
	if err := d.HTML(&b); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != wantHTML {
		t.Errorf("html:\n%q\nwant\n%q", got, wantHTML)
	}
	if got, want := d.Only("b", "e").Text(), "Beta:\n  - x <y>\n  - z'+&\n"; got != want {
		t.Errorf("only b: %q", got)
	}
	if got, want := d.Without("a", "b").Markdown(), "# T <1>\n\n---\nd1\n\nd2\n"; got != want {
		t.Errorf("without a and b: %q", got)
	}
}
