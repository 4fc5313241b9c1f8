package authserver

import (
	"errors"
	"net/url"
	"strings"

	"github.com/tokex-dev/tokex/exchange"
)

// maxFastFormParams is the most parameters parseForm reads itself; a body
// with more goes to url.ParseQuery (and its GODEBUG limit).
const maxFastFormParams = 64

var errFormSemicolon = errors.New("invalid semicolon separator in query")

// formCache is what a server knows of form values before any request: the
// values of the protocol's URNs and of the clients' resources and scopes,
// by their escaped form (read without unescaping them again), and which
// resources are absolute URIs without fragment.
type formCache struct {
	unescaped   map[string]string
	absoluteURI map[string]bool
}

func newFormCache(clients map[string]*client) *formCache {
	fc := &formCache{unescaped: map[string]string{}, absoluteURI: map[string]bool{}}
	add := func(v string) {
		if e := url.QueryEscape(v); e != v {
			fc.unescaped[e] = v
		}
	}
	for _, v := range []string{exchange.GrantTypeTokenExchange, exchange.TokenTypeAccessToken, exchange.TokenTypeJWT, exchange.ClientAssertionType} {
		add(v)
	}
	for _, cl := range clients {
		for r := range cl.resources {
			add(r)
			fc.absoluteURI[r] = absoluteURI(r)
		}
		for sc := range cl.scopes {
			add(sc)
		}
	}
	return fc
}

// absoluteURI is RFC 8707 §2's rule for a resource: an absolute URI without
// a fragment.
func absoluteURI(res string) bool {
	u, err := url.Parse(res)
	return err == nil && u.IsAbs() && u.Fragment == ""
}

// unescape is url.QueryUnescape, without a copy for a known value.
func (fc *formCache) unescape(s string) (string, error) {
	if v, ok := fc.unescaped[s]; ok {
		return v, nil
	}
	return url.QueryUnescape(s)
}

// parseForm is url.ParseQuery (the same values, an error for the same
// bodies) with one allocation for all single values instead of one each.
func (fc *formCache) parseForm(body string) (url.Values, error) {
	n := strings.Count(body, "&") + 1
	if n > maxFastFormParams {
		return url.ParseQuery(body)
	}
	m := make(url.Values, n)
	vals := make([]string, 0, n)
	var err error
	for body != "" {
		var pair string
		pair, body, _ = strings.Cut(body, "&")
		if strings.Contains(pair, ";") {
			err = errFormSemicolon
			continue
		}
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err1 := url.QueryUnescape(k)
		if err1 == nil {
			v, err1 = fc.unescape(v)
		}
		if err1 != nil {
			err = err1
			continue
		}
		if old, ok := m[key]; ok {
			m[key] = append(old, v) // old is full: this copies
			continue
		}
		vals = append(vals, v)
		m[key] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	return m, err
}
