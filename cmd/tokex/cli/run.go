package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/report"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/internal/confload"
	"github.com/tokex-dev/tokex/internal/statedir"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/kube"
	"github.com/tokex-dev/tokex/runner/local"
	"github.com/tokex-dev/tokex/subject"
	"github.com/tokex-dev/tokex/tui"
	"github.com/tokex-dev/tokex/tui/headless"
)

type runOptions struct {
	config       string
	profile      string
	out          string
	noTUI        bool
	target       string
	stages       string
	rounds       int
	duration     time.Duration
	warmup       time.Duration
	agents       int
	users        int
	subjectAlg   string
	subjectKey   string
	clientSecret string
	noSanity     bool
	resume       string
	caFile       string
	insecure     bool
	serverExe    string
	driver       string
	allowWarn    []string
	unreachable  time.Duration
	kube         *kubeConn
	// request and subject-token shape
	subjectIssuer, subjectTokenType, subjectAudience, authMethod string
	claims, form                                                 []string

	cfg    config.Campaign
	doc    *confload.Doc
	done   map[string]*stats.Run
	id     string
	secret string
	// secretSource says where the client secret came from (never the secret).
	secretSource string
	key          *subject.Key
}

func newRunCmd() *cobra.Command {
	o := &runOptions{kube: newKubeConn()}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a token-exchange campaign (the embedded default needs no cluster)",
		Long: `Run a campaign: a sanity run, then every stage × round at a constant arrival
rate, recording evidence and printing the article's tables.

With no arguments tokex starts its reference server as a child process and runs
the "quick" profile against it (about two minutes). --config campaign.yaml (see
'tokex init') starts from the article's campaign instead; flags override both.

Exit codes: 0 thresholds passed, 1 a threshold failed, 2 the campaign could not
run, 130 interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(cmd); err != nil {
				return &exitError{code: ExitCannotRun, err: err}
			}
			return o.run(cmd)
		},
	}
	f := cmd.Flags()
	o.campaignFlags(cmd)
	f.StringVarP(&o.out, "out", "o", "", "evidence parent folder (default ./tokex-evidence)")
	f.BoolVar(&o.noTUI, "no-tui", false, "plain progress lines (automatic when stdout is not a terminal)")
	f.StringVar(&o.subjectAlg, "subject-alg", "", "subject-token algorithm RS256|ES256|EdDSA")
	f.StringVar(&o.resume, "resume", "", "continue the interrupted campaign in this evidence folder")
	f.StringVar(&o.caFile, "ca-file", "", "CA certificate (PEM) trusted for an https --target")
	f.BoolVar(&o.insecure, "insecure", false, "do not verify the target's TLS certificate")
	f.StringVar(&o.serverExe, "server-exe", "", "tokex binary to start as the embedded server (default: this one)")
	_ = f.MarkHidden("server-exe")
	f.StringVar(&o.driver, "driver", "", "where the load runs: local (default) or kube")
	f.DurationVar(&o.unreachable, "unreachable-after", 0, "stop when the target answered nothing this long, every request refused or timed out (default 10s)")
	f.StringSliceVar(&o.allowWarn, "allow-warning", nil, "let runs with this warning pass (generator_late, generator_starved, host_saturated; repeatable)")
	return cmd
}

var stageSplit = regexp.MustCompile(`[,\s]+`)

func (o *runOptions) complete(cmd *cobra.Command) error {
	var err error
	if o.resume != "" {
		if err := o.loadResume(); err != nil {
			return err
		}
	} else if o.config != "" {
		if o.cfg, o.doc, err = config.Load(o.config, o.profile); err != nil {
			return err
		}
	} else {
		p := o.profile
		if p == "" {
			p = "quick"
		}
		if o.cfg, err = config.FromProfile(p); err != nil {
			return err
		}
	}
	c := &o.cfg
	fl := cmd.Flags()
	if o.resume != "" && (fl.Changed("stages") || fl.Changed("rounds") || fl.Changed("duration") || fl.Changed("warmup") || fl.Changed("agents") || fl.Changed("target")) {
		return errors.New("--resume continues the campaign as it was planned; do not change its plan")
	}
	if o.target != "" {
		c.Target.URL = o.target
	}
	if o.driver != "" {
		c.Driver = o.driver
	}
	if fl.Changed("stages") {
		c.Stages = nil
		for _, s := range stageSplit.Split(strings.TrimSpace(o.stages), -1) {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return fmt.Errorf("--stages: %q is not a number", s)
			}
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("--stages: %q is not a finite number", s)
			}
			c.Stages = append(c.Stages, v)
		}
	}
	if fl.Changed("rounds") {
		c.Rounds = o.rounds
	}
	if fl.Changed("duration") {
		c.Duration = o.duration
	}
	if fl.Changed("warmup") {
		c.Warmup = o.warmup
	}
	if fl.Changed("agents") {
		c.Agents.Count = o.agents
	}
	if fl.Changed("users") {
		c.Users.Count = o.users
	}
	if fl.Changed("subject-alg") {
		c.Subject.Alg = o.subjectAlg
		if c.Embedded() && c.Target.Embedded.SigningAlg == subject.RS256 {
			// The embedded server signs with the same family unless configured.
			c.Target.Embedded.SigningAlg = o.subjectAlg
		}
	}
	if fl.Changed("subject-key") {
		c.Subject.KeyFile = o.subjectKey
	}
	if err := o.applyShape(fl, c); err != nil {
		return err
	}
	if fl.Changed("no-sanity") {
		c.Sanity.Enabled = !o.noSanity
	}
	if fl.Changed("out") {
		c.Out = o.out
	}
	if fl.Changed("ca-file") {
		c.Target.CAFile = o.caFile
	}
	if fl.Changed("insecure") {
		c.Target.InsecureSkipVerify = o.insecure
	}
	if fl.Changed("unreachable-after") {
		c.Target.UnreachableAfter = o.unreachable
	}
	if fl.Changed("allow-warning") {
		c.Thresholds.AllowWarnings = nil
		for _, w := range o.allowWarn {
			code := stats.WarningCode(strings.TrimSpace(w))
			if !code.Invalidating() {
				return fmt.Errorf("--allow-warning: %q is not a warning that fails the verdict (%s)", w, config.InvalidatingList())
			}
			c.Thresholds.AllowWarnings = append(c.Thresholds.AllowWarnings, code)
		}
	}
	if err := c.Validate(o.doc); err != nil {
		return err
	}

	if err := o.credentials(c); err != nil {
		return err
	}
	if o.id == "" {
		// The id a new campaign would get now (tokex manifests shows it);
		// run takes a free one when it creates the folder.
		o.id = evidence.NewID(time.Now(), c.Name)
	}
	return nil
}

// applyShape applies the flags that shape the request and the subject
// token.
func (o *runOptions) applyShape(fl *pflag.FlagSet, c *config.Campaign) error {
	if fl.Changed("subject-issuer") {
		c.Subject.Issuer = o.subjectIssuer
	}
	if fl.Changed("subject-token-type") {
		c.Request.SubjectTokenType = o.subjectTokenType
	}
	if fl.Changed("subject-audience") {
		c.Subject.Audience = o.subjectAudience
	}
	if fl.Changed("auth-method") {
		c.Request.AuthMethod = o.authMethod
	}
	for _, kv := range o.claims {
		if err := c.SetClaim(kv); err != nil {
			return fmt.Errorf("--subject-claim %w", err)
		}
	}
	for _, kv := range o.form {
		if err := c.SetFormField(kv); err != nil {
			return fmt.Errorf("--form %w", err)
		}
	}
	return nil
}

// credentials picks the client secret (flag, environment, config, then a
// random or stored one), says where it came from, and the subject key.
func (o *runOptions) credentials(c *config.Campaign) error {
	var err error
	// Secrets: flag, environment, config; never written anywhere.
	o.secret, o.secretSource = o.clientSecret, "--client-secret"
	if o.secret == "" {
		o.secret, o.secretSource = os.Getenv("TOKEX_CLIENT_SECRET"), "TOKEX_CLIENT_SECRET"
	}
	if o.secret == "" {
		o.secret, o.secretSource = c.Agents.ClientSecret, "agents.client_secret of the config"
	}
	if o.secret == "" {
		if c.Embedded() && c.Driver != "kube" {
			o.secret, o.secretSource = randomSecret(), "a random secret for this campaign's embedded server"
		} else if o.secret, err = statedir.ClientSecret(); err != nil {
			return fmt.Errorf("client secret: %w", err)
		} else {
			dir, _ := statedir.Dir()
			o.secretSource = "tokex's stored secret (" + filepath.Join(dir, "client-secret") +
				"), none given: the target's clients must have it, else pass --client-secret or TOKEX_CLIENT_SECRET"
		}
	}
	switch {
	case c.Subject.KeyFile != "":
		o.key, err = subject.LoadPEM(c.Subject.KeyFile)
	case c.Embedded() && c.Driver != "kube":
		o.key, err = subject.GenerateKey(c.Subject.Alg) // the child trusts it for this campaign only
	default:
		o.key, _, err = subject.StoredKey(c.Subject.Alg) // one stored key per algorithm
	}
	if err != nil {
		return fmt.Errorf("subject key: %w", err)
	}
	o.key = o.key.WithKid(c.Subject.Kid)
	return nil
}

func (o *runOptions) loadResume() error {
	f, err := evidence.Open(o.resume)
	if err != nil {
		return err
	}
	if f.Manifest.Status == "done" {
		return fmt.Errorf("%s: the campaign already finished", o.resume)
	}
	if o.cfg, o.doc, err = config.Load(filepath.Join(o.resume, evidence.ConfigFile), "article"); err != nil {
		return err
	}
	o.cfg.Agents.ClientSecret = "" // redacted in the folder
	o.id = f.Manifest.CampaignID
	o.done = map[string]*stats.Run{}
	for _, r := range f.Manifest.Runs {
		if r.Status == string(stats.StatusDone) {
			st, err := f.RunStats(r.ID)
			if err != nil {
				return fmt.Errorf("resume: run %s: %w", r.ID, err)
			}
			o.done[r.ID] = st
		}
	}
	return nil
}

func randomSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (o *runOptions) run(cmd *cobra.Command) error {
	stdout := cmd.OutOrStdout()
	c := o.cfg
	var w *evidence.Writer
	var err error
	if o.resume != "" {
		w, err = evidence.Resume(o.resume)
	} else {
		var y []byte
		if y, err = c.Redacted(); err == nil {
			host, _ := os.Hostname()
			now := time.Now()
			w, err = evidence.CreateNew(c.Out, c.Name, now, y, evidence.Manifest{
				Tool: "tokex", Version: Version, Host: host, GoVersion: goVersion(), CPUs: runtime.NumCPU(),
				Name: c.Name, Driver: c.Driver, Started: now,
			})
		}
	}
	if err != nil {
		return &exitError{code: ExitCannotRun, err: err}
	}
	dir := w.Dir
	o.id = w.Manifest().CampaignID
	for _, n := range w.Notes() {
		fmt.Fprintln(cmd.ErrOrStderr(), "tokex: resume:", n)
	}
	bus := &event.Bus{}
	bus.Subscribe(w.Consume)
	useTUI := !o.noTUI && isTerminal(stdout)

	var drv runner.Driver
	if c.Driver == "kube" {
		if err := o.kube.connect(c.Kube.Namespace); err != nil {
			return &exitError{code: ExitCannotRun, err: err}
		}
		drv = &kube.Driver{Cfg: c, CampaignID: o.id, Client: o.kube.Client, Metrics: o.kube.Metrics, Namespace: o.kube.Namespace,
			Context: o.kube.Context, Secret: o.secret, Key: o.key, API: o.kube.API}
	} else {
		drv = &local.Driver{Cfg: c, CampaignID: o.id, Secret: o.secret, SubjectKey: o.key, Exe: o.serverExe}
	}
	camp := &runner.Campaign{Cfg: c, ID: o.id, Driver: drv, Bus: bus, Evidence: w, Tool: "tokex " + Version, Done: o.done, SecretSource: o.secretSource}

	// The generator's heap is small and churns per request; at the default
	// GOGC it collects ten times a second, and mark assists show up as send
	// lag. Memory is cheap here, latency is what is measured.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var interrupted atomic.Bool
	stop := func() {
		if interrupted.CompareAndSwap(false, true) {
			cancel()
		}
	}
	go func() {
		<-sigs
		if !useTUI {
			fmt.Fprintln(cmd.ErrOrStderr(), "\ntokex: stopping the current run and keeping the evidence (Ctrl-C again to exit at once)")
		}
		stop()
		<-sigs
		fmt.Fprintln(cmd.ErrOrStderr(), "tokex: exiting at once")
		os.Exit(ExitInterrupted)
	}()

	var sum *stats.Summary
	var runErr, closeErrTUI error
	if useTUI {
		m := tui.New(tui.Options{Live: true, OnStop: stop})
		prog := tui.NewProgram(m, tea.WithOutput(stdout))
		bus.Subscribe(prog.Consume)
		finished := make(chan struct{})
		go func() {
			sum, runErr = camp.Run(ctx)
			// Stop the embedded server and the samplers now, not when the
			// user leaves the final screen.
			closeErrTUI = drv.Close()
			close(finished)
		}()
		if err := prog.Run(); err != nil {
			stop()
			fmt.Fprintln(cmd.ErrOrStderr(), "tokex: terminal UI:", err)
		}
		select {
		case <-finished:
		default:
			if m.Stopping() {
				// Ctrl-C twice in the dashboard: out at once; the embedded
				// server dies with us and finished runs are on disk.
				fmt.Fprintln(cmd.ErrOrStderr(), "tokex: exiting at once")
				os.Exit(ExitInterrupted)
			}
			stop()
			<-finished
		}
		if sum != nil {
			fmt.Fprint(stdout, headless.Report(sum))
		}
	} else {
		bus.Subscribe(headless.New(stdout).Consume)
		sum, runErr = camp.Run(ctx)
	}
	var closeErr error
	if useTUI {
		closeErr = closeErrTUI
	} else {
		closeErr = drv.Close()
	}
	if file, err := report.Write(dir, ""); err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "tokex: report:", err)
	} else {
		fmt.Fprintf(stdout, "\nreport:   %s", file)
	}
	fmt.Fprintf(stdout, "\nevidence: %s\n", dir)
	switch {
	case interrupted.Load() || (sum != nil && sum.Status == "aborted"):
		fmt.Fprintf(stdout, "interrupted: finished runs are kept; continue with: tokex run --resume %s\n", dir)
		return &exitError{code: ExitInterrupted}
	case errors.Is(runErr, runner.ErrUnreachable):
		fmt.Fprintf(stdout, "the target stopped answering: finished runs are kept; once it is back, continue with: tokex run --resume %s\n", dir)
		return &exitError{code: ExitCannotRun, err: runErr}
	case runErr != nil:
		return &exitError{code: ExitCannotRun, err: runErr}
	case closeErr != nil:
		fmt.Fprintln(cmd.ErrOrStderr(), "tokex: warning:", closeErr)
	}
	if sum == nil || !sum.ThresholdsPassed {
		return &exitError{code: ExitThresholds}
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
