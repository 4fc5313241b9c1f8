package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestJWKSClientsPrintsAStableKeyPerAgent: `tokex jwks --clients` prints one
// JWK Set per client id, each its own key, the same at every call (stored),
// and --out writes each to <client id>.jwks.json.
func TestJWKSClientsPrintsAStableKeyPerAgent(t *testing.T) {
	t.Setenv("TOKEX_HOME", t.TempDir())
	out := t.TempDir()
	var a, b, errb bytes.Buffer
	if Main([]string{"jwks", "--clients", "--agents", "3"}, &a, &errb) != 0 ||
		Main([]string{"jwks", "--clients", "--agents", "3", "--out", out}, &b, &errb) != 0 {
		t.Fatal(errb.String())
	}
	if a.String() != b.String() {
		t.Errorf("the keys changed between calls:\n%s\n%s", a.String(), b.String())
	}
	var sets map[string]struct{ Keys []map[string]any }
	if err := json.Unmarshal(a.Bytes(), &sets); err != nil || len(sets) != 3 {
		t.Fatalf("%v: %s", err, a.String())
	}
	kids := map[any]bool{}
	for id, s := range sets {
		if len(s.Keys) != 1 || s.Keys[0]["alg"] != "ES256" || s.Keys[0]["d"] != nil {
			t.Errorf("%s: %v", id, s.Keys)
		}
		kids[s.Keys[0]["kid"]] = true
		written, err := os.ReadFile(filepath.Join(out, id+".jwks.json"))
		if err != nil || !bytes.Contains(written, []byte(s.Keys[0]["kid"].(string))) {
			t.Errorf("%s: %v %s", id, err, written)
		}
	}
	if len(kids) != 3 {
		t.Errorf("the agents share keys: %v", kids)
	}
}
