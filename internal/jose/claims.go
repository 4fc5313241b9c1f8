package jose

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
)

// JWT claim names are case-sensitive (RFC 7519 §4), but encoding/json matches
// struct fields case-insensitively, folds "ſ" to "s" and keeps the last of
// duplicate members. So tokex reads claims by exact name, refuses duplicate
// member names at any depth, and refuses any member whose name is a
// registered name in another case, which a case-insensitive consumer (ours
// before, or one downstream) could read as the registered one.

// registeredClaims are claim names of RFC 7519 §4.1, RFC 8693 §4, RFC 9068
// §2.2 and OpenID Connect that an inbound token may only spell exactly.
var registeredClaims = foldSet("iss", "sub", "aud", "exp", "nbf", "iat", "jti",
	"act", "may_act", "client_id", "scope", "cnf", "azp", "auth_time", "acr", "amr",
	"nonce", "sid", "groups", "roles", "entitlements")

// registeredHeaders are the JOSE header parameters of RFC 7515 §4.1, RFC
// 7516 §4.1 and RFC 7797.
var registeredHeaders = foldSet("alg", "jku", "jwk", "kid", "x5u", "x5c", "x5t", "x5t#S256",
	"typ", "cty", "crit", "b64", "zip", "enc")

// maxJSONDepth bounds the nesting of a token's header and payload (and so
// the depth of an act chain).
const maxJSONDepth = 32

var (
	errDuplicateName = &Error{"carries a member name twice"}
	errCaseVariant   = &Error{"spells a registered claim or header name in another case"}
	errTooDeep       = &Error{"nests JSON deeper than 32 levels"}
	errNotObject     = &Error{"is malformed (not a JSON object)"}
	errBadJSON       = &Error{"is malformed (invalid JSON)"}
	errCritMalformed = &Error{"is malformed (crit header)"}
	errCritPresent   = &Error{"uses a critical header extension tokex does not understand (crit)"}
	errAudType       = &Error{"claim aud is not a string or an array of strings"}
	errActType       = &Error{"claim act is not an object with a sub"}
	errMayActType    = &Error{"claim may_act is not an object with a sub"}
)

// nameSet holds registered names, exactly and by fold key.
type nameSet struct {
	exact map[string]bool
	fold  map[string]string // foldKey(name) -> name
}

func foldSet(names ...string) nameSet {
	s := nameSet{exact: map[string]bool{}, fold: map[string]string{}}
	for _, n := range names {
		s.exact[n] = true
		s.fold[foldKey(n)] = n
	}
	return s
}

// foldKey maps s so that two strings have the same key exactly when
// strings.EqualFold reports them equal: each rune becomes the smallest rune
// of its simple case-folding orbit ("s", "S" and "ſ" all become "S"; "k",
// "K" and the Kelvin sign "K" become "K").
func foldKey(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b = utf8.AppendRune(b, m)
	}
	return string(b)
}

// checkName refuses a member name that equals a registered name only under
// case folding.
func checkName(name string, registered nameSet) error {
	if registered.exact[name] {
		return nil
	}
	if _, ok := registered.fold[foldKey(name)]; ok {
		return errCaseVariant
	}
	return nil
}

// member is one member of a JSON object: its name and its raw value, as
// bytes and as text (a substring of the object's one string copy).
type member struct {
	name string
	raw  json.RawMessage
	text string
}

// members checks data, which must be one JSON object, and returns its
// top-level members: member names must be unique in every object, and those
// of the top-level object and of the objects under nestedClaims (the act
// chain) must not be case variants of a registered name. A byte scanner
// over JSON that json.Valid accepted: a token's payload is read for every
// exchange, and encoding/json's Decoder.Token costs four times as much.
func members(data []byte, registered nameSet, nestedClaims map[string]bool) ([]member, error) {
	if !json.Valid(data) {
		return nil, errBadJSON
	}
	return validMembers(data, registered, nestedClaims)
}

// validMembers is members of data already known to be valid JSON.
func validMembers(data []byte, registered nameSet, nestedClaims map[string]bool) ([]member, error) {
	w := walker{data: data, text: string(data), registered: registered, nested: nestedClaims}
	i := w.space(0)
	if data[i] != '{' {
		return nil, errNotObject
	}
	top := make([]member, 0, 10)
	if _, err := w.object(i, 1, true, &top); err != nil {
		return nil, err
	}
	return top, nil
}

type walker struct {
	data       []byte
	text       string // data, copied once: names and values are its substrings
	registered nameSet
	nested     map[string]bool
}

func (w *walker) space(i int) int {
	for i < len(w.data) && (w.data[i] == ' ' || w.data[i] == '\t' || w.data[i] == '\n' || w.data[i] == '\r') {
		i++
	}
	return i
}

// object scans the object at i (its '{') and returns the index after its
// '}'; with out non-nil it records the members.
func (w *walker) object(i, depth int, claims bool, out *[]member) (int, error) {
	if depth > maxJSONDepth {
		return 0, errTooDeep
	}
	var few [16]string
	names := few[:0]         // a few members: a linear search
	var many map[string]bool // many: a map, so a huge object costs linear time
	i = w.space(i + 1)
	if w.data[i] == '}' {
		return i + 1, nil
	}
	for {
		end := stringEnd(w.data, i)
		name := jsonText(w.text[i : end+1])
		if many == nil && len(names) == 16 {
			many = make(map[string]bool, 64)
			for _, n := range names {
				many[n] = true
			}
		}
		if many != nil {
			if many[name] {
				return 0, errDuplicateName
			}
			many[name] = true
		} else {
			if slices.Contains(names, name) {
				return 0, errDuplicateName
			}
			names = append(names, name)
		}
		if claims {
			if err := checkName(name, w.registered); err != nil {
				return 0, err
			}
		}
		i = w.space(end + 1)
		start := w.space(i + 1) // after ':'
		next, err := w.value(start, depth, claims && w.nested[name])
		if err != nil {
			return 0, err
		}
		if out != nil {
			*out = append(*out, member{name, w.data[start:next], w.text[start:next]})
		}
		i = w.space(next)
		if w.data[i] == '}' {
			return i + 1, nil
		}
		i = w.space(i + 1) // after ','
	}
}

// value scans the value at i and returns the index after it.
func (w *walker) value(i, depth int, claims bool) (int, error) {
	switch w.data[i] {
	case '{':
		return w.object(i, depth+1, claims, nil)
	case '[':
		if depth+1 > maxJSONDepth {
			return 0, errTooDeep
		}
		i = w.space(i + 1)
		if w.data[i] == ']' {
			return i + 1, nil
		}
		for {
			next, err := w.value(i, depth+1, false)
			if err != nil {
				return 0, err
			}
			i = w.space(next)
			if w.data[i] == ']' {
				return i + 1, nil
			}
			i = w.space(i + 1)
		}
	case '"':
		return stringEnd(w.data, i) + 1, nil
	}
	for i < len(w.data) && strings.IndexByte(",}] \t\n\r", w.data[i]) < 0 {
		i++
	}
	return i, nil
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
	return len(b) - 1 // unreachable for valid JSON
}

// jsonText decodes a JSON string literal; without escapes, and valid UTF-8,
// it is the text between the quotes (no copy), as encoding/json reads it.
func jsonText(lit string) string {
	if strings.IndexByte(lit, '\\') < 0 && utf8.ValidString(lit) {
		return lit[1 : len(lit)-1]
	}
	var s string
	_ = json.Unmarshal([]byte(lit), &s)
	return s
}

// get is the member named exactly name.
func get(ms []member, name string) (member, bool) {
	for _, m := range ms {
		if m.name == name {
			return m, true
		}
	}
	return member{}, false
}

// actChain are the members whose objects hold claims of a prior actor.
var actChain = map[string]bool{"act": true, "may_act": true}

// checkHeader checks the JOSE header of a compact JWS before readHeader
// reads it into a map: no duplicate or case-variant parameter, and no crit
// (RFC 7515 §4.1.11: tokex understands no extension, so any crit is refused;
// an empty or ill-formed list is malformed).
func checkHeader(raw string) error {
	seg, _, ok := strings.Cut(raw, ".")
	if !ok {
		return nil // parse reports the malformed token
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(seg)
	if err != nil {
		return nil // likewise
	}
	h, err := members(b, registeredHeaders, nil)
	if err != nil {
		return err
	}
	crit, ok := get(h, "crit")
	if !ok {
		return nil
	}
	var names []string
	if json.Unmarshal(crit.raw, &names) != nil || len(names) == 0 {
		return errCritMalformed
	}
	for i, n := range names {
		// RFC 7515 §4.1.11: names the JWS/JWA specifications define may not
		// be listed (RFC 7797's b64 is an extension and may).
		if _, present := get(h, n); !present {
			return errCritMalformed
		}
		if _, reg := registeredHeaders.fold[foldKey(n)]; reg && n != "b64" {
			return errCritMalformed
		}
		for _, m := range names[:i] {
			if m == n {
				return errCritMalformed
			}
		}
	}
	return errCritPresent
}

// Actor is the RFC 8693 §4.1 act claim; prior actors nest inside.
type Actor struct {
	Sub string `json:"sub"`
	Act *Actor `json:"act,omitempty"`
}

// MayAct is the RFC 8693 §4.4 may_act claim: the party the token's
// subject allows to act for it, by its sub and, when given, its iss.
type MayAct struct {
	Sub string
	Iss string
}

// Claims are the claims tokex reads from inbound tokens (subject and actor
// tokens, client assertions), each by its exact name.
type Claims struct {
	Issuer    string
	Subject   string
	Audience  jwt.ClaimStrings
	Expiry    Date
	NotBefore Date
	IssuedAt  Date
	ID        string
	ClientID  string // RFC 9068 client_id: who a token was issued to
	Act       *Actor
	MayAct    *MayAct
}

// UnmarshalJSON is called by encoding/json on a value it has checked to be
// valid JSON.
func (c *Claims) UnmarshalJSON(b []byte) error { return c.decode(b) }

// decode reads the claims from b, which must be valid JSON.
func (c *Claims) decode(b []byte) error {
	m, err := validMembers(b, registeredClaims, actChain)
	if err != nil {
		return err
	}
	str := func(name string, keep bool) string {
		v, present := get(m, name)
		if !present || err != nil {
			return ""
		}
		if v.text[0] != '"' {
			err = &Error{"claim " + name + " is not a string"}
			return ""
		}
		if !keep {
			return ""
		}
		return jsonText(v.text)
	}
	numeric := func(name string) Date {
		v, present := get(m, name)
		if !present || err != nil {
			return Date{}
		}
		d, ok := numericDate(v.text)
		if !ok {
			err = &Error{"claim " + name + " is not a NumericDate (a JSON number of seconds)"}
		}
		return d
	}
	c.Issuer, c.Subject, c.ID, c.ClientID = str("iss", true), str("sub", true), str("jti", true), str("client_id", true)
	_ = str("scope", false) // checked, not kept
	c.Expiry, c.NotBefore, c.IssuedAt = numeric("exp"), numeric("nbf"), numeric("iat")
	if err != nil {
		return err
	}
	return c.decodeObjects(m)
}

// decodeObjects reads aud, act and may_act.
func (c *Claims) decodeObjects(m []member) error {
	var err error
	if v, ok := get(m, "aud"); ok {
		if c.Audience, err = audience(v); err != nil {
			return err
		}
	}
	if v, ok := get(m, "act"); ok {
		if c.Act, err = parseActor(v.raw); err != nil {
			return err
		}
	}
	if v, ok := get(m, "may_act"); ok {
		if c.MayAct, err = parseMayAct(v.raw); err != nil {
			return err
		}
	}
	return nil
}

// parseMayAct reads may_act: an object with a non-empty string sub and,
// if present, a string iss; its other members are not read.
func parseMayAct(v json.RawMessage) (*MayAct, error) {
	if len(v) == 0 || v[0] != '{' {
		return nil, errMayActType
	}
	var m struct {
		Sub *string `json:"sub"`
		Iss *string `json:"iss"`
	}
	if json.Unmarshal(v, &m) != nil || m.Sub == nil || *m.Sub == "" {
		return nil, errMayActType
	}
	a := &MayAct{Sub: *m.Sub}
	if m.Iss != nil {
		a.Iss = *m.Iss
	}
	return a, nil
}

// maxNumericDate is 9999-12-31T23:59:59Z.
const maxNumericDate = 253402300799

// Date is a NumericDate claim; Set is false when the claim is absent.
type Date struct {
	time.Time
	Set bool
}

// numericDate reads a JSON number of seconds since the epoch (RFC 7519 §2);
// a string, even a numeric one, is not a NumericDate. The time is truncated
// to jwt.TimePrecision, as jwt.NewNumericDate does.
func numericDate(v string) (Date, bool) {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return Date{}, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > maxNumericDate {
		return Date{}, false
	}
	sec, frac := math.Modf(f)
	return Date{time.Unix(int64(sec), int64(frac*1e9)).Truncate(jwt.TimePrecision), true}, true
}

// audience reads aud: one string or an array of strings.
func audience(m member) (jwt.ClaimStrings, error) {
	bad := errAudType
	if m.text[0] == '"' {
		return jwt.ClaimStrings{jsonText(m.text)}, nil // a string of valid JSON
	}
	var raw []json.RawMessage
	if m.text[0] != '[' || json.Unmarshal(m.raw, &raw) != nil {
		return nil, bad
	}
	out := make(jwt.ClaimStrings, 0, len(raw))
	for _, e := range raw {
		var s string
		if len(e) == 0 || e[0] != '"' || json.Unmarshal(e, &s) != nil {
			return nil, bad
		}
		out = append(out, s)
	}
	return out, nil
}

// parseActor reads an act object by exact names: sub (required) and the
// prior actor in act. Depth is bounded by checkMembers.
func parseActor(v json.RawMessage) (*Actor, error) {
	bad := errActType
	if len(v) == 0 || v[0] != '{' {
		return nil, bad
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil {
		return nil, bad
	}
	var a Actor
	sub, ok := m["sub"]
	if !ok || len(sub) == 0 || sub[0] != '"' || json.Unmarshal(sub, &a.Sub) != nil || a.Sub == "" {
		return nil, bad
	}
	if prior, ok := m["act"]; ok {
		p, err := parseActor(prior)
		if err != nil {
			return nil, err
		}
		a.Act = p
	}
	return &a, nil
}

// CheckTimes checks exp (required), nbf and iat against now with leeway,
// and that iss is issuer; it returns the first failure in golang-jwt's
// precedence (ErrIssuer for the issuer), nil when all hold.
func (c *Claims) CheckTimes(now time.Time, leeway time.Duration, issuer string) error {
	var expired, early, missing, badIssuer bool
	if !c.Expiry.Set {
		missing = true
	} else {
		expired = !now.Before(c.Expiry.Add(leeway))
	}
	early = c.NotBefore.Set && now.Before(c.NotBefore.Add(-leeway)) ||
		c.IssuedAt.Set && now.Before(c.IssuedAt.Add(-leeway))
	if c.Issuer == "" {
		missing = true
	} else {
		badIssuer = c.Issuer != issuer
	}
	switch {
	case expired:
		return errExpired
	case early:
		return errNotYet
	case missing:
		return errMissing
	case badIssuer:
		return ErrIssuer
	}
	return nil
}
