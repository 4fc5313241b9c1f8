package exchange

import "testing"

func TestClassify(t *testing.T) {
	cases := []struct {
		status int
		body   string
		want   Outcome
		detail string
	}{
		{200, `{"access_token":"a","issued_token_type":"t","token_type":"Bearer"}`, OutcomeOK, ""},
		{200, ` { "issued_token_type" : "t" , "access_token" : "a" } `, OutcomeOK, ""},
		{200, `{"access_token":"","issued_token_type":"t"}`, OutcomeBadResponse, "200"},
		{200, `{"x":{"access_token":"a"},"issued_token_type":"t"}`, OutcomeBadResponse, "200"},
		{200, `{"access_token":"a\"b","issued_token_type":"t"}`, OutcomeOK, ""},
		{200, `{"access_token":1,"issued_token_type":"t"}`, OutcomeBadResponse, "200"},
		{200, `{"access_token":"a","issued_token_type":"t"`, OutcomeBadResponse, "200"},
		{200, `not json`, OutcomeBadResponse, "200"},
		{400, `{"error":"invalid_grant","error_description":"x"}`, OutcomeOAuthError, "invalid_grant"},
		{401, `{"error":"bad,code\n"}`, OutcomeHTTPError, "401"},
		{503, ``, OutcomeHTTPError, "503"},
	}
	for _, c := range cases {
		got, detail := Classify(c.status, []byte(c.body))
		if got != c.want || detail != c.detail {
			t.Errorf("Classify(%d, %s) = %s %q, want %s %q", c.status, c.body, got, detail, c.want, c.detail)
		}
	}
}

func FuzzClassify(f *testing.F) {
	f.Add(200, []byte(`{"access_token":"a","issued_token_type":"t"}`))
	f.Add(400, []byte(`{"error":"x"}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		o, d := Classify(status, body)
		if o == OutcomeOK && status != 200 {
			t.Fatal("ok without 200")
		}
		for i := 0; i < len(d); i++ {
			if d[i] == ',' || d[i] == '\n' {
				t.Fatalf("detail %q would break a CSV row", d)
			}
		}
	})
}
