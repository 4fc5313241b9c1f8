package cli

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokex-dev/tokex/internal/termsafe"
	"github.com/tokex-dev/tokex/runner/kube"
	"github.com/tokex-dev/tokex/runner/smoke"
)

func newSmokeCmd() *cobra.Command {
	o := &runOptions{kube: newKubeConn()}
	var direct string
	var lifetime time.Duration
	cmd := &cobra.Command{
		Use:   "smoke",
		Short: "One real token exchange before any load, with the issued token decoded and checked",
		Long: `Perform one token exchange as agent 0 with the campaign's request and check
the response as the campaign does (check.required, check.token_type), then
verify the issued token as check.verify does: its signature against the keys
of the target's metadata, iss and exp, aud (default the requested resource),
the client (check.verify.client) and exp − iat (check.verify.lifetime or
--lifetime). A target without metadata is noted, unless check.verify.sample
is set. Then one exchange as every other agent (agents.count), each with its
own credential, naming the clients that failed. Without --url it goes
through a port-forward to the engine Service (kube.engines), like the
article's smoke test. Tokens and secrets are printed truncated.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if direct != "" && o.target == "" { // a remote target: stored secret and subject key
				_ = cmd.Flags().Set("target", direct)
			}
			if err := o.complete(cmd); err != nil {
				return err
			}
			target := o.cfg.Target.URL
			if direct != "" {
				target = direct
			}
			if target == "" {
				return fmt.Errorf("give --url, or target.url with kube.engines.service")
			}
			return o.smoke(cmd, target, direct == "", lifetime)
		},
	}
	o.campaignFlags(cmd)
	for _, name := range smokeIgnores {
		_ = cmd.Flags().MarkHidden(name) // accepted, as before, but not offered
	}
	cmd.Flags().StringVar(&direct, "url", "", "token endpoint to call directly (no port-forward)")
	cmd.Flags().DurationVar(&lifetime, "lifetime", 0, "expected issued-token lifetime (exp − iat); default check.verify.lifetime")
	cmd.Flags().BoolVar(&o.insecure, "insecure", false, "do not verify the server's TLS certificate")
	return cmd
}

// smokeIgnores are the campaign flags that change nothing a smoke test
// does: the plan (it sends one exchange per agent, not runs) and the
// number of users (it mints for the first).
var smokeIgnores = []string{"stages", "rounds", "duration", "warmup", "no-sanity", "users", "replicas", "pause-hpa"}

// smoke runs one exchange against target, through a port-forward to the
// engine Service when forward and kube.engines.service is set.
func (o *runOptions) smoke(cmd *cobra.Command, target string, forward bool, lifetime time.Duration) error {
	c := &o.cfg
	tlsCfg, err := smoke.TLSConfig(c, target, o.insecure)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
	defer cancel()
	out := termsafe.Writer(cmd.OutOrStdout()) // what the server answers is shown, never obeyed
	if forward && c.Kube.Engines.Service != "" {
		tu, _ := url.Parse(target) // TLSConfig parsed it
		if err := o.kube.connect(c.Kube.Namespace); err != nil {
			return err
		}
		ns := c.Kube.Engines.Namespace
		if ns == "" {
			ns = o.kube.Namespace
		}
		local, stop, err := kube.Forward(ctx, o.kube.Config, o.kube.Client, ns, c.Kube.Engines.Service, c.Kube.Engines.Port)
		if err != nil {
			return err
		}
		defer stop()
		fmt.Fprintf(out, "port-forward 127.0.0.1:%d → service %s/%s:%d\n", local, ns, c.Kube.Engines.Service, c.Kube.Engines.Port)
		tu.Host = fmt.Sprintf("127.0.0.1:%d", local)
		target = tu.String()
	}
	so := smoke.Options{Cfg: o.cfg, Key: o.key, Secret: o.secret, URL: target, TLS: tlsCfg, Lifetime: lifetime, ClientKeys: o.clientKeys}
	if o.clientCerts != nil { // each agent's certificate
		so.ClientCerts = o.clientCerts.Certs
	}
	passed, err := smoke.Run(ctx, out, so)
	switch {
	case err != nil:
		return err
	case !passed:
		return &exitError{code: ExitThresholds}
	}
	fmt.Fprintln(out, "smoke test passed")
	return nil
}
