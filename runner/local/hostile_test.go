package local

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/exchange"
)

// TestGeneratorNeverFollowsRedirects is issue 9 item 7: a 307 from the
// target made the generator re-send the Basic secret to another port of the
// same host, and with client_secret_post the secret in the body to any
// host, with fresh subject tokens. A 3xx is an answer: http_error with the
// status, and the other listener receives nothing.
func TestGeneratorNeverFollowsRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"x","issued_token_type":"y"}`))
	}))
	defer other.Close()
	for _, auth := range []exchange.AuthMethod{exchange.AuthBasic, exchange.AuthPost} {
		for _, status := range []int{301, 302, 303, 307, 308} {
			t.Run(fmt.Sprintf("%s/%d", auth, status), func(t *testing.T) {
				target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, other.URL+"/as/token.oauth2", status)
				}))
				defer target.Close()
				g := newGen(t, target.URL, 1, 5)
				g.Body = exchange.Template{Resources: []string{"https://r"}, Scope: "s", Auth: auth}.Compile()
				rec := &recorder{}
				g.Run(context.Background(), event.PlannedRun{ID: "r", TargetRPS: 50, Duration: 100 * time.Millisecond, Agents: 1}, time.Now(), rec.rec)
				if len(rec.rows) != 5 {
					t.Fatalf("%d rows", len(rec.rows))
				}
				for _, r := range rec.rows {
					if r.Outcome != exchange.OutcomeHTTPError || r.Detail != fmt.Sprint(status) || r.Status != status {
						t.Fatalf("row %+v, want http_error %d", r, status)
					}
				}
				if n := elsewhere.Load(); n != 0 {
					t.Fatalf("the redirect target received %d requests", n)
				}
			})
		}
	}
}

// TestGeneratorEvidenceHoldsNoTargetText is issue 9 item 8: a hostile
// target answering {"error":"<the client secret>"} (or a subject token, or
// a formula, or endless distinct codes) wrote that text into the detail
// column. Only registered codes survive; the rest is "other", and a run
// holds at most exchange.MaxDetails distinct details.
func TestGeneratorEvidenceHoldsNoTargetText(t *testing.T) {
	var n atomic.Int64
	var mu sync.Mutex
	var tokens []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		tok := r.PostForm.Get("subject_token")
		mu.Lock()
		tokens = append(tokens, tok)
		mu.Unlock()
		var code string
		switch i := n.Add(1); i % 6 {
		case 0:
			code = "sec" // the agents' secret (newGen)
		case 1:
			code = "x" + tok
		case 2:
			code = `=HYPERLINK("http://evil","click")`
		case 3:
			code = "invalid_grant"
		default:
			code = fmt.Sprintf("code_%d", i) // endless distinct codes
		}
		w.WriteHeader(400)
		_, _ = fmt.Fprintf(w, `{"error":%q}`, code)
	}))
	defer ts.Close()
	g := newGen(t, ts.URL, 2, 10)
	rec := &recorder{}
	g.Run(context.Background(), event.PlannedRun{ID: "r", TargetRPS: 400, Duration: 600 * time.Millisecond, Agents: 2}, time.Now(), rec.rec)
	if len(rec.rows) != 240 {
		t.Fatalf("%d rows", len(rec.rows))
	}
	var csv strings.Builder
	distinct := map[string]int{}
	for i := range rec.rows {
		r := &rec.rows[i]
		distinct[r.Detail]++
		csv.Write(evidence.AppendRequest(nil, r))
	}
	if distinct["invalid_grant"] == 0 || distinct[exchange.DetailOther] == 0 {
		t.Errorf("details %v", distinct)
	}
	if len(distinct) > exchange.MaxDetails {
		t.Errorf("%d distinct details, more than %d", len(distinct), exchange.MaxDetails)
	}
	out := csv.String()
	for _, bad := range []string{",sec\n", "HYPERLINK", "=", "code_"} {
		if strings.Contains(out, bad) {
			t.Errorf("evidence holds %q", bad)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, tok := range tokens {
		if len(tok) > 16 && strings.Contains(out, tok[len(tok)-16:]) {
			t.Fatal("evidence holds a subject token")
		}
	}
}
