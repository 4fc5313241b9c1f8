package exchange

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Outcome classifies one exchange attempt. "ok" is the only success: HTTP 200
// that passes the Check (by default a non-empty access_token and
// issued_token_type, as the article's checks).
type Outcome string

const (
	OutcomeOK          Outcome = "ok"
	OutcomeDropped     Outcome = "dropped"      // arrival found the in-flight cap full; never sent
	OutcomeOAuthError  Outcome = "oauth_error"  // 4xx with an OAuth error body
	OutcomeHTTPError   Outcome = "http_error"   // any other non-200 status
	OutcomeBadResponse Outcome = "bad_response" // 200 without the required fields
	OutcomeTimeout     Outcome = "timeout"
	OutcomeConnError   Outcome = "conn_error"
	OutcomeAborted     Outcome = "aborted" // cancelled by the campaign stopping
)

// Classify inspects a completed response. It returns the outcome and a short
// detail that never contains token material: for an OAuth error its code if
// registered (else DetailOther), otherwise the HTTP status. A 3xx is an
// http_error: redirects are never followed (NoRedirect).
func Classify(status int, body []byte) (Outcome, string) {
	if status == 200 {
		o, d, _ := Check{}.Classify(status, body)
		return o, d
	}
	if status >= 400 && status < 500 {
		// By exact name: a struct would also take "ERROR" or "Error".
		var m map[string]json.RawMessage
		var code string
		if json.Unmarshal(body, &m) == nil && json.Unmarshal(m["error"], &code) == nil && code != "" {
			return OutcomeOAuthError, ErrorCode(code)
		}
	}
	return OutcomeHTTPError, strconv.Itoa(status)
}

// ClassifyErr maps a transport error to an outcome.
func ClassifyErr(ctx context.Context, err error) Outcome {
	// Cancelled with a cause, net/http returns the cause.
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.Cause(ctx))) {
		return OutcomeAborted
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return OutcomeTimeout
	}
	return OutcomeConnError
}

// RegisteredErrors are the error codes a token endpoint answers: RFC 6749
// §5.2, RFC 8693 §2.2.2 (invalid_target, also RFC 8707), RFC 6749 §4.1.2.1's
// server_error and temporarily_unavailable (used by token endpoints too),
// RFC 6750 §3.1, RFC 7009 §2.2.1, and RFC 9449 §12 (DPoP). A detail is one of
// them, DetailOther, or a number: a hostile target cannot write anything else
// (a secret, a token, a spreadsheet formula) into the evidence.
var RegisteredErrors = []string{
	ErrInvalidRequest, ErrInvalidClient, ErrInvalidGrant, ErrUnauthorizedClient,
	ErrUnsupportedGrantType, ErrInvalidScope, ErrInvalidTarget, ErrServerError,
	ErrTemporarilyUnavail, "access_denied", "invalid_token", "insufficient_scope",
	"unsupported_token_type", "invalid_dpop_proof", "use_dpop_nonce",
}

// DetailOther stands for an error code that is not registered.
const DetailOther = "other"

// MaxDetails bounds the distinct details recorded in one run (DetailSet).
const MaxDetails = 64

// ErrorCode maps a server's error code to a detail: itself if registered,
// else DetailOther.
func ErrorCode(code string) string {
	for _, c := range RegisteredErrors {
		if code == c {
			return c
		}
	}
	return DetailOther
}

// SafeDetail is the last check before a detail is stored: a registered
// code, DetailOther, or 1–4 digits (an HTTP status, a k6 error code) pass;
// anything else becomes DetailOther.
func SafeDetail(d string) string {
	if d == "" || d == DetailOther {
		return d
	}
	if len(d) <= 4 {
		digits := true
		for i := 0; i < len(d); i++ {
			digits = digits && d[i] >= '0' && d[i] <= '9'
		}
		if digits {
			return d
		}
	}
	return ErrorCode(d)
}

// Scrub refuses a detail equal to the client secret or containing a token
// the request carried (the subject token, the client assertion): none can
// ever be stored.
func Scrub(detail, secret string, tokens ...string) string {
	if detail == "" {
		return ""
	}
	if detail == secret {
		return DetailOther
	}
	for _, t := range tokens {
		if t != "" && strings.Contains(detail, t) {
			return DetailOther
		}
	}
	return detail
}

// DetailSet bounds the distinct details of one run: past MaxDetails
// distinct values, a new one is recorded as DetailOther. Safe for
// concurrent use.
type DetailSet struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

// Admit returns d, or DetailOther when d would be one detail too many.
func (s *DetailSet) Admit(d string) string {
	if d == "" || d == DetailOther || s == nil { // nil: outside a run (calibration)
		return d
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[d]; ok {
		return d
	}
	if len(s.seen) >= MaxDetails-1 { // one place is DetailOther's
		return DetailOther
	}
	if s.seen == nil {
		s.seen = map[string]struct{}{}
	}
	s.seen[d] = struct{}{}
	return d
}

// nonEmptyString reports whether the (valid) JSON object body has a
// top-level member key whose value is a non-empty string.
func nonEmptyString(body []byte, key string) bool {
	j := memberValue(body, key)
	return j >= 0 && j+1 < len(body) && body[j] == '"' && body[j+1] != '"'
}

// memberValue is the offset of the value of the (valid) JSON object body's
// top-level member key, or -1. A string equal to key that is a value, not
// a name, is passed over.
func memberValue(body []byte, key string) int {
	depth := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			end := scanString(body, i+1) // after the closing quote
			if end < 0 {
				return -1
			}
			if depth == 1 && string(body[i+1:end-1]) == key {
				if j := skipSpace(body, end); j < len(body) && body[j] == ':' {
					return skipSpace(body, j+1)
				}
			}
			i = end - 1
		}
	}
	return -1
}

// AccessToken is the top-level access_token string of a response already
// found valid (Check.Classify): the scan nonEmptyString makes, with the
// value decoded by encoding/json only when it holds an escape (a JWT never
// does).
func AccessToken(body []byte) (string, bool) {
	const key = "access_token"
	j := memberValue(body, key)
	if j < 0 || j >= len(body) || body[j] != '"' {
		return "", false
	}
	vend := scanString(body, j+1)
	if vend < 0 {
		return "", false
	}
	raw := body[j+1 : vend-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	return StringMember(body, key)
}
