package exchange

import (
	"net/url"
	"testing"
)

// TestFormCarriesEachAuthMethodsCredentials: the body names the client and
// carries its credential as each method wants, and nothing of the others.
func TestFormCarriesEachAuthMethodsCredentials(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		auth AuthMethod
		want map[string]string // "" must be absent
	}{
		{AuthBasic, map[string]string{"client_id": "", "client_secret": "", "client_assertion": ""}},
		{AuthPost, map[string]string{"client_id": "perf-agent-0", "client_secret": "c&r=d", "client_assertion": ""}},
		{AuthPrivateKeyJWT, map[string]string{"client_id": "perf-agent-0", "client_secret": "", "client_assertion": "c&r=d",
			"client_assertion_type": ClientAssertionType}},
		{AuthTLSClient, map[string]string{"client_id": "perf-agent-0", "client_secret": "", "client_assertion": ""}},
	} {
		b := Template{SubjectTokenType: "access_token", Resources: []string{"https://r"}, Auth: tc.auth}.Compile()
		form := b.Form("h.p.s", "perf-agent-0", "c&r=d")
		if got := string(b.AppendForm(nil, "h.p.s", "perf-agent-0", "c&r=d")); got != form {
			t.Errorf("%s: AppendForm %q, Form %q", tc.auth, got, form)
		}
		v, err := url.ParseQuery(form)
		if err != nil {
			t.Fatal(err)
		}
		if v.Get("subject_token") != "h.p.s" || v.Get("grant_type") != GrantTypeTokenExchange {
			t.Errorf("%s: %v", tc.auth, v)
		}
		for k, want := range tc.want {
			if _, has := v[k]; (want == "") == has || v.Get(k) != want {
				t.Errorf("%s: %s = %q (present %v), want %q", tc.auth, k, v.Get(k), has, want)
			}
		}
	}
}
