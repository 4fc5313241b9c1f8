package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// walk calls f on every command of the tree with its own and inherited
// flags, cobra's help and version flags included.
func walk(c *cobra.Command, f func(c *cobra.Command, fl *pflag.Flag)) {
	c.InitDefaultHelpFlag()
	c.InitDefaultVersionFlag()
	c.LocalFlags().VisitAll(func(fl *pflag.Flag) { f(c, fl) })
	c.InheritedFlags().VisitAll(func(fl *pflag.Flag) { f(c, fl) })
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}

// TestShortFlagsMeanOneThing: -o, -n, -v meant different things in
// different commands. Every shorthand now names the same long flag in every
// command, as shortFlags and docs/running.md say.
func TestShortFlagsMeanOneThing(t *testing.T) {
	used := map[string]bool{}
	walk(NewRoot(), func(c *cobra.Command, fl *pflag.Flag) {
		if fl.Shorthand == "" {
			return
		}
		used[fl.Shorthand] = true
		if want, ok := shortFlags[fl.Shorthand]; !ok || want != fl.Name {
			t.Errorf("%s: -%s is --%s; -%s must be --%s in every command (or be added to shortFlags and docs/running.md)",
				c.CommandPath(), fl.Shorthand, fl.Name, fl.Shorthand, want)
		}
	})
	readme, err := os.ReadFile("../../../docs/running.md")
	if err != nil {
		t.Fatal(err)
	}
	for short, long := range shortFlags {
		if !used[short] {
			t.Errorf("-%s (--%s) is in shortFlags but no command has it", short, long)
		}
		if doc := fmt.Sprintf("`-%s`/`--%s`", short, long); !strings.Contains(string(readme), doc) {
			t.Errorf("docs/running.md does not document %s", doc)
		}
	}
}

// TestOverridesAreFlags keeps the override table true: every entry is a
// flag of tokex run, and --resume excludes every flag of the plan.
func TestOverridesAreFlags(t *testing.T) {
	cmd := newRunCmd(deps{})
	for _, ov := range overrides {
		if cmd.Flags().Lookup(ov.flag) == nil {
			t.Errorf("override %q is not a flag of tokex run", ov.flag)
		}
	}
	if plan := planFlags(); !slices.Equal(plan, []string{"target", "stages", "rounds", "duration", "warmup", "agents", "replicas", "engines"}) {
		t.Errorf("plan flags %v", plan)
	}
	for _, name := range planFlags() {
		value := "1"
		if name == "duration" || name == "warmup" {
			value = "1s"
		}
		code, _, errs := run(t, "run", "--resume", t.TempDir(), "--"+name, value)
		if code != ExitCannotRun || !strings.Contains(errs, "[resume "+name+"]") {
			t.Errorf("--resume with --%s: exit %d, %q", name, code, errs)
		}
	}
}

func TestStagesValue(t *testing.T) {
	var v stagesValue
	for _, c := range []struct{ in, want, err string }{
		{"100,250,500", "100,250,500", ""},
		{" 0.5  1e3,\t7 ", "0.5,1000,7", ""},
		{"10,x", "", `"x" is not a number`},
		{"NaN", "", `"NaN" is not a finite number`},
		{"1e400", "", `"1e400" is not a finite number`},
	} {
		err := v.Set(c.in)
		switch {
		case c.err == "" && (err != nil || v.String() != c.want):
			t.Errorf("Set(%q) = %v, %q; want %q", c.in, err, v.String(), c.want)
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("Set(%q) error %v, want %q", c.in, err, c.err)
		}
	}
}

// Flags that exclude each other say so through cobra, before anything
// runs (--resume and the plan flags: TestOverridesAreFlags).
func TestExclusiveFlags(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := run(t, "compare", "--json", "--markdown", dir, dir)
	if code != ExitCannotRun || !strings.Contains(errs, "[json markdown] were all set") {
		t.Errorf("compare --json --markdown: exit %d, %q", code, errs)
	}
}
