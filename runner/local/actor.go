package local

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokex-dev/tokex/exchange"
)

// actorFetch gets a fresh actor token for a client and when it expires.
type actorFetch func(ctx context.Context, clientID string) (tok string, exp time.Time, err error)

// actorCache keeps each client's actor token (subject.actor): the agent's
// workload identity, got once and sent with every exchange until it is
// within refresh of its expiry, when one request starts getting the next
// in the background while the others go on with the current one. A
// workload identity is cached like this in production; the server still
// verifies it on every exchange.
type actorCache struct {
	fetch   actorFetch
	refresh time.Duration
	now     func() time.Time
	mu      sync.Mutex
	entries map[string]*actorEntry
	// fetches counts the tokens got, failures the fetches that failed.
	fetches, failures atomic.Int64
	lastErr           atomic.Pointer[string]
	wg                sync.WaitGroup
}

type actorEntry struct {
	tok      atomic.Pointer[string]
	exp      atomic.Int64 // unix µs
	fetching atomic.Bool
}

func newActorCache(fetch actorFetch, refresh time.Duration) *actorCache {
	return &actorCache{fetch: fetch, refresh: refresh, now: time.Now, entries: map[string]*actorEntry{}}
}

func (c *actorCache) entry(id string) *actorEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[id]
	if e == nil {
		e = &actorEntry{}
		c.entries[id] = e
	}
	return e
}

// warm gets every client's token before a run, so that none of its
// measured requests waits for one; it returns the first failure.
func (c *actorCache) warm(ctx context.Context, ids []string) error {
	for _, id := range ids {
		e := c.entry(id)
		if t := e.tok.Load(); t != nil && c.now().Add(c.refresh).UnixMicro() < e.exp.Load() {
			continue
		}
		if err := c.get(ctx, id, e); err != nil {
			return fmt.Errorf("actor token of %s: %w", id, err)
		}
	}
	return nil
}

// token is id's current actor token ("" before any could be got); near
// its expiry it starts getting the next.
func (c *actorCache) token(ctx context.Context, id string) string {
	e := c.entry(id)
	t := e.tok.Load()
	if t == nil || c.now().Add(c.refresh).UnixMicro() >= e.exp.Load() {
		if e.fetching.CompareAndSwap(false, true) {
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				defer e.fetching.Store(false)
				fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
				defer cancel()
				_ = c.get(fctx, id, e)
			}()
		}
	}
	if t == nil {
		return ""
	}
	return *t
}

func (c *actorCache) get(ctx context.Context, id string, e *actorEntry) error {
	tok, exp, err := c.fetch(ctx, id)
	if err != nil {
		c.failures.Add(1)
		msg := err.Error()
		c.lastErr.Store(&msg)
		return err
	}
	c.fetches.Add(1)
	e.tok.Store(&tok)
	e.exp.Store(exp.UnixMicro())
	return nil
}

// wait returns once no refresh is under way.
func (c *actorCache) wait() { c.wg.Wait() }

// mintedActors mints each client's actor token with the actor key.
func mintedActors(m TokenSource, lifetime time.Duration) actorFetch {
	return func(_ context.Context, id string) (string, time.Time, error) {
		t0 := time.Now()
		tok, err := m.Mint(id)
		// iat is whole seconds: the token lives from t0 truncated.
		return tok, t0.Truncate(time.Second).Add(lifetime), err
	}
}

// credentialsActors gets each client's own client_credentials token from
// the target: the same request a client_credentials arrival sends, as that
// client, with the agents' secret.
func credentialsActors(hc *http.Client, url string, body exchange.Body, secret func() string) actorFetch {
	return func(ctx context.Context, id string) (string, time.Time, error) {
		t0 := time.Now()
		form := body.Form("", id, secret())
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(form))
		if err != nil {
			return "", t0, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		if body.Auth() == exchange.AuthBasic {
			req.Header.Set("Authorization", exchange.BasicAuth(id, secret()))
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", t0, fmt.Errorf("client_credentials request: %s", exchange.TransportDescription(err))
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
		if err != nil {
			return "", t0, fmt.Errorf("client_credentials response: %s", exchange.TransportDescription(err))
		}
		out, detail, why := exchange.Check{}.ForGrant(exchange.GrantClientCredentials).Classify(resp.StatusCode, b)
		if out != exchange.OutcomeOK {
			if why == "" {
				why = exchange.Description(resp.StatusCode, b)
			}
			return "", t0, fmt.Errorf("client_credentials refused: %s %s (%s)", out, exchange.Scrub(detail, secret()),
				exchange.NewSecretFilter(secret()).Sanitize(why))
		}
		tok, _ := exchange.AccessToken(b)
		var meta struct {
			ExpiresIn float64 `json:"expires_in"`
		}
		_ = json.Unmarshal(b, &meta)
		life := time.Duration(meta.ExpiresIn * float64(time.Second))
		if life <= 0 || life > 24*time.Hour {
			life = 5 * time.Minute // no expires_in: the server's default is unknown; RFC 9068 tokens of tokex's live 5 m
		}
		return tok, t0.Add(life), nil
	}
}
