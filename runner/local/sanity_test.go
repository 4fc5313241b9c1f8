package local_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/runner"
)

// A sanity run that fails names the most common error and what the server
// said about it (error_description, sanitised), here and in the run's
// stats.json; a description that echoes the client secret is withheld.
func TestSanityFailureSaysWhatTheServerSaid(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pass, _ := r.BasicAuth()
		desc := "client authentication failed\x1b[2J"
		if n.Add(1)%4 == 0 {
			desc = "expected another secret than " + pass
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client", "error_description": desc})
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	c := tinyCampaign()
	c.Target.URL = "http://" + ln.Addr().String() + "/as/token.oauth2"
	c.Sanity.Rate = 40
	dir := filepath.Join(t.TempDir(), "sanity")
	r := runCampaign(t, context.Background(), c, dir, nil, nil, nil)
	// Every answer refuses the clients: the sanity run stops after 20
	// (issue 23) with what the server said first.
	if !errors.Is(r.err, runner.ErrSanity) || !strings.Contains(r.err.Error(), `stopped after the first 20 responses, every one oauth_error:invalid_client (`) ||
		!strings.Contains(r.err.Error(), `client authentication failed [2J")`) && !strings.Contains(r.err.Error(), `"[withheld: it contained request material]")`) {
		t.Fatalf("err = %v", r.err)
	}
	f, err := evidence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.RunStats("00-sanity")
	if err != nil || len(st.TopErrors) != 1 || len(st.TopErrors[0].Descriptions) != 2 || st.TopErrors[0].Count < 20 ||
		st.TopErrors[0].Descriptions[0].Text != "client authentication failed [2J" ||
		st.TopErrors[0].Descriptions[1].Text != "[withheld: it contained request material]" ||
		st.TopErrors[0].Descriptions[0].Count+st.TopErrors[0].Descriptions[1].Count != st.TopErrors[0].Count {
		t.Fatalf("sanity stats.json top errors: %+v (%v)", st.TopErrors, err)
	}
	assertNoSecret(t, dir, secret)
}
