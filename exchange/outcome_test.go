package exchange

import (
	"strconv"
	"testing"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		body   string
		want   Outcome
		detail string
	}{
		{200, `{"access_token":"a","issued_token_type":"t","token_type":"Bearer"}`, OutcomeOK, ""},
		{200, ` { "issued_token_type" : "t" , "access_token" : "a" } `, OutcomeOK, ""},
		{200, `{"access_token":"","issued_token_type":"t"}`, OutcomeBadResponse, "200"},
		{200, `{"x":{"access_token":"a"},"issued_token_type":"t"}`, OutcomeBadResponse, "200"},
		{200, `{"access_token":"a\"b","issued_token_type":"t"}`, OutcomeOK, ""},
		{200, `{"access_token":1,"issued_token_type":"t"}`, OutcomeBadResponse, "200"},
		{200, `{"access_token":"a","issued_token_type":"t"`, OutcomeBadResponse, "200"},
		{200, `not json`, OutcomeBadResponse, "200"},
		{400, `{"error":"invalid_grant","error_description":"x"}`, OutcomeOAuthError, "invalid_grant"},
		{401, `{"error":"bad,code\n"}`, OutcomeOAuthError, DetailOther},
		{503, ``, OutcomeHTTPError, "503"},
		// Issue 9 item 8: the target chooses the error code, so only
		// registered codes are kept.
		{400, `{"error":"s3cr3t-client-secret"}`, OutcomeOAuthError, DetailOther},
		{400, `{"error":"=HYPERLINK(\"http://x\",\"y\")"}`, OutcomeOAuthError, DetailOther},
		{400, `{"error":"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"}`, OutcomeOAuthError, DetailOther},
		{400, `{"error":"invalid_target"}`, OutcomeOAuthError, ErrInvalidTarget},
		{401, `{"error":"invalid_token"}`, OutcomeOAuthError, "invalid_token"},
		{400, `{"error":"INVALID_GRANT"}`, OutcomeOAuthError, DetailOther},
		{400, `{"ERROR":"invalid_grant"}`, OutcomeHTTPError, "400"},
		{400, `{"error":null}`, OutcomeHTTPError, "400"},
		{400, `{"error":5}`, OutcomeHTTPError, "400"},
		{400, `["invalid_grant"]`, OutcomeHTTPError, "400"},
		{503, `{"error":"temporarily_unavailable"}`, OutcomeHTTPError, "503"},
		// Item 7: a redirect is never followed; it is an answer.
		{307, `{"error":"invalid_grant"}`, OutcomeHTTPError, "307"},
		{302, ``, OutcomeHTTPError, "302"},
	}
	for _, c := range cases {
		got, detail := Classify(c.status, []byte(c.body))
		if got != c.want || detail != c.detail {
			t.Errorf("Classify(%d, %s) = %s %q, want %s %q", c.status, c.body, got, detail, c.want, c.detail)
		}
	}
}

func FuzzClassify(f *testing.F) {
	f.Add(200, []byte(`{"access_token":"a","issued_token_type":"t"}`))
	f.Add(400, []byte(`{"error":"x"}`))
	f.Add(400, []byte(`{"error":"=1+1"}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		o, d := Classify(status, body)
		if o == OutcomeOK && status != 200 {
			t.Fatal("ok without 200")
		}
		if SafeDetail(d) != d {
			t.Fatalf("detail %q is outside the vocabulary", d)
		}
		for i := 0; i < len(d); i++ {
			if d[i] == ',' || d[i] == '\n' {
				t.Fatalf("detail %q would break a CSV row", d)
			}
		}
	})
}

func TestSafeDetail(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"", ""}, {"invalid_grant", "invalid_grant"}, {"other", "other"}, {"503", "503"}, {"1050", "1050"},
		{"0", "0"}, {"12345", DetailOther}, {"-1", DetailOther}, {"=1+1", DetailOther}, {"+1", DetailOther},
		{"@SUM(A1)", DetailOther}, {"\t=1", DetailOther}, {"a,b\nc", DetailOther}, {"Invalid_Grant", DetailOther},
	}
	for _, c := range cases {
		if got := SafeDetail(c.in); got != c.want {
			t.Errorf("SafeDetail(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestScrub(t *testing.T) {
	t.Parallel()
	const secret, tok = "invalid_grant", "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.sig"
	cases := []struct{ in, want string }{
		{"invalid_grant", DetailOther}, // a secret that happens to be a code is still never stored
		{"invalid_request", "invalid_request"},
		{"x" + tok + "y", DetailOther},
		{"", ""},
	}
	for _, c := range cases {
		if got := Scrub(c.in, secret, tok); got != c.want {
			t.Errorf("Scrub(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDetailSetIsBounded(t *testing.T) {
	t.Parallel()
	var s DetailSet
	out := map[string]bool{}
	for i := 0; i < 10000; i++ {
		out[s.Admit(strconv.Itoa(i%5000))] = true
	}
	if len(out) != MaxDetails || !out[DetailOther] {
		t.Fatalf("%d distinct details (other: %v), want %d", len(out), out[DetailOther], MaxDetails)
	}
	if s.Admit("7") != "7" {
		t.Error("an admitted detail was refused later")
	}
}

// TestOutcomeSpellings pins the bytes evidence files hold for each outcome
// (requests.csv.gz, the error keys of summary.json and events.jsonl): the
// type may change, its spellings may not.
func TestOutcomeSpellings(t *testing.T) {
	t.Parallel()
	for o, want := range map[Outcome]string{
		OutcomeOK: "ok", OutcomeDropped: "dropped", OutcomeOAuthError: "oauth_error", OutcomeHTTPError: "http_error",
		OutcomeBadResponse: "bad_response", OutcomeTimeout: "timeout", OutcomeConnError: "conn_error", OutcomeAborted: "aborted",
	} {
		if string(o) != want {
			t.Errorf("outcome %q, want %q", o, want)
		}
	}
}
