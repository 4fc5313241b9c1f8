package table

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func sample() Table {
	t := New("Stage", "p95", "Runs")
	t.ID = "lat"
	t.Add("100/s", "7.5 ms", "✓ 3/3 passed")
	t.AddTone(Bad, "2500/s", "<b>&", "✗ 1/3 failed")
	return t
}

func TestText(t *testing.T) {
	t.Parallel()
	want := "" +
		"Stage      p95          Runs\n" +
		"──────  ──────  ────────────\n" +
		"100/s   7.5 ms  ✓ 3/3 passed\n" +
		"2500/s    <b>&  ✗ 1/3 failed\n"
	if got := sample().Text(); got != want {
		t.Errorf("Text:\n%s\nwant:\n%s", got, want)
	}
}

func TestMarkdown(t *testing.T) {
	t.Parallel()
	want := "| Stage | p95 | Runs |\n|---|---|---|\n| 100/s | 7.5 ms | ✓ 3/3 passed |\n| 2500/s | <b>& | ✗ 1/3 failed |\n"
	if got := sample().Markdown(); got != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", got, want)
	}
}

func TestHTMLEscapesAndTones(t *testing.T) {
	t.Parallel()
	want := `<table id="lat"><thead><tr><th>Stage</th><th>p95</th><th>Runs</th></tr></thead>` + "\n" +
		`<tbody><tr><td>100/s</td><td>7.5 ms</td><td>✓ 3/3 passed</td></tr>` +
		`<tr class="bad"><td>2500/s</td><td>&lt;b&gt;&amp;</td><td>✗ 1/3 failed</td></tr></tbody></table>`
	if got := string(sample().HTML()); got != want {
		t.Errorf("HTML:\n%s\nwant:\n%s", got, want)
	}
}

func TestLeftAlignedColumnAndShortRow(t *testing.T) {
	t.Parallel()
	tb := New("a", "b", "c")
	tb.Columns[1].Align = Left
	tb.Add("x", "y", "zzz")
	tb.Add("xx") // a short row leaves the rest empty
	w := tb.Widths(utf8.RuneCountInString)
	if got := tb.Line(tb.Rows[0].Cells, w, "|", utf8.RuneCountInString); got != "x |y|zzz" {
		t.Errorf("line %q", got)
	}
	if got := tb.Line(tb.Rows[1].Cells, w, "|", utf8.RuneCountInString); got != "xx" {
		t.Errorf("short row %q", got)
	}
}

func TestFitDropsLowestFirstUntilItFits(t *testing.T) {
	t.Parallel()
	tb := New("Stage", "wide-one", "mid", "Verdict")
	tb.Columns[1].Drop, tb.Columns[2].Drop = 2, 1
	tb.Add("100/s", "1234567890", "12345", "✓")
	width := utf8.RuneCountInString
	for _, c := range []struct {
		max  int
		want string
	}{
		{100, "Stage wide-one mid Verdict"},
		{len("100/s  1234567890  12345  Verdict"), "Stage wide-one mid Verdict"},
		{len("100/s  1234567890  Verdict"), "Stage wide-one Verdict"}, // "mid" (Drop 1) goes first
		{len("100/s  1234567890  Verdict") - 1, "Stage Verdict"},
		{1, "Stage Verdict"}, // nothing more may go
	} {
		got := tb.Fit(c.max, "  ", width)
		if h := strings.Join(got.Header(), " "); h != c.want {
			t.Errorf("Fit(%d) kept %q, want %q", c.max, h, c.want)
		}
		for _, r := range got.Rows {
			if len(r.Cells) != len(got.Columns) {
				t.Errorf("Fit(%d): row %v for columns %v", c.max, r.Cells, got.Header())
			}
		}
	}
	if len(tb.Columns) != 4 || len(tb.Rows[0].Cells) != 4 {
		t.Error("Fit changed the table it was given")
	}
}

// TestToneInCellsClassesAndLines: a Toned column carries the row's tone in
// its cells (not the row), Class classes the table and a column's cells,
// and a cell's lines are broken in HTML, joined by "; " in text and Markdown.
func TestToneInCellsClassesAndLines(t *testing.T) {
	t.Parallel()
	tb := New("error", "count", "said", "verdict")
	tb.Class = "errors"
	tb.Columns[2].Class, tb.Columns[3].Toned = "desc", true
	tb.AddTone(Bad, "oauth_error", "12", "a <b>\nsecond", "✗")
	tb.AddTone(Good, "http_error", "1", "", "✓")
	want := `<table class="errors"><thead><tr><th>error</th><th>count</th><th>said</th><th>verdict</th></tr></thead>` + "\n" +
		`<tbody><tr><td>oauth_error</td><td>12</td><td class="desc">a &lt;b&gt;<br>second</td><td class="bad">✗</td></tr>` +
		`<tr><td>http_error</td><td>1</td><td class="desc"></td><td class="good">✓</td></tr></tbody></table>`
	if got := string(tb.HTML()); got != want {
		t.Errorf("HTML:\n%s\nwant:\n%s", got, want)
	}
	if md := tb.Markdown(); !strings.Contains(md, "| oauth_error | 12 | a <b>; second | ✗ |\n") {
		t.Errorf("Markdown:\n%s", md)
	}
	if txt := tb.Text(); !strings.Contains(txt, "a <b>; second") || strings.Count(txt, "\n") != 4 {
		t.Errorf("Text:\n%s", txt)
	}
}
