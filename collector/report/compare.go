package report

import (
	"bytes"
	"html/template"
	"strings"

	"github.com/tokex-dev/tokex/collector/compare"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/collector/table"
)

// style is the report's stylesheet, shared by the comparison page.
var style = template.HTML(pageTemplate[strings.Index(pageTemplate, "<style>") : strings.Index(pageTemplate, "</style>")+len("</style>")])

var comparePage = template.Must(template.New("compare").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>tokex · {{.R.A}} vs {{.R.B}}</title>
{{.Style}}</head><body>
<h1>tokex: {{.R.A}} (A) vs {{.R.B}} (B)</h1>
{{if .R.Cost}}<p id="cost">{{.R.Cost.Line}}</p>{{end}}
{{range .Curve}}{{.}}
{{end}}
<h2>Stage by stage</h2>
<p class="meta">Reported runs; noise = the largest spread between the rounds of the stage in A or B.</p>
{{.Table.HTML}}
<footer>Every figure is computed from the two evidence folders' summary.json.</footer>
</body></html>
`))

// Compare renders two campaigns' comparison as HTML: their cost curves
// overlaid (A in blues, B in oranges), the marginal-cost difference with its
// interval and the stage-by-stage table.
func Compare(a, b *summary.Summary, r *compare.Result) ([]byte, error) {
	v := struct {
		R     *compare.Result
		Style template.HTML
		Curve []template.HTML
		Table table.Table
	}{R: r, Style: style, Table: r.Table(),
		Curve: CurveCharts(Campaign{Name: "A", S: a, Classes: [4]string{"s5", "s1", "s6", "s1"}},
			Campaign{Name: "B", S: b, Classes: [4]string{"s7", "s2", "s4", "s2"}})}
	v.Table.ID = "compare"
	var buf bytes.Buffer
	if err := comparePage.Execute(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
