package truth

import (
	"testing"
)

func TestRequireSkipsWithoutEnv(t *testing.T) {
	t.Setenv(Env, "")
	ran := false
	t.Run("gated", func(t *testing.T) {
		Require(t)
		ran = true
	})
	if ran {
		t.Fatal("Require did not skip without " + Env)
	}
}

func TestRequireRunsWithEnv(t *testing.T) {
	t.Setenv(Env, "1")
	ran := false
	t.Run("gated", func(t *testing.T) {
		Require(t)
		ran = true
	})
	if !ran {
		t.Fatal("Require skipped with " + Env + "=1")
	}
}
