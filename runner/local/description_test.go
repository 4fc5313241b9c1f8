package local

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/exchange"
)

// The server's error_description is kept with each failure, sanitised, and
// withheld whenever it echoes the request's secret or subject token; a
// request that got no response carries the transport's error instead.
func TestGeneratorKeepsSanitisedDescriptions(t *testing.T) {
	const secret = "Zq9-long-client-secret"
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		var desc string
		status := 400
		switch n.Add(1) % 5 {
		case 1:
			desc = "client authentication failed\x1b[2J\x1b]0;owned\x07"
		case 2:
			desc = "bad subject_token " + r.PostForm.Get("subject_token")
		case 3:
			desc = "bad credentials " + strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
		case 4:
			status, desc = 401, "secret "+secret+" is wrong"
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token":"","error_description":"never read"}`))
			return
		}
		w.WriteHeader(status)
		b, _ := json.Marshal(map[string]string{"error": "invalid_client", "error_description": desc})
		_, _ = w.Write(b)
	}))
	defer ts.Close()
	g := newGen(t, ts.URL, 1, 10)
	g.Agents[0].Secret = secret
	rec := &recorder{}
	g.Run(context.Background(), event.PlannedRun{ID: "r", TargetRPS: 100, Duration: 100 * time.Millisecond, Agents: 1}, time.Now(), rec.rec)
	seen := map[string]int{}
	for _, r := range rec.rows {
		seen[string(r.Outcome)+"|"+r.Description]++
	}
	want := map[string]int{
		"oauth_error|client authentication failed [2J ]0;owned": 2,
		"oauth_error|" + exchange.Withheld:                      6,
		// tokex's own words for a failed success check, never the body's
		"bad_response|the response has no access_token": 2,
	}
	for k, v := range want {
		if seen[k] != v {
			t.Errorf("%q: %d, want %d (all: %v)", k, seen[k], v, seen)
		}
	}
	for k := range seen {
		if strings.Contains(k, "never read") {
			t.Errorf("a successful response's error_description was kept: %q", k)
		}
	}

	dead := newGen(t, "http://127.0.0.1:1/token", 1, 10)
	rec = &recorder{}
	dead.Run(context.Background(), event.PlannedRun{ID: "r", TargetRPS: 100, Duration: 30 * time.Millisecond, Agents: 1}, time.Now(), rec.rec)
	for _, r := range rec.rows {
		if r.Outcome != "conn_error" || r.Description != "dial tcp 127.0.0.1:1: connect: connection refused" {
			t.Errorf("refused: %+v", r)
		}
	}
}

// A description that echoes the secret encoded (base64 of "id:secret" as
// the server decoded it, upper case, all but its last character) is
// withheld too (issue 25 item 5: these reached manifest.json).
func TestGeneratorWithholdsEncodedSecrets(t *testing.T) {
	const secret = "Zq9/long+client secret"
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, sec, _ := r.BasicAuth()
		sec, _ = url.QueryUnescape(sec) // RFC 6749 §2.3.1: form-encoded in Basic
		desc := map[int32]string{
			0: "unknown credentials " + base64.StdEncoding.EncodeToString([]byte(id+":"+sec)),
			1: "secret " + strings.ToUpper(sec) + " is wrong",
			2: "secret starting " + sec[:len(sec)-1] + " is wrong",
		}[n.Add(1)%3]
		w.WriteHeader(401)
		b, _ := json.Marshal(map[string]string{"error": "invalid_client", "error_description": desc})
		_, _ = w.Write(b)
	}))
	defer ts.Close()
	g := newGen(t, ts.URL, 1, 10)
	g.Agents[0].Secret = secret
	rec := &recorder{}
	g.Run(context.Background(), event.PlannedRun{ID: "r", TargetRPS: 100, Duration: 100 * time.Millisecond, Agents: 1}, time.Now(), rec.rec)
	if len(rec.rows) == 0 {
		t.Fatal("no request")
	}
	for _, r := range rec.rows {
		if r.Outcome != exchange.OutcomeOAuthError || r.Description != exchange.Withheld {
			t.Errorf("%s: description %q kept", r.Outcome, r.Description)
		}
	}
}
