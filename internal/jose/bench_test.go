package jose

import (
	"encoding/json"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// BenchmarkClaims is the cost of reading a subject token's claims by exact
// name (the member walk plus the map) against encoding/json into golang-jwt's
// RegisteredClaims, which folds case: the price of issue 9 item 1.
//
//	go test ./internal/jose -run - -bench Claims -benchtime 100000x
func BenchmarkClaims(b *testing.B) {
	payload := []byte(`{"iss":"https://pf-perf-subject","sub":"perf-user-001","aud":"perf-agent-3","iat":1796054420,"exp":1796054720,"jti":"c-a3-000001"}`)
	b.Run("exact", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var c Claims
			if err := json.Unmarshal(payload, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("folding", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var c jwt.RegisteredClaims
			if err := json.Unmarshal(payload, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
}
