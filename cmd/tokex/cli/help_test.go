package cli

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestHelpPlaceholders (issue 23): pflag takes the first back-quoted text
// of a flag's usage as its value's name, so --subject-issuer's help read
// "--subject-issuer tokex jwks --serve". No placeholder holds a space.
func TestHelpPlaceholders(t *testing.T) {
	walk(NewRoot(), func(c *cobra.Command, fl *pflag.Flag) {
		if name, _ := pflag.UnquoteUsage(fl); strings.ContainsAny(name, " \t") {
			t.Errorf("%s --%s: the placeholder is %q (back quotes in its usage)", c.CommandPath(), fl.Name, name)
		}
	})
}

// TestHelpFitsItsWidth (issue 23): flag lists ran to 200 columns, each
// description padded behind the longest flag and never wrapped. Every
// line of every command's help fits HelpWidth without a terminal.
func TestHelpFitsItsWidth(t *testing.T) {
	var cmds []*cobra.Command
	var all func(c *cobra.Command)
	all = func(c *cobra.Command) {
		if c.Hidden { // tokex engine parses its own flags
			return
		}
		cmds = append(cmds, c)
		for _, s := range c.Commands() {
			all(s)
		}
	}
	all(NewRoot())
	for _, c := range cmds {
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d %s", c.CommandPath(), code, errs)
		}
		for _, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > HelpWidth {
				t.Errorf("%s --help: a line of %d columns:\n%s", c.CommandPath(), n, l)
			}
		}
	}
}

// TestSmokeHelpOffersWhatSmokeUses (issue 23): smoke --help listed the
// campaign's plan flags, which a smoke test ignores. They are still
// accepted, as before, but not offered.
func TestSmokeHelpOffersWhatSmokeUses(t *testing.T) {
	_, out, _ := run(t, "smoke", "--help")
	for _, name := range smokeIgnores {
		if strings.Contains(out, "--"+name+" ") {
			t.Errorf("smoke --help offers --%s", name)
		}
	}
	for _, name := range []string{"--config", "--url", "--agents", "--client-secret", "--auth-method", "--subject-issuer", "--lifetime"} {
		if !strings.Contains(out, name+" ") {
			t.Errorf("smoke --help lacks %s", name)
		}
	}
	cmd := newSmokeCmd()
	if err := cmd.ParseFlags([]string{"--stages", "10", "--rounds", "2", "--no-sanity"}); err != nil {
		t.Errorf("a hidden flag is no longer accepted: %v", err)
	}
}
