package exchange

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strconv"
)

// Outcome classifies one exchange attempt. "ok" is the only success: HTTP 200
// with a non-empty access_token and issued_token_type, as the article's checks.
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
// detail (the OAuth error code or status) that never contains token material.
func Classify(status int, body []byte) (Outcome, string) {
	if status == 200 {
		// json.Valid plus a look-up of two top-level strings costs a tenth of
		// json.Unmarshal, which matters at thousands of responses a second.
		if !json.Valid(body) || !nonEmptyString(body, "access_token") || !nonEmptyString(body, "issued_token_type") {
			return OutcomeBadResponse, "200"
		}
		return OutcomeOK, ""
	}
	var e ErrorResponse
	if status >= 400 && status < 500 && json.Unmarshal(body, &e) == nil && e.Error != "" && safeCode(e.Error) {
		return OutcomeOAuthError, e.Error
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

// safeCode accepts only the error-code charset of RFC 6749 §5.2 so that a
// hostile server cannot smuggle arbitrary text into evidence files.
func safeCode(s string) bool {
	if len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == ',' {
			return false
		}
	}
	return true
}

// nonEmptyString reports whether the (valid) JSON object body has a
// top-level member key whose value is a non-empty string.
func nonEmptyString(body []byte, key string) bool {
	depth := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			end := stringEnd(body, i)
			if end < 0 {
				return false
			}
			if depth == 1 && string(body[i+1:end]) == key {
				j := end + 1
				for j < len(body) && (body[j] == ' ' || body[j] == '\t' || body[j] == '\n' || body[j] == '\r') {
					j++
				}
				if j < len(body) && body[j] == ':' {
					j++
					for j < len(body) && (body[j] == ' ' || body[j] == '\t' || body[j] == '\n' || body[j] == '\r') {
						j++
					}
					return j+1 < len(body) && body[j] == '"' && body[j+1] != '"'
				}
			}
			i = end
		}
	}
	return false
}

// stringEnd returns the index of the quote closing the string at i.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}
