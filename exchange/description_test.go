package exchange

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDescription(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		body   string
		want   string
	}{
		{400, `{"error":"invalid_client","error_description":"client authentication failed"}`, "client authentication failed"},
		{503, `{"error":"temporarily_unavailable","error_description":"try later"}`, "try later"},
		{200, `{"error_description":"eyJhbGciOi…"}`, ""}, // a 200's body is never read for this
		{400, `not json`, ""},
		{401, `{"error":"invalid_client"}`, ""},
	}
	for _, c := range cases {
		if got := Description(c.status, []byte(c.body)); got != c.want {
			t.Errorf("%d %s: %q, want %q", c.status, c.body, got, c.want)
		}
	}
	err := &url.Error{Op: "Post", URL: "http://127.0.0.1:1/token?x=1", Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}
	if got := TransportDescription(err); got != "dial tcp 127.0.0.1:1: connect: connection refused" {
		t.Errorf("transport: %q", got)
	}
}

func TestSanitizeDescription(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-Zq9-long"
	const token = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJwZXJmLXVzZXItMDAxIn0.c2ln"
	cases := []struct {
		name, in, want string
	}{
		{"plain", "client authentication failed", "client authentication failed"},
		{"terminal escapes", "bad\x1b]0;pwned\x07 grant\x1b[2J\r\n\tnow", "bad ]0;pwned grant [2J now"},
		{"unicode kept", "jeton expiré", "jeton expiré"},
		{"invalid utf-8", "a\xffb", "a b"},
		{"the secret", "client secret " + secret + " is wrong", Withheld},
		{"the secret alone", secret, Withheld},
		{"the subject token", "token " + token + " expired", Withheld},
		{"any token", "issued eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ for you", Withheld},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SanitizeDescription(c.in, secret, token); got != c.want {
				t.Errorf("%q: %q, want %q", c.in, got, c.want)
			}
		})
	}
	long := SanitizeDescription(strings.Repeat("é", 10_000))
	if len(long) > MaxDescription || !utf8.ValidString(long) || !strings.HasSuffix(long, "…") {
		t.Errorf("long description: %d bytes %q", len(long), long)
	}
}

func FuzzSanitizeDescription(f *testing.F) {
	f.Add("client authentication failed", "secret")
	f.Add("\x1b[31mred\x1b[0m", "")
	f.Fuzz(func(t *testing.T, s, secret string) {
		got := SanitizeDescription(s, secret)
		if len(got) > MaxDescription || !utf8.ValidString(got) {
			t.Fatalf("%q -> %q", s, got)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("control character in %q", got)
			}
		}
		if secret != "" && got != Withheld && strings.Contains(got, secret) && len(secret) > 1 {
			t.Fatalf("secret %q kept in %q", secret, got)
		}
	})
}

// A request cut short because the campaign stopped the run with a cause
// (the target unreachable) is aborted, not a connection error: net/http
// returns the cause, not context.Canceled.
func TestClassifyErrCancelledWithCause(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("target unreachable: no HTTP response for 10s")
	cancel(cause)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:1/token", nil)
	_, err := http.DefaultClient.Do(req)
	if got := ClassifyErr(ctx, err); got != OutcomeAborted {
		t.Errorf("%v: %s", err, got)
	}
	if got := ClassifyErr(context.Background(), err); got != OutcomeConnError {
		t.Errorf("without a stopped run: %s", got)
	}
}
