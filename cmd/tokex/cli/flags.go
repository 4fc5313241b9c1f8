package cli

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/local"
)

// Short flags have one meaning in every command (TestShortFlagsMeanOneThing;
// docs/running.md, "Short flags mean one thing in every command").
var shortFlags = map[string]string{
	"c": "config",    // a YAML config file
	"h": "help",      // cobra's
	"n": "namespace", // the Kubernetes namespace, as in kubectl
	"o": "out",       // where the command writes what it makes
	"v": "version",   // cobra's, on tokex itself
}

// flagError is a flag value's own message, printed as "--name: message"
// instead of pflag's "invalid argument … for … flag: …".
type flagError struct{ msg string }

func (e *flagError) Error() string { return e.msg }

// flagErrors turns pflag's wrapping of a flagError into "--name: message".
func flagErrors(_ *cobra.Command, err error) error {
	var inv *pflag.InvalidValueError
	var fe *flagError
	if errors.As(err, &inv) && errors.As(err, &fe) {
		return fmt.Errorf("--%s: %s", inv.GetFlag().Name, fe.msg)
	}
	return err
}

var stageSplit = regexp.MustCompile(`[,\s]+`)

// stagesValue is --stages: finite exchanges/s separated by commas or spaces.
type stagesValue []float64

func (v *stagesValue) Type() string { return "rates" }

func (v *stagesValue) String() string {
	s := make([]string, len(*v))
	for i, r := range *v {
		s[i] = strconv.FormatFloat(r, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

func (v *stagesValue) Set(text string) error {
	var rates []float64
	for _, s := range stageSplit.Split(strings.TrimSpace(text), -1) {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return &flagError{fmt.Sprintf("%q is not a number", s)}
		}
		if err != nil || math.IsNaN(r) || math.IsInf(r, 0) {
			return &flagError{fmt.Sprintf("%q is not a finite number", s)}
		}
		rates = append(rates, r)
	}
	*v = rates
	return nil
}

// countsValue is --replicas and --engines: engine counts separated by
// commas or spaces ("1,2,4").
type countsValue []int

func (v *countsValue) Type() string { return "counts" }

func (v *countsValue) String() string {
	s := make([]string, len(*v))
	for i, n := range *v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func (v *countsValue) Set(text string) error {
	var counts []int
	for _, s := range stageSplit.Split(strings.TrimSpace(text), -1) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > config.MaxReplicas {
			return &flagError{fmt.Sprintf("%q is not an engine count (1 to %d)", s, config.MaxReplicas)}
		}
		counts = append(counts, n)
	}
	*v = counts
	return nil
}

// override sets one config field from the flag of that name when it was
// given. plan marks the flags that change the campaign's plan, which
// --resume keeps as it was.
type override struct {
	flag string
	plan bool
	set  func(o *runOptions, c *config.Campaign) error
}

// overrides are every flag that overrides the config, in one table.
var overrides = []override{
	{"target", true, func(o *runOptions, c *config.Campaign) error {
		if o.target != "" {
			c.Target.URL = o.target
		}
		return nil
	}},
	{"stages", true, func(o *runOptions, c *config.Campaign) error { c.Stages = o.stages; return nil }},
	{"rounds", true, func(o *runOptions, c *config.Campaign) error { c.Rounds = o.rounds; return nil }},
	{"duration", true, func(o *runOptions, c *config.Campaign) error { c.Duration = o.duration; return nil }},
	{"warmup", true, func(o *runOptions, c *config.Campaign) error { c.Warmup = o.warmup; return nil }},
	{"agents", true, func(o *runOptions, c *config.Campaign) error { c.Agents.Count = o.agents; return nil }},
	{"users", false, func(o *runOptions, c *config.Campaign) error { c.Users.Count = o.users; return nil }},
	{"replicas", true, func(o *runOptions, c *config.Campaign) error { c.Kube.Engines.Replicas = o.replicas; return nil }},
	{"engines", true, func(o *runOptions, c *config.Campaign) error { c.Target.Embedded.Engines = o.engines; return nil }},
	{"pause-hpa", false, func(o *runOptions, c *config.Campaign) error { c.Kube.Engines.PauseHPA = o.pauseHPA; return nil }},
	{"subject-alg", false, func(o *runOptions, c *config.Campaign) error {
		c.Subject.Alg = o.subjectAlg
		if c.Embedded() && c.Target.Embedded.SigningAlg == jose.RS256 {
			// The embedded server signs with the same family unless configured.
			c.Target.Embedded.SigningAlg = o.subjectAlg
		}
		return nil
	}},
	{"subject-key", false, func(o *runOptions, c *config.Campaign) error { c.Subject.KeyFile = o.subjectKey; return nil }},
	{"subject-issuer", false, func(o *runOptions, c *config.Campaign) error { c.Subject.Issuer = o.subjectIssuer; return nil }},
	{"subject-token-type", false, func(o *runOptions, c *config.Campaign) error {
		c.Request.SubjectTokenType = o.subjectTokenType
		return nil
	}},
	{"subject-audience", false, func(o *runOptions, c *config.Campaign) error { c.Subject.Audience = o.subjectAudience; return nil }},
	{"auth-method", false, func(o *runOptions, c *config.Campaign) error { c.Request.AuthMethod = o.authMethod; return nil }},
	{"subject-claim", false, func(o *runOptions, c *config.Campaign) error {
		for _, kv := range o.claims {
			if err := c.SetClaim(kv); err != nil {
				return fmt.Errorf("--subject-claim %w", err)
			}
		}
		return nil
	}},
	{"form", false, func(o *runOptions, c *config.Campaign) error {
		for _, kv := range o.form {
			if err := c.SetFormField(kv); err != nil {
				return fmt.Errorf("--form %w", err)
			}
		}
		return nil
	}},
	{"http", false, func(o *runOptions, c *config.Campaign) error { c.Target.HTTP = o.httpProto; return nil }},
	{"new-connection-per-request", false, func(o *runOptions, c *config.Campaign) error {
		keep := !o.perRequest
		c.Target.KeepAlive = &keep
		return nil
	}},
	{"premint", false, func(o *runOptions, c *config.Campaign) error { c.Subject.Premint = o.premint; return nil }},
	{"no-sanity", false, func(o *runOptions, c *config.Campaign) error { c.Sanity.Enabled = !o.noSanity; return nil }},
	{"out", false, func(o *runOptions, c *config.Campaign) error { c.Out = o.out; return nil }},
	{"ca-file", false, func(o *runOptions, c *config.Campaign) error { c.Target.CAFile = o.caFile; return nil }},
	{"insecure", false, func(o *runOptions, c *config.Campaign) error { c.Target.InsecureSkipVerify = o.insecure; return nil }},
	{"unreachable-after", false, func(o *runOptions, c *config.Campaign) error {
		c.Target.UnreachableAfter = o.unreachable
		return nil
	}},
	{"allow-warning", false, func(o *runOptions, c *config.Campaign) error {
		c.Thresholds.AllowWarnings = nil
		for _, w := range o.allowWarn {
			code := stats.WarningCode(strings.TrimSpace(w))
			if !code.Invalidating() {
				return fmt.Errorf("--allow-warning: %q is not a warning that fails the verdict (%s)", w, config.InvalidatingList())
			}
			c.Thresholds.AllowWarnings = append(c.Thresholds.AllowWarnings, code)
		}
		return nil
	}},
}

// applyOverrides sets the config fields of the flags given, in table order.
func (o *runOptions) applyOverrides(fl *pflag.FlagSet) error {
	for _, ov := range overrides {
		if fl.Changed(ov.flag) {
			if err := ov.set(o, &o.cfg); err != nil {
				return err
			}
		}
	}
	return nil
}

// planFlags are the flags --resume excludes.
func planFlags() []string {
	var out []string
	for _, ov := range overrides {
		if ov.plan {
			out = append(out, ov.flag)
		}
	}
	return out
}

// pidValue is --pid: a process id, or listen.
type pidValue string

func (v *pidValue) Type() string   { return "pid|listen" }
func (v *pidValue) String() string { return string(*v) }

func (v *pidValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if s != local.PIDListen {
		if n, err := strconv.Atoi(s); err != nil || n <= 0 || n > 1<<22 {
			return &flagError{fmt.Sprintf("%q is neither a process id nor %s", s, local.PIDListen)}
		}
	}
	*v = pidValue(s)
	return nil
}
