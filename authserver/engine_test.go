package authserver

import (
	"strings"
	"testing"
)

func TestParseReady(t *testing.T) {
	ok := `{"protocol":1,"url":"https://127.0.0.1:8443","pid":42,"version":"(devel)","go":"go1.26"}`
	if r, err := ParseReady([]byte(ok + "\n")); err != nil || r.URL != "https://127.0.0.1:8443" || r.PID != 42 {
		t.Fatalf("%+v %v", r, err)
	}
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "no ready report"},
		{"not json", "tokex serve: listening on http://127.0.0.1:1", "ready report"},
		{"two values", ok + ok, "more than one JSON value"},
		{"protocol", `{"protocol":2,"url":"http://127.0.0.1:1","pid":1}`, "protocol 2"},
		{"pid", `{"protocol":1,"url":"http://127.0.0.1:1","pid":0}`, "pid 0"},
		{"scheme", `{"protocol":1,"url":"file:///etc/passwd","pid":1}`, "not an http(s) base URL"},
		{"path", `{"protocol":1,"url":"http://127.0.0.1:1/x","pid":1}`, "not an http(s) base URL"},
		{"user", `{"protocol":1,"url":"http://u:p@127.0.0.1:1","pid":1}`, "not an http(s) base URL"},
		{"no port", `{"protocol":1,"url":"http://127.0.0.1","pid":1}`, "no host and port"},
		{"long version", `{"protocol":1,"url":"http://127.0.0.1:1","pid":1,"version":"` + strings.Repeat("v", 300) + `"}`, "too long"},
		{"huge", `{"protocol":1,"url":"http://127.0.0.1:1","pid":1,"x":"` + strings.Repeat("x", MaxReadyBytes) + `"}`, "over"},
	} {
		if _, err := ParseReady([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

// FuzzParseReady: any bytes give a report that passed every check, or an
// error; never a panic.
func FuzzParseReady(f *testing.F) {
	f.Add([]byte(`{"protocol":1,"url":"https://127.0.0.1:8443","pid":42,"version":"(devel)","go":"go1.26"}`))
	f.Add([]byte(`{"protocol":1,"url":"http://[::1]:80","pid":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseReady(b)
		if err != nil {
			return
		}
		if r.Protocol != ReadyProtocol || r.PID <= 0 || !(strings.HasPrefix(r.URL, "http://") || strings.HasPrefix(r.URL, "https://")) {
			t.Fatalf("accepted %+v", r)
		}
	})
}
