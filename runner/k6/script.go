package k6

import (
	"bytes"
	_ "embed"
	"math"
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
// iteration mints a fresh subject token (RS256 or ES256, by SUBJECT_ALG)
// with WebCrypto, exchanges it
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
// tokex4,<agent>,<phase>,<slot>,<scheduled_us>,<send_lag_us>,<duration_us>,<status>,<outcome>,<detail>,<start_lag_us>,<mint_us>,<began>,<kind>,<hop>,<token_bytes>
// (slot and scheduled: the arrival slot of the iteration's begin time;
// start lag: scheduled → k6 began the iteration; mint: minting the subject
// token; began: the iterations k6 had begun in the scenario before this
// one; kind, hop and token_bytes as in requests.csv.gz: a chain's hop k
// after the first is due, its scheduled time, when hop k−1's response was
// read, with no start lag or minting). Lines of the earlier versions end at
// began (tokex3), mint (tokex2) or detail (tokex1).
const LinePrefix = "tokex4,"

const (
	linePrefixV3 = "tokex3,"
	linePrefixV2 = "tokex2,"
	linePrefixV1 = "tokex1,"
)

// Slot mirrors the agent script's slotOf: the arrival slot of an iteration
// that began at nowMS in a scenario that started at startMS (JavaScript's
// millisecond clocks, both truncated), periodMS apart. It is the latest
// arrival the iteration can serve, and the right one while k6 begins
// iterations less than periodMS − 2 ms late; a stalled k6 fires its backlog
// late, in a burst (lib/executor/constant_arrival_rate.go), so tokex derives
// the arrival from the iterations begun (Line.Began) and k6's drop count.
func Slot(startMS, nowMS int64, periodMS float64) int64 {
	return max(0, int64(math.Floor(float64(nowMS-startMS+1)/periodMS)))
}
