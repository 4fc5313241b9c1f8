package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/tokex-dev/tokex/internal/termsafe"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/kube"
)

func newManifestsCmd() *cobra.Command {
	o := &runOptions{kube: newKubeConn()}
	cmd := &cobra.Command{
		Use:   "manifests",
		Short: "Print every Kubernetes object tokex would create for a campaign (secrets redacted)",
		Long: `Print the Secret, the ConfigMap with the k6 agent script and one Indexed Job
per run, as YAML, for review or for 'kubectl apply' by hand. It takes the same
config and override flags as 'tokex run --driver kube' and contacts no cluster.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.completeKube(cmd); err != nil {
				return err
			}
			ns, _, _ := o.kube.flags.ToRawKubeConfigLoader().Namespace()
			if o.cfg.Kube.Namespace != "" && *o.kube.flags.Namespace == "" {
				ns = o.cfg.Kube.Namespace
			}
			if ns == "" {
				ns = "default"
			}
			objs := &kube.Objects{Cfg: o.cfg, CampaignID: o.id, Namespace: ns, Secret: "[redacted]", Key: o.key}
			docs, err := objs.Manifests(runner.Plan(&o.cfg))
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), kube.ScalingNote(o.cfg, ns))
			return printYAML(cmd.OutOrStdout(), docs)
		},
	}
	o.campaignFlags(cmd)
	return cmd
}

// campaignFlags are the config and override flags shared by run-like commands.
func (o *runOptions) campaignFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "", "campaign YAML (tokex init writes one)")
	f.StringVar(&o.profile, "profile", "", "quick|article (default: quick, or article with --config)")
	f.StringVar(&o.target, "target", "", "token endpoint URL (for --driver kube: as seen from inside the cluster)")
	f.Var(&o.stages, "stages", "comma-separated exchanges/s, e.g. 100,250,500")
	f.IntVar(&o.rounds, "rounds", 0, "rounds of the whole ladder")
	f.DurationVar(&o.duration, "duration", 0, "measured duration of each run")
	f.DurationVar(&o.warmup, "warmup", 0, "warmup before each run's measured phase")
	f.IntVar(&o.agents, "agents", 0, "load agents (clients perf-agent-0..N-1)")
	f.IntVar(&o.users, "users", 0, "synthetic users (perf-user-001..N)")
	f.StringVar(&o.subjectKey, "subject-key", "", "subject-token signing key (PEM)")
	f.StringVar(&o.clientSecret, "client-secret", "", "client secret of the agents (or TOKEX_CLIENT_SECRET)")
	f.BoolVar(&o.noSanity, "no-sanity", false, "skip the discarded sanity run")
	f.StringVar(&o.subjectIssuer, "subject-issuer", "", "iss of the subject tokens (subject.issuer; 'tokex jwks --serve' prints it)")
	f.StringVar(&o.subjectTokenType, "subject-token-type", "", "subject_token_type: access_token|jwt|id_token or a URI")
	f.StringVar(&o.subjectAudience, "subject-audience", "", "aud of the subject tokens (default: the agent's client id)")
	f.StringArrayVar(&o.claims, "subject-claim", nil, "extra subject-token claim NAME=VALUE, VALUE JSON or a string with {{user}}, {{user_number}}, {{client_id}} (repeatable)")
	f.StringArrayVar(&o.form, "form", nil, "extra form field NAME=VALUE sent with every exchange, e.g. connector_id=tokex for Dex (repeatable)")
	f.StringVar(&o.authMethod, "auth-method", "", "client authentication: client_secret_basic, client_secret_post, private_key_jwt or tls_client_auth (the last two: local driver)")
	f.StringVar(&o.httpProto, "http", "", "HTTP protocol: 1.1|2|h2c (default: HTTP/2 when TLS offers it)")
	f.BoolVar(&o.perRequest, "new-connection-per-request", false, "no keep-alive: a new connection and handshake for every exchange")
	f.Var(&o.replicas, "replicas", "--driver kube: engine counts measured in turn, e.g. 1,2,4: the engines' workload scaled to each, restored at the end (docs/scaling.md)")
	f.BoolVar(&o.pauseHPA, "pause-hpa", false, "with --replicas: pin the engines' HorizontalPodAutoscaler to each count and restore its bounds at the end")
	o.kube.addFlags(f)
}

// completeKube is run's completion with the kube driver forced.
func (o *runOptions) completeKube(cmd *cobra.Command) error {
	o.driver = "kube"
	return o.complete(cmd)
}

func printYAML(w io.Writer, docs []any) error {
	for i, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		fmt.Fprint(w, string(b))
	}
	return nil
}

func newCleanupCmd() *cobra.Command {
	k := newKubeConn()
	var campaign string
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Delete every Job, Pod, Secret and ConfigMap tokex left in the namespace",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := k.connect(""); err != nil {
				return err
			}
			sel := kube.LabelName + "=" + kube.NameValue
			if campaign != "" {
				sel += "," + kube.LabelInstance + "=" + campaign
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			if err := kube.Cleanup(ctx, k.Client, k.Namespace, sel); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed tokex objects (%s) from namespace %s\n", sel, k.Namespace)
			return nil
		},
	}
	k.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&campaign, "campaign", "", "only this campaign's objects (its app.kubernetes.io/instance label)")
	return cmd
}

func newVerifyCmd() *cobra.Command {
	o := &runOptions{kube: newKubeConn()}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the cluster is ready for a kube campaign (engines, Service, metrics, RBAC)",
		Long: `A checklist with a verdict: engines Ready and on distinct nodes (the article's
anti-affinity check), the engine Service has ready endpoints, metrics.k8s.io is
served, and the caller may create Jobs, Secrets and ConfigMaps, read Pod logs
and read Pod metrics. Exit 0 when every check passes, 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.completeKube(cmd); err != nil {
				return err
			}
			if err := o.kube.connect(o.cfg.Kube.Namespace); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			checks := kube.Verify(ctx, o.kube.Client, o.kube.Namespace, o.kube.Context, o.cfg.Kube)
			out := termsafe.Writer(cmd.OutOrStdout()) // names and messages come from the cluster
			failed := 0
			for _, c := range checks {
				mark := "✓"
				if !c.OK {
					mark, failed = "✗", failed+1
				}
				fmt.Fprintf(out, "%s %s", mark, c.Name)
				if c.Note != "" {
					fmt.Fprintf(out, " — %s", c.Note)
				}
				fmt.Fprintln(out)
			}
			if failed > 0 {
				fmt.Fprintf(out, "\nverdict: NOT READY (%d of %d checks failed)\n", failed, len(checks))
				return &exitError{code: ExitThresholds}
			}
			fmt.Fprintf(out, "\nverdict: READY (%d checks passed)\n", len(checks))
			return nil
		},
	}
	o.campaignFlags(cmd)
	return cmd
}
