package exchange

import (
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxDescription bounds a stored error description, in bytes.
const MaxDescription = 200

// Withheld replaces a description that carried request material.
const Withheld = "[withheld: it contained request material]"

// Description is the error_description of a non-200 response's OAuth error
// body, or "" (the body of a 200 may hold a token and is never read here).
// It is not yet safe to store: pass it through SanitizeDescription.
func Description(status int, body []byte) string {
	if status == 200 || len(body) == 0 || body[0] != '{' {
		return ""
	}
	var e ErrorResponse
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.ErrorDescription
}

// TransportDescription is what the transport said about a request that got
// no response ("dial tcp 127.0.0.1:1: connect: connection refused"),
// without the URL net/http wraps around it.
func TransportDescription(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// jwsLike finds the start of a JWT (a base64url JSON object: '{"' is "eyJ").
var jwsLike = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{16,}`)

// maxJudged is how much of a description is judged: enough for what is
// kept (MaxDescription) with room for control characters that collapse,
// and a bound on the work whatever a server sends.
const maxJudged = 4 * MaxDescription

// SanitizeDescription makes text a server or a transport wrote safe to
// store and print: control characters (terminal escapes included) and other
// unprintable runes become spaces, runs of spaces collapse, it is cut to
// MaxDescription bytes on a character boundary, and it is withheld
// entirely when it contains any of the secrets, or a piece of one, in any
// encoding SecretFilter knows, or anything that looks like a token. A
// caller that sanitises many descriptions with one secret keeps a
// SecretFilter instead.
func SanitizeDescription(s string, secrets ...string) string {
	if s == "" {
		return ""
	}
	return NewSecretFilter(secrets...).Sanitize(s)
}

// clean replaces unprintable runes by spaces, collapses runs of spaces and
// cuts the text to MaxDescription bytes.
func clean(s string) string {
	var b strings.Builder
	space := true // trims leading spaces
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			r = ' '
		}
		if r == ' ' {
			if space {
				continue
			}
			space = true
		} else {
			space = false
		}
		if b.Len()+utf8.RuneLen(r) > MaxDescription-len("…") {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
	}
	return strings.TrimRight(b.String(), " ")
}

func carries(s string, secrets []string) bool {
	for _, sec := range secrets {
		if sec != "" && strings.Contains(s, sec) {
			return true
		}
	}
	return jwsLike.MatchString(s)
}
