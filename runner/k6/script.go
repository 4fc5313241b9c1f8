package k6

import (
	"bytes"
	_ "embed"
	"text/template"
)

//go:embed exchange.js.tmpl
var scriptTemplate string

var script = template.Must(template.New("k6").Delims("[[", "]]").Parse(scriptTemplate))

// ScriptParams are fixed into the generated script; everything per agent or
// secret comes from the environment at run time.
type ScriptParams struct {
	MaxVUs int
}

// Script renders the k6 agent script: the article's agent, exactly. Every
// iteration mints a fresh RS256 subject token with WebCrypto, exchanges it
// once with client_secret_basic, runs the three checks, and prints one
// compact line (LinePrefix …) that tokex turns into a request row; k6's own
// end-of-test summary follows and is reconciled with those lines. No token
// or secret is ever printed.
func Script(p ScriptParams) (string, error) {
	if p.MaxVUs <= 0 {
		p.MaxVUs = 100
	}
	var b bytes.Buffer
	err := script.Execute(&b, p)
	return b.String(), err
}

// LinePrefix starts every per-request line of the agent script:
// tokex1,<agent>,<phase>,<iteration>,<scheduled_us>,<send_lag_us>,<duration_us>,<status>,<outcome>,<detail>
const LinePrefix = "tokex1,"
