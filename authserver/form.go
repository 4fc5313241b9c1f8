package authserver

import (
	"errors"
	"net/url"
	"strings"
)

// maxFastFormParams is the most parameters parseForm reads itself; a body
// with more goes to url.ParseQuery (and its GODEBUG limit).
const maxFastFormParams = 64

var errFormSemicolon = errors.New("invalid semicolon separator in query")

// parseForm is url.ParseQuery (the same values, an error for the same
// bodies) with one allocation for all single values instead of one each.
func parseForm(body string) (url.Values, error) {
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
			v, err1 = url.QueryUnescape(v)
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
