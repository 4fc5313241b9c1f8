package local

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/subject"
)

// TestGeneratorSignsAClientAssertionPerRequest: with private_key_jwt every
// request carries the client id and a fresh assertion signed with its
// agent's own key (iss = sub = the client, aud the token endpoint, a jti
// never seen before), and no secret, on tokex's HTTP/1.1 client and on
// net/http's.
func TestGeneratorSignsAClientAssertionPerRequest(t *testing.T) {
	for _, perRequest := range []bool{false, true} {
		var mu sync.Mutex
		var bad []string
		jtis := map[string]bool{}
		keys := map[string]*jose.Key{}
		var target string
		ts := okServer(t, func(r *http.Request, f url.Values) {
			mu.Lock()
			defer mu.Unlock()
			id := f.Get("client_id")
			var c jwt.RegisteredClaims
			_, err := jwt.ParseWithClaims(f.Get("client_assertion"), &c, func(*jwt.Token) (any, error) { return keys[id].Signer.Public(), nil },
				jwt.WithValidMethods([]string{jose.ES256}), jwt.WithAudience(target), jwt.WithIssuer(id), jwt.WithSubject(id))
			switch {
			case err != nil:
				bad = append(bad, id+": "+err.Error())
			case f.Get("client_assertion_type") != exchange.ClientAssertionType || r.Header.Get("Authorization") != "" || f.Has("client_secret"):
				bad = append(bad, "form "+f.Encode())
			case jtis[c.ID]:
				bad = append(bad, "jti repeated "+c.ID)
			}
			jtis[c.ID] = true
		})
		target = ts.URL + "/token"
		g := newGen(t, target, 2, 20)
		g.Body = exchange.Template{Resources: []string{"https://r"}, Auth: exchange.AuthPrivateKeyJWT}.Compile()
		for _, a := range g.Agents {
			k, err := jose.GenerateKey(jose.ES256)
			if err != nil {
				t.Fatal(err)
			}
			keys[a.ClientID] = k
			a.Assertions = &subject.Asserter{Key: k, ClientID: a.ClientID, Audience: target, Lifetime: time.Minute, Prefix: a.ClientID + "-"}
		}
		g.Connect(TransportOptions{Conns: 20, NewConnPerRequest: perRequest})
		rec := &recorder{}
		g.Run(context.Background(), event.PlannedRun{ID: "r", TargetRPS: 40, Duration: 500 * time.Millisecond, Agents: 2}, time.Now(), rec.rec)
		ok := 0
		for _, r := range rec.rows {
			if r.Outcome == exchange.OutcomeOK {
				ok++
			}
		}
		if len(bad) > 0 || ok != 20 || len(jtis) != 20 {
			t.Errorf("connection per request %v: %d ok, %d jtis, refused: %v", perRequest, ok, len(jtis), bad)
		}
	}
}
