package statedir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestClientSecretCreatedOnceAndPrivate(t *testing.T) {
	d := t.TempDir()
	t.Setenv("TOKEX_HOME", d)
	a, err := ClientSecret()
	if err != nil || len(a) < 30 {
		t.Fatalf("%q %v", a, err)
	}
	b, _ := ClientSecret()
	if a != b {
		t.Error("the stored secret changed")
	}
	st, _ := os.Stat(filepath.Join(d, "client-secret"))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	_ = os.WriteFile(filepath.Join(d, "client-secret"), []byte("\n"), 0o600)
	if _, err := ClientSecret(); err == nil {
		t.Error("accepted an empty stored secret")
	}
	if p, _ := SubjectKeyPath(); p != filepath.Join(d, "subject-key.pem") {
		t.Errorf("key path %s", p)
	}
}
