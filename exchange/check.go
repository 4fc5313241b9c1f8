package exchange

import (
	"encoding/json"
	"strconv"
	"strings"
)

// DefaultRequired are the members a successful response must carry as
// non-empty strings (RFC 8693 §2.2.1; the article's checks).
var DefaultRequired = []string{"access_token", "issued_token_type"}

// Check is what makes an HTTP 200 a success: the members it must carry as
// non-empty strings and, when set, its token_type (compared without case,
// RFC 6749 §5.1). The zero Check is the article's.
type Check struct {
	Required  []string
	TokenType string
}

// PlainRequired are the members a plain grant's success must carry (RFC
// 6749 §5.1: no issued_token_type, an RFC 8693 member).
var PlainRequired = []string{"access_token"}

// ForGrant is the check of a grant's responses: the exchange's as
// configured; a plain grant's without issued_token_type unless the
// members were configured.
func (c Check) ForGrant(g Grant) Check {
	if g.Or() != GrantExchange && c.Required == nil {
		c.Required = PlainRequired
	}
	return c
}

// Classify inspects a completed response: Outcome and detail as the
// package's Classify, and for a 200 that fails the check why, in words
// that quote at most the server's token_type.
func (c Check) Classify(status int, body []byte) (Outcome, string, string) {
	if status != 200 {
		o, d := Classify(status, body)
		return o, d, ""
	}
	// validJSON (json.Valid's verdict, without a call per byte) and a
	// look-up of top-level strings stand in for json.Unmarshal, which
	// matters at thousands of responses a second.
	if !validJSON(body) {
		return OutcomeBadResponse, "200", "the response is not JSON"
	}
	req := c.Required
	if req == nil {
		req = DefaultRequired
	}
	for _, k := range req {
		if !nonEmptyString(body, k) {
			return OutcomeBadResponse, "200", "the response has no " + k
		}
	}
	if c.TokenType != "" {
		got, ok := StringMember(body, "token_type")
		if !strings.EqualFold(got, c.TokenType) {
			if !ok {
				return OutcomeBadResponse, "200", "the response has no token_type (want " + c.TokenType + ")"
			}
			return OutcomeBadResponse, "200", "token_type is " + strconv.Quote(got) + ", want " + c.TokenType
		}
	}
	return OutcomeOK, "", ""
}

// StringMember returns the top-level string member key of a valid JSON
// object, read by exact name.
func StringMember(body []byte, key string) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return "", false
	}
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return "", false
	}
	return s, true
}
