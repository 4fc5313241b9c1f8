package k6

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/exchange"
)

// TestScriptNeverFollowsRedirects is issue 9 item 7 for the k6 agent: k6
// follows up to 10 redirects by default, re-sending the Basic secret and a
// fresh subject token.
func TestScriptNeverFollowsRedirects(t *testing.T) {
	t.Parallel()
	js, err := Script(ScriptParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"maxRedirects: 0,", "redirects: 0,"} {
		if !strings.Contains(js, want) {
			t.Errorf("the script lacks %q", want)
		}
	}
}

var (
	outcomeFunc = regexp.MustCompile(`(?s)// outcomeOf:begin\n(.*)// outcomeOf:end`)
	jsCodes     = regexp.MustCompile(`(?s)const REGISTERED_ERRORS = \[(.*?)\];`)
)

// TestScriptDetailsAreRegisteredCodes is issue 9 item 8 for the k6 agent:
// the script printed any printable error code into its per-request line,
// so a hostile target could put the secret into the evidence. Its list of
// codes is exchange.RegisteredErrors, and under node its outcomeOf agrees
// with exchange.Classify.
func TestScriptDetailsAreRegisteredCodes(t *testing.T) {
	t.Parallel()
	js, _ := Script(ScriptParams{})
	m := jsCodes.FindStringSubmatch(js)
	if m == nil {
		t.Fatal("the script has no REGISTERED_ERRORS")
	}
	var codes []string
	if err := json.Unmarshal([]byte("["+strings.ReplaceAll(m[1], "'", `"`)+"]"), &codes); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(codes, exchange.RegisteredErrors) {
		t.Fatalf("script codes %v, want exchange.RegisteredErrors %v", codes, exchange.RegisteredErrors)
	}

	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	f := outcomeFunc.FindStringSubmatch(js)
	if f == nil {
		t.Fatal("the script has no outcomeOf block")
	}
	const secret = "the-secret"
	type in struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	ins := []in{
		{200, `{"access_token":"a","issued_token_type":"t"}`}, {200, `{"access_token":""}`}, {200, `x`},
		{400, `{"error":"invalid_grant"}`}, {400, `{"error":"` + secret + `"}`}, {400, `{"error":"=1+1"}`},
		{400, `{"error":"INVALID_GRANT"}`}, {400, `{"ERROR":"invalid_grant"}`}, {401, `{"error":5}`},
		{400, `{"error":""}`}, {400, `["invalid_grant"]`}, {400, `null`}, {503, `{"error":"server_error"}`},
		{307, `{"error":"invalid_grant"}`}, {302, ``}, {404, `<html>`},
	}
	prog := f[1] + `
const ins = JSON.parse(require('fs').readFileSync(0, 'utf8'));
console.log(JSON.stringify(ins.map(x => {
  let body = null;
  try { body = JSON.parse(x.body); } catch (e) { body = null; }
  const complete = body !== null && typeof body.access_token === 'string' && body.access_token.length > 0 &&
    typeof body.issued_token_type === 'string' && body.issued_token_type.length > 0;
  return outcomeOf(x.status, 0, body, complete, '` + secret + `');
})));
`
	p := filepath.Join(t.TempDir(), "outcome.js")
	_ = os.WriteFile(p, []byte(prog), 0o644)
	b, _ := json.Marshal(ins)
	cmd := exec.Command(node, p)
	cmd.Stdin = strings.NewReader(string(b))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got [][2]string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(ins) {
		t.Fatalf("node output %q: %v", out, err)
	}
	for i, x := range ins {
		o, d := exchange.Classify(x.Status, []byte(x.Body))
		d = exchange.Scrub(d, secret, "")
		if got[i] != [2]string{string(o), d} {
			t.Errorf("%d %s: script %v, Classify %s %q", x.Status, x.Body, got[i], o, d)
		}
	}
}
