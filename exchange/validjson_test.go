package exchange

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// validJSONCases are inputs where a validator could part from json.Valid;
// want is json.Valid's verdict (the test checks it too).
var validJSONCases = []struct {
	in   string
	want bool
}{
	// Empty input, whitespace and what follows the value.
	{"", false}, {" ", false}, {" \t\r\n", false}, {"\n1\n", true}, {"\t{}\r\n", true},
	{"\v1", false}, {"\f1", false}, {"1\x00", false}, {"\xc2\xa01", false}, {"\xef\xbb\xbf{}", false},
	{"1 2", false}, {"{}{}", false}, {"{} x", false}, {"[]\n ", true},
	// Numbers.
	{"0", true}, {"-0", true}, {"1", true}, {"-", false}, {"--1", false}, {"+1", false},
	{"01", false}, {"-01", false}, {"00", false}, {"0x10", false}, {"1.", false}, {".1", false},
	{"1.5", true}, {"1.e1", false}, {"1e", false}, {"1E", false}, {"1e+", false}, {"1e-", false},
	{"1e5", true}, {"1E+5", true}, {"1e-05", true}, {"-0.0e-0", true}, {"1.0e", false},
	{"1e5.0", false}, {"1e1e1", false}, {"123456789012345678901234567890", true},
	{"Infinity", false}, {"NaN", false}, {"-Infinity", false}, {"[-]", false}, {"[1.]", false},
	{"[0,-0,1e2]", true}, {"[01]", false}, {"{\"a\":-}", false}, {"-a", false},
	// Literals.
	{"true", true}, {"false", true}, {"null", true}, {"tru", false}, {"nul", false}, {"fals", false},
	{"True", false}, {"NULL", false}, {"truex", false}, {"true false", false}, {"nulll", false},
	{"[true,false,null]", true}, {"[truefalse]", false}, {"t", false},
	// Strings: escapes, control bytes, and bytes json.Valid accepts raw.
	{`""`, true}, {`"a"`, true}, {`"`, false}, {`"abc`, false}, {`"abc\`, false}, {`"abc\"`, false},
	{`"\u00e9"`, true}, {`"\uD800"`, true}, {`"\udfff\ud800"`, true}, {`"\u12"`, false},
	{`"\u12G4"`, false}, {`"\u"`, false}, {`"\U0041"`, false}, {`"\x41"`, false}, {`"\'"`, false},
	{`"\/\b\f\n\r\t\\\""`, true}, {`"\a"`, false}, {`"\0"`, false},
	{"\"\x00\"", false}, {"\"\x1f\"", false}, {"\"a\tb\"", false}, {"\"a\nb\"", false},
	{"\"\x7f\"", true}, {"\"\xff\xfe\"", true}, {"\"\xed\xa0\x80\"", true}, {"\"\xc3\"", true},
	{"\"\xe2\x82\xac\"", true}, {"\"\x80\x80\x80\x80\x80\x80\x80\x80\x80\"", true},
	{`"abcdefgh\"ijklmnop"`, true}, {`"abcdefg\\"`, true}, {"\"abcdefgh\x01ijklmnop\"", false},
	{`"abcdefghijklmno"`, true}, {`"abcdefghijklmnop`, false}, {"\"abcdefg\"x", false},
	{"\"\xa2\xdc\xa0\x9f\"", true}, // '"', '\\' and ' ' with the high bit set are plain bytes
	// Objects and arrays.
	{"{}", true}, {"{ }", true}, {"[]", true}, {"[ ]", true}, {`{"a":1}`, true},
	{` { "a" : 1 , "b" : [ ] } `, true}, {`{"a"}`, false}, {`{"a":}`, false}, {`{a:1}`, false},
	{`{"a":1,}`, false}, {`{,}`, false}, {`{"a":1}}`, false}, {`{"a":1]`, false}, {`[1}`, false},
	{`[1,]`, false}, {`[,1]`, false}, {`[]]`, false}, {`[[]`, false}, {`{"a":1 "b":2}`, false},
	{`{1:2}`, false}, {`{"a"::1}`, false}, {`{"a":1:2}`, false}, {`[1:2]`, false}, {`["a":1]`, false},
	{`{"a":1,"a":2}`, true}, {`{"":""}`, true}, {`[{}]`, true}, {`{"a":{"b":[{"c":[]}]}}`, true},
	{`[1,2`, false}, {`{"a":1,`, false}, {`{"a"`, false}, {`{`, false}, {`]`, false}, {`}`, false},
	{`{"a":[}`, false}, {`[{]}`, false}, {`{]`, false}, {`[}`, false}, {`,`, false}, {`:`, false},
	{sinkBody, true}, {sinkBody[:len(sinkBody)-1], false},
	// Nesting: encoding/json allows 10000 levels.
	{nest("[", "]", maxNesting), true}, {nest("[", "]", maxNesting+1), false},
	{strings.Repeat(`{"a":`, maxNesting-1) + "{}" + strings.Repeat("}", maxNesting-1), true},
	{strings.Repeat(`{"a":`, maxNesting) + "{}" + strings.Repeat("}", maxNesting), false},
	{nest(`{"a":`, "}", maxNesting), true}, {nest(`{"a":`, "}", maxNesting+1), false}, {nest(`[{"a":`, "}]", maxNesting/2), true},
	{nest(`{"a":[`, "]}", maxNesting/2), true}, {nest(`{"a":[`, "]}", maxNesting/2+1), false},
	{strings.Repeat("[", maxNesting+1), false}, {strings.Repeat("[", 200) + strings.Repeat("}", 200), false},
	{nest("[", "]", 129), true}, {nest("[", "]", 129)[1:], false}, {strings.Repeat("[", 64) + "{" + strings.Repeat("]", 65), false},
}

// nest wraps null in n pairs of open and close.
func nest(open, close string, n int) string {
	return strings.Repeat(open, n) + "null" + strings.Repeat(close, n)
}

const sinkBody = `{"access_token":"eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJzaW5rIn0.c2lnbmF0dXJl","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer","expires_in":300}`

// jwtBody is a realistic token-exchange response: an ES256 access token
// with the claims Keycloak and Dex put in one, about 900 bytes in all.
func jwtBody() []byte {
	enc := base64.RawURLEncoding.EncodeToString
	header := `{"alg":"ES256","typ":"at+jwt","kid":"Yk3Xx0m9qQ4H2vT7dLr8sWcJ1nZpA6eB"}`
	claims := `{"iss":"https://auth.example.com/realms/tokex","sub":"7c9e6679-7425-40de-944b-e07fc1f90ae7",` +
		`"aud":["https://api.example.com","orders"],"exp":1767225900,"iat":1767225600,"nbf":1767225600,` +
		`"jti":"c3f1b2a4-8d6e-4f0a-9b7c-2e5d1a3f4b6c","client_id":"tokex-load-client","azp":"tokex-load-client",` +
		`"sid":"5b8f6c1e-2a4d-4e9b-8c3f-1d7a6e2b9c40",` +
		`"scope":"openid orders:read orders:write","act":{"sub":"tokex-load-client"}}`
	sig := sha512.Sum512([]byte(claims)) // 64 bytes, as an ES256 signature
	tok := enc([]byte(header)) + "." + enc([]byte(claims)) + "." + enc(sig[:])
	return []byte(`{"access_token":"` + tok + `","issued_token_type":"urn:ietf:params:oauth:token-type:access_token",` +
		`"token_type":"Bearer","expires_in":300,"scope":"openid orders:read orders:write"}`)
}

func TestValidJSON(t *testing.T) {
	t.Parallel()
	for _, c := range validJSONCases {
		if std := json.Valid([]byte(c.in)); std != c.want {
			t.Errorf("json.Valid(%.80q) = %v; the table says %v", c.in, std, c.want)
		}
		if got := validJSON([]byte(c.in)); got != c.want {
			t.Errorf("validJSON(%.80q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// Large inputs: long strings and many members, valid and cut.
func TestValidJSONLarge(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("eyJhbGciOiJFUzI1NiJ9\xff\\u00e9 ", 1<<16)
	many := "[" + strings.Repeat(`{"a":1.5e3,"b":"x"},`, 1<<15) + "null]"
	for _, in := range []string{`"` + long + `"`, `"` + long, `"` + long + "\x01\"", many, many[:len(many)-1], string(jwtBody())} {
		if got, want := validJSON([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("%d bytes %.40q: validJSON %v, json.Valid %v", len(in), in, got, want)
		}
	}
	if n := len(jwtBody()); n < 800 || n > 1000 {
		t.Errorf("jwtBody is %d bytes, want about 900", n)
	}
}

// Random edits of valid documents with JSON's own bytes reach the corners a
// byte-level fuzzer finds slowly; the seed is fixed, the test repeatable.
func TestValidJSONMutations(t *testing.T) {
	t.Parallel()
	const alphabet = "{}[]\",:\\ \t\n0123456789-+.eEtrufalsn/bu\x00\x1f\x7f\xff"
	docs := [][]byte{[]byte(sinkBody), jwtBody(), []byte(`{"a":[1,-0.5e+3,true,null,{"b":"\u00e9\n"}],"c":{}}`)}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 50000; n++ {
		b := append([]byte(nil), docs[rng.IntN(len(docs))]...)
		for k := 1 + rng.IntN(3); k > 0 && len(b) > 0; k-- {
			i := rng.IntN(len(b))
			switch c := alphabet[rng.IntN(len(alphabet))]; rng.IntN(4) {
			case 0:
				b[i] = c
			case 1:
				b = append(b[:i], append([]byte{c}, b[i:]...)...)
			case 2:
				b = append(b[:i], b[i+1:]...)
			default:
				b = b[:i]
			}
		}
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid %v", b, got, want)
		}
	}
}

// FuzzValidJSON: validJSON agrees with json.Valid on every input.
func FuzzValidJSON(f *testing.F) {
	for _, c := range validJSONCases {
		if len(c.in) < 1000 {
			f.Add([]byte(c.in))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}

// BenchmarkValidJSON compares json.Valid and validJSON on the sink's answer
// and on a realistic one with an ES256 access token.
func BenchmarkValidJSON(b *testing.B) {
	for _, body := range []struct {
		name string
		b    []byte
	}{{"sink", []byte(sinkBody)}, {"jwt900", jwtBody()}} {
		for _, fn := range []struct {
			name string
			f    func([]byte) bool
		}{{"json.Valid", json.Valid}, {"validJSON", validJSON}} {
			b.Run(body.name+"/"+fn.name, func(b *testing.B) {
				b.SetBytes(int64(len(body.b)))
				for b.Loop() {
					if !fn.f(body.b) {
						b.Fatal("invalid")
					}
				}
			})
		}
	}
}
