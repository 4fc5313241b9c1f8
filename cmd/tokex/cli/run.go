package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/report"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/collector/summary"
	"github.com/tokex-dev/tokex/exchange"
	"github.com/tokex-dev/tokex/internal/confload"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/owner"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/kube"
	"github.com/tokex-dev/tokex/runner/local"
	"github.com/tokex-dev/tokex/tui"
	"github.com/tokex-dev/tokex/tui/headless"
)

type runOptions struct {
	config       string
	profile      string
	out          string
	noTUI        bool
	target       string
	stages       stagesValue
	rounds       int
	duration     time.Duration
	warmup       time.Duration
	agents       int
	users        int
	replicas     countsValue // --replicas (kube)
	engines      countsValue // --engines (local)
	pauseHPA     bool
	subjectAlg   string
	subjectKey   string
	clientSecret string
	noSanity     bool
	premint      bool
	resume       string
	trustFolder  bool
	resumed      *runner.Resumed
	pid          pidValue
	caFile       string
	insecure     bool
	engine       string
	driver       string
	allowWarn    []string
	unreachable  time.Duration
	// hostCheck and waitQuiet: the machine sampled before the first run,
	// and how long to wait for it to be quiet (local driver).
	hostCheck, waitQuiet time.Duration
	kube                 *kubeConn
	// request and subject-token shape
	subjectIssuer, subjectTokenType, subjectAudience, authMethod, httpProto string
	perRequest                                                              bool
	claims, form                                                            []string
	cost                                                                    costOptions
	live                                                                    liveOptions
	deps                                                                    deps

	cfg    config.Campaign
	doc    *confload.Doc
	done   map[string]*stats.Run
	id     string
	secret string
	// secretSource says where the client secret came from (never the secret).
	secretSource string
	// clientKeys are the agents' private_key_jwt keys.
	clientKeys []*jose.Key
	// clientCerts are the agents' tls_client_auth certificates.
	clientCerts *config.ClientCerts
	key         *jose.Key
	// actorKey signs the agents' actor tokens (subject.actor minted).
	actorKey *jose.Key
	// engine is the engine process a resumed campaign sampled last.
	sampled *evidence.EngineProcess
}

func newRunCmd(d deps) *cobra.Command {
	o := &runOptions{kube: newKubeConn(), deps: d}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a token-exchange campaign (the embedded default needs no cluster)",
		Long: `Run a campaign: a sanity run, then every stage × round at a constant arrival
rate, recording evidence. It ends with the answer — the verdict and why, each
stage's p95 and CPU per exchange, where the report is — then one line per
warning code and the article's tables. Before the first run it samples this
machine (--host-check) and says at once when other processes already use most
of its cores; --wait-quiet waits for a quiet one.

With no arguments tokex starts its reference server as a child process and runs
the "quick" profile against it (about two minutes). --config campaign.yaml (see
'tokex init') starts from the article's campaign instead; flags override both.

Exit codes: 0 thresholds passed, 1 a threshold failed, 2 the campaign could not
run, 130 interrupted.`,
		Args: cobra.NoArgs,
		RunE: o.runE,
	}
	o.runFlags(cmd)
	o.cost.flags(cmd, false)
	return cmd
}

// runFlags are the flags of run and capacity.
func (o *runOptions) runFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	o.campaignFlags(cmd)
	f.StringVarP(&o.out, "out", "o", "", "evidence parent folder (default ./tokex-evidence)")
	f.BoolVar(&o.noTUI, "no-tui", false, "plain progress lines (automatic when stdout is not a terminal)")
	f.StringVar(&o.subjectAlg, "subject-alg", "", "subject-token algorithm RS256|ES256|EdDSA")
	f.BoolVar(&o.premint, "premint", false, "sign each run's subject tokens before it starts (memory only): no signing CPU in the measured window")
	f.StringVar(&o.resume, "resume", "", "continue the interrupted campaign in this evidence folder")
	f.BoolVar(&o.trustFolder, "trust-folder", false, "resume a folder this user's tokex did not write (or whose config.yaml was edited): follow its config.yaml")
	f.Var(&o.pid, "pid", "the engine's process on this host, instead of target.pid or target.pid_file: a PID, or listen (the process listening on the target's port); a resumed server that restarted has a new one")
	f.StringVar(&o.caFile, "ca-file", "", "CA certificate (PEM) trusted for an https --target")
	f.BoolVar(&o.insecure, "insecure", false, "do not verify the target's TLS certificate")
	f.StringVar(&o.engine, "engine", "", "the embedded server's program, tokex-engine (default: $TOKEX_ENGINE, target.embedded.engine, beside tokex, or tokex itself)")
	f.Var(&o.engines, "engines", "embedded engine counts measured in turn, e.g. 1,2: that many tokex-engine processes sharing the port, each pinned to its own CPUs (docs/scaling.md)")
	f.StringVar(&o.driver, "driver", "", "where the load runs: local (default) or kube")
	f.DurationVar(&o.unreachable, "unreachable-after", 0, "stop when requests fail and the target neither answered nor accepted a connection this long (default 10s)")
	f.StringSliceVar(&o.allowWarn, "allow-warning", nil, "let runs with this warning pass (generator_late, generator_starved, host_saturated; repeatable)")
	o.live.flags(cmd)
	f.DurationVar(&o.hostCheck, "host-check", local.DefaultHostCheck, "sample this machine this long before the first run and say at once when other processes use most of its cores (local driver; 0s: skip)")
	f.DurationVar(&o.waitQuiet, "wait-quiet", 0, "when other processes use most of the cores, wait at most this long for a quiet machine before the first run, showing the wait (local driver)")
	for _, name := range planFlags() { // a resumed campaign keeps its plan
		cmd.MarkFlagsMutuallyExclusive("resume", name)
	}
}

// complete loads the config (or the resumed campaign's), applies the flags
// that override it, validates it and resolves the credentials.
func (o *runOptions) complete(cmd *cobra.Command) error {
	if err := o.load(); err != nil {
		return err
	}
	if o.driver != "" { // --driver, or a command that only drives kube
		o.cfg.Driver = o.driver
	}
	if err := o.applyOverrides(cmd.Flags()); err != nil {
		return err
	}
	c := &o.cfg
	if err := c.Validate(o.doc); err != nil {
		return err
	}
	if err := quietApplies(o.hostCheck, o.waitQuiet, *c); err != nil {
		return err
	}
	if o.resumed != nil { // before any credential is read
		if err := o.trustResume(cmd.ErrOrStderr()); err != nil {
			return err
		}
	}
	var err error
	if o.secret, o.secretSource, err = c.AgentSecret(o.clientSecret); err != nil {
		return err
	}
	switch exchange.AuthMethod(c.Request.AuthMethod) {
	case exchange.AuthPrivateKeyJWT:
		if o.clientKeys, o.secretSource, err = c.ClientKeys(); err != nil {
			return err
		}
	case exchange.AuthTLSClient:
		if o.clientCerts, err = c.ClientCerts(); err != nil {
			return err
		}
		o.secretSource = o.clientCerts.Source
	}
	if o.key, err = c.SubjectKey(); err != nil {
		return err
	}
	if c.Subject.Actor.Source == config.ActorMinted {
		if o.actorKey, err = c.ActorKey(); err != nil {
			return err
		}
	}
	if o.resume == "" {
		o.cfg.Workload.DrawSeed() // before config.yaml records it
	}
	if o.resumed != nil { // before anything is sent
		fmt.Fprintf(cmd.ErrOrStderr(), "tokex: resume: %s\n", runner.Reach(c, o.secretSource, o.resumeEngine()))
	}
	if o.id == "" {
		// The id a new campaign would get now (tokex manifests shows it);
		// run takes a free one when it creates the folder.
		o.id = evidence.NewID(time.Now(), c.Name)
	}
	return nil
}

// load reads the resumed campaign's config, --config, or a profile.
func (o *runOptions) load() error {
	var err error
	switch {
	case o.resume != "":
		r, err := runner.LoadResume(o.resume)
		if err != nil {
			return err
		}
		o.cfg, o.doc, o.id, o.done, o.resumed, o.sampled = r.Cfg, r.Doc, r.ID, r.Done, r, r.Engine
		// The folder says what the campaign is, whichever command resumes it.
		if r.Stages && o.cost.search {
			return fmt.Errorf("%s ran stages, not a capacity search: continue it with tokex run --resume %s", o.resume, o.resume)
		}
		o.cost.search = o.cost.search || r.Search
	case o.config != "":
		o.cfg, o.doc, err = config.Load(o.config, o.profile)
	default:
		p := o.profile
		if p == "" {
			p = "quick"
		}
		o.cfg, err = config.FromProfile(p)
	}
	return err
}

func (o *runOptions) run(cmd *cobra.Command) error {
	w, err := o.openEvidence()
	if err != nil {
		return err
	}
	o.id = w.Manifest().CampaignID
	for _, n := range w.Notes() {
		fmt.Fprintln(cmd.ErrOrStderr(), "tokex: resume:", n)
	}
	bus := &event.Bus{}
	bus.Subscribe(w.Consume)
	drv, err := o.newDriver()
	if err != nil {
		return err
	}
	camp := &runner.Campaign{Cfg: o.cfg, ID: o.id, Driver: drv, Bus: bus, Evidence: w, Tool: "tokex " + Version, Done: o.done, SecretSource: o.secretSource, Search: o.cost.search}
	stopExport, err := o.live.exporter(bus, cmd.ErrOrStderr())
	if err != nil {
		_ = drv.Close()
		return err
	}

	// The generator's heap is small and churns per request; at the default
	// GOGC it collects ten times a second, and mark assists show up as send
	// lag. Memory is cheap here, latency is what is measured.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	useTUI := !o.noTUI && isTerminal(cmd.OutOrStdout())
	intr := onSignals(cmd, useTUI, cancel)
	defer intr.close()
	res := outcome{search: o.cost.search}
	if useTUI {
		res = runTUI(ctx, cmd, camp, bus, intr)
	} else {
		pr := headless.New(cmd.OutOrStdout())
		pr.Deferred = true // finish prints the last screen, with the report
		bus.Subscribe(pr.Consume)
		res.sum, res.runErr = camp.Run(ctx)
		res.closeErr = drv.Close()
	}
	stopExport(intr.stopped.Load())
	if err := o.live.writeJUnit(res.sum, res.search); err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "tokex: --junit:", err)
	}
	return finish(cmd, w.Dir, res, intr.stopped.Load())
}

// openEvidence creates the campaign's evidence folder, or reopens the
// resumed one.
func (o *runOptions) openEvidence() (*evidence.Writer, error) {
	if o.resume != "" {
		return evidence.Resume(o.resume)
	}
	c := o.cfg
	y, err := c.Redacted()
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	now := time.Now()
	return evidence.CreateNew(c.Out, c.Name, now, y, evidence.Manifest{
		Tool: "tokex", Version: Version, Host: host, GoVersion: goVersion(), CPUs: runtime.NumCPU(),
		Name: c.Name, Driver: c.Driver, Started: now, Owner: seal(y),
	})
}

// seal is the owner seal of a new folder's config.yaml, "" when tokex's
// state folder cannot hold its key (a resume then asks --trust-folder).
func seal(configYAML []byte) string {
	s, _ := owner.Seal(configYAML)
	return s
}

// trustResume checks the folder before any credential is read or sent:
// the config must agree with what the manifest recorded, and a folder this
// user's tokex did not seal (written elsewhere, or its config.yaml edited)
// is followed only with --trust-folder; complete then says where the
// credentials go.
func (o *runOptions) trustResume(w io.Writer) error {
	r := o.resumed
	if d := r.Disagreements(&o.cfg, o.cost.search); len(d) > 0 {
		return fmt.Errorf("--resume %s: its config.yaml disagrees with its manifest.json, and a resume runs what the manifest recorded:\n  - %s\n(start a new campaign to change them)",
			o.resume, strings.Join(d, "\n  - "))
	}
	if r.Sealed {
		return nil
	}
	if !o.trustFolder {
		return fmt.Errorf("--resume %s: this folder was not written by this user's tokex, or its config.yaml was edited since (no valid owner seal in manifest.json); "+
			"resuming it would follow its config.yaml: %s. Read that config.yaml, then resume with --trust-folder",
			o.resume, runner.Reach(&o.cfg, "", o.resumeEngine()))
	}
	fmt.Fprintf(w, "tokex: resume: following the config.yaml of a folder this user's tokex did not write (--trust-folder)\n")
	return nil
}

// resumeEngine is the embedded server's program when one is named.
func (o *runOptions) resumeEngine() string {
	return cmp.Or(o.engine, os.Getenv(local.ServerEnv), o.cfg.Target.Embedded.Engine)
}

// newDriver is the configured driver, connected.
func (o *runOptions) newDriver() (runner.Driver, error) {
	c := o.cfg
	if err := pidApplies(o.pid, c); err != nil {
		return nil, err
	}
	if o.deps.driver != nil {
		return o.deps.driver(c)
	}
	if c.Driver != "kube" {
		return &local.Driver{Cfg: c, CampaignID: o.id, Secret: o.secret, SubjectKey: o.key, ActorKey: o.actorKey, ClientKeys: o.clientKeys,
			ClientCerts: o.clientCerts, ProgramSearch: o.programSearch(), PID: string(o.pid), Recorded: o.sampled, HostCheck: o.hostCheck, WaitQuiet: o.waitQuiet}, nil
	}
	if err := o.kube.connect(c.Kube.Namespace); err != nil {
		return nil, err
	}
	return &kube.Driver{Cfg: c, CampaignID: o.id, Client: o.kube.Client, Metrics: o.kube.Metrics, RESTConfig: o.kube.Config,
		Namespace: o.kube.Namespace, Context: o.kube.Context, Secret: o.secret, Key: o.key, ActorKey: o.actorKey, API: o.kube.API}, nil
}

// pidApplies refuses --pid where no engine process on this host is
// sampled. It overrides target.pid and target.pid_file without changing
// the campaign's configuration: a resumed server that restarted has a new
// PID, and the manifest records which process was sampled, and how found.
func pidApplies(pid pidValue, c config.Campaign) error {
	switch {
	case pid == "":
		return nil
	case c.Driver == "kube":
		return errors.New("--pid: the kube driver measures the engine Pods (kube.engines)")
	case c.Embedded():
		return errors.New("--pid: tokex measures its embedded server itself; --pid is for a target.url on this host")
	case c.Target.Cgroup != "" || c.Target.MetricsURL != "":
		return errors.New("--pid: this campaign measures the engine through target.cgroup or target.metrics_url")
	}
	return nil
}

// quietApplies bounds --host-check and --wait-quiet, which sample this
// machine: the one a local campaign's load runs on.
func quietApplies(check, wait time.Duration, c config.Campaign) error {
	switch {
	case check < 0 || check > time.Minute:
		return errors.New("--host-check must be between 0s and 1m")
	case wait < 0 || wait > 24*time.Hour:
		return errors.New("--wait-quiet must be between 0s and 24h")
	case wait > 0 && check == 0:
		return errors.New("--wait-quiet waits on the host check: give --host-check a duration")
	case wait > 0 && c.Driver == "kube":
		return errors.New("--wait-quiet: the kube driver's load runs in the cluster, not on this machine")
	}
	return nil
}

// interrupt is Ctrl-C handling: the first SIGINT or SIGTERM (or stop)
// stops the current run and keeps the evidence, the second exits at once.
type interrupt struct {
	sigs    chan os.Signal
	stopped atomic.Bool
	cancel  context.CancelFunc
}

func onSignals(cmd *cobra.Command, useTUI bool, cancel context.CancelFunc) *interrupt {
	in := &interrupt{sigs: make(chan os.Signal, 2), cancel: cancel}
	signal.Notify(in.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-in.sigs
		if !useTUI {
			fmt.Fprintln(cmd.ErrOrStderr(), "\ntokex: stopping the current run and keeping the evidence (Ctrl-C again to exit at once)")
		}
		in.stop()
		<-in.sigs
		fmt.Fprintln(cmd.ErrOrStderr(), "tokex: exiting at once")
		os.Exit(ExitInterrupted)
	}()
	return in
}

func (in *interrupt) stop() {
	if in.stopped.CompareAndSwap(false, true) {
		in.cancel()
	}
}

func (in *interrupt) close() { signal.Stop(in.sigs) }

// outcome is how a campaign ended and whether its driver closed cleanly.
type outcome struct {
	sum              *summary.Summary
	runErr, closeErr error
	search           bool // a capacity search: it passes when it found the capacity
}

// runTUI runs the campaign under the dashboard, then prints the tables.
func runTUI(ctx context.Context, cmd *cobra.Command, camp *runner.Campaign, bus *event.Bus, intr *interrupt) outcome {
	stdout := cmd.OutOrStdout()
	m := tui.New(tui.Options{Live: true, OnStop: intr.stop})
	prog := tui.NewProgram(m, tea.WithOutput(stdout))
	bus.Subscribe(prog.Consume)
	res := outcome{search: camp.Search}
	finished := make(chan struct{})
	go func() {
		res.sum, res.runErr = camp.Run(ctx)
		// Stop the embedded server and the samplers now, not when the
		// user leaves the final screen.
		res.closeErr = camp.Driver.Close()
		close(finished)
	}()
	if err := prog.Run(); err != nil {
		intr.stop()
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
		intr.stop()
		<-finished
	}
	return res
}

// finish writes the report, prints the last screen (the answer and where
// the report is first, then the tables), says where the evidence is and
// how to go on, and picks the exit code.
func finish(cmd *cobra.Command, dir string, res outcome, interrupted bool) error {
	stdout := cmd.OutOrStdout()
	file, err := report.Write(dir, "")
	if err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "tokex: report:", err)
	}
	if res.sum != nil {
		fmt.Fprint(stdout, "\n"+headless.Report(res.sum, file))
	} else if file != "" {
		fmt.Fprintf(stdout, "\nreport:   %s", file)
	}
	fmt.Fprintf(stdout, "\nevidence: %s\n", dir)
	sum := res.sum
	switch {
	case interrupted || (sum != nil && sum.Status == summary.CampaignAborted):
		fmt.Fprintf(stdout, "interrupted: finished runs are kept; continue with: tokex run --resume %s\n", dir)
		return &exitError{code: ExitInterrupted}
	case errors.Is(res.runErr, runner.ErrEngineExited):
		fmt.Fprintf(stdout, "the engine process is gone: finished runs are kept; once the server runs again, continue with: tokex run --resume %s --pid NEW_PID (or --pid listen: the process listening on the target's port)\n", dir)
		return res.runErr
	case errors.Is(res.runErr, runner.ErrUnreachable):
		fmt.Fprintf(stdout, "the target stopped answering: finished runs are kept; once it is back, continue with: tokex run --resume %s\n", dir)
		return res.runErr
	case res.runErr != nil:
		return res.runErr
	case res.closeErr != nil:
		fmt.Fprintln(cmd.ErrOrStderr(), "tokex: warning:", res.closeErr)
	}
	if res.search && !searchPassed(sum) || !res.search && (sum == nil || !sum.ThresholdsPassed) {
		return &exitError{code: ExitThresholds}
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// programSearch is where the local driver looks for the embedded server's
// program: --engine, $TOKEX_ENGINE, then its own defaults; tokex itself
// can be the embedded server (its hidden engine command).
func (o *runOptions) programSearch() local.ProgramSearch {
	return local.ProgramSearch{Explicit: cmp.Or(o.engine, os.Getenv(local.ServerEnv)), SelfArgs: []string{local.ServerArg}}
}

// runE completes the options from flags and config, then runs the campaign
// (tokex run and tokex capacity alike).
func (o *runOptions) runE(cmd *cobra.Command, _ []string) error {
	if err := o.complete(cmd); err != nil {
		return err
	}
	if err := o.applyCost(cmd); err != nil {
		return err
	}
	return o.run(cmd)
}
