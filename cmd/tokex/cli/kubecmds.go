package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
				return &exitError{code: ExitCannotRun, err: err}
			}
			ns, _, _ := o.kube.flags.ToRawKubeConfigLoader().Namespace()
			if o.cfg.Kube.Namespace != "" && *o.kube.flags.Namespace == "" {
				ns = o.cfg.Kube.Namespace
			}
			if ns == "" {
				ns = "default"
			}
			objs := &kube.Objects{Cfg: o.cfg, CampaignID: o.id, Namespace: ns, Secret: "[redacted]", Key: o.key}
			sec, err := objs.SecretObject()
			if err != nil {
				return err
			}
			for k := range sec.StringData {
				sec.StringData[k] = "[redacted]"
			}
			cm, err := objs.ConfigMapObject()
			if err != nil {
				return err
			}
			docs := []any{sec, cm}
			for _, p := range runner.Plan(&o.cfg) {
				j, err := objs.JobObject(p)
				if err != nil {
					return &exitError{code: ExitCannotRun, err: err}
				}
				docs = append(docs, j)
			}
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
	f.StringVar(&o.subjectIssuer, "subject-issuer", "", "iss of the subject tokens (subject.issuer; `tokex jwks --serve` prints it)")
	f.StringVar(&o.subjectTokenType, "subject-token-type", "", "subject_token_type: access_token|jwt|id_token or a URI")
	f.StringVar(&o.subjectAudience, "subject-audience", "", "aud of the subject tokens (default: the agent's client id)")
	f.StringArrayVar(&o.claims, "subject-claim", nil, "extra subject-token claim NAME=VALUE, VALUE JSON or a string with {{user}}, {{user_number}}, {{client_id}} (repeatable)")
	f.StringArrayVar(&o.form, "form", nil, "extra form field NAME=VALUE sent with every exchange, e.g. connector_id=tokex for Dex (repeatable)")
	f.StringVar(&o.authMethod, "auth-method", "", "client authentication: client_secret_basic|client_secret_post")
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
				return &exitError{code: ExitCannotRun, err: err}
			}
			sel := kube.LabelName + "=" + kube.NameValue
			if campaign != "" {
				sel += "," + kube.LabelInstance + "=" + campaign
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			if err := kube.Cleanup(ctx, k.Client, k.Namespace, sel); err != nil {
				return &exitError{code: ExitCannotRun, err: err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed tokex objects (%s) from namespace %s\n", sel, k.Namespace)
			return nil
		},
	}
	k.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&campaign, "campaign", "", "only this campaign's objects (its app.kubernetes.io/instance label)")
	return cmd
}

type check struct {
	name string
	ok   bool
	note string
}

func newVerifyCmd() *cobra.Command {
	o := &runOptions{kube: newKubeConn()}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the cluster is ready for a kube campaign (engines, Service, metrics API, permissions)",
		Long: `A checklist with a verdict: engines Ready and on distinct nodes (the article's
anti-affinity check), the engine Service has ready endpoints, metrics.k8s.io is
served, and the caller may create Jobs, Secrets and ConfigMaps, read Pod logs
and read Pod metrics. Exit 0 when every check passes, 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.completeKube(cmd); err != nil {
				return &exitError{code: ExitCannotRun, err: err}
			}
			if err := o.kube.connect(o.cfg.Kube.Namespace); err != nil {
				return &exitError{code: ExitCannotRun, err: err}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			checks := verify(ctx, o)
			out := termsafe.Writer(cmd.OutOrStdout()) // names and messages come from the cluster
			failed := 0
			for _, c := range checks {
				mark := "✓"
				if !c.ok {
					mark, failed = "✗", failed+1
				}
				fmt.Fprintf(out, "%s %s", mark, c.name)
				if c.note != "" {
					fmt.Fprintf(out, " — %s", c.note)
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

func verify(ctx context.Context, o *runOptions) []check {
	k := o.kube
	c := o.cfg.Kube
	var out []check
	v, err := k.Client.Discovery().ServerVersion()
	if err != nil {
		return append(out, check{name: "API server reachable", note: err.Error()})
	}
	out = append(out, check{name: "API server reachable", ok: true, note: v.GitVersion + " via context " + k.Context})
	engNS := c.Engines.Namespace
	if engNS == "" {
		engNS = k.Namespace
	}
	if c.Engines.Selector == "" {
		out = append(out, check{name: "engines found", note: "kube.engines.selector is not set"})
	} else {
		pods, err := k.Client.CoreV1().Pods(engNS).List(ctx, metav1.ListOptions{LabelSelector: c.Engines.Selector})
		switch {
		case err != nil:
			out = append(out, check{name: "engines found", note: err.Error()})
		case len(pods.Items) == 0:
			out = append(out, check{name: "engines found", note: fmt.Sprintf("no Pod matches %q in %s", c.Engines.Selector, engNS)})
		default:
			ready, nodes := 0, map[string][]string{}
			var notReady []string
			for _, p := range pods.Items {
				if podReady(&p) {
					ready++
				} else {
					notReady = append(notReady, p.Name)
				}
				nodes[p.Spec.NodeName] = append(nodes[p.Spec.NodeName], p.Name)
			}
			out = append(out, check{name: "engines Ready", ok: ready == len(pods.Items),
				note: fmt.Sprintf("%d of %d Ready%s", ready, len(pods.Items), listNote(" (not Ready: ", notReady))})
			var shared []string
			for n, ps := range nodes {
				if len(ps) > 1 {
					shared = append(shared, n+": "+strings.Join(ps, ", "))
				}
			}
			sort.Strings(shared)
			out = append(out, check{name: "engines on distinct nodes", ok: len(shared) == 0,
				note: fmt.Sprintf("%d engines on %d nodes%s", len(pods.Items), len(nodes), listNote(" (shared: ", shared))})
		}
	}
	if c.Engines.Service == "" {
		out = append(out, check{name: "engine Service has endpoints", note: "kube.engines.service is not set"})
	} else {
		slices, err := k.Client.DiscoveryV1().EndpointSlices(engNS).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + c.Engines.Service})
		n := 0
		if err == nil {
			for _, s := range slices.Items {
				for _, e := range s.Endpoints {
					if e.Conditions.Ready == nil || *e.Conditions.Ready {
						n++
					}
				}
			}
		}
		note := fmt.Sprintf("%d ready endpoint(s) behind %s/%s", n, engNS, c.Engines.Service)
		if err != nil {
			note = err.Error()
		}
		out = append(out, check{name: "engine Service has endpoints", ok: err == nil && n > 0, note: note})
	}
	served, err := kube.MetricsServed(k.Client)
	note := "served"
	if err != nil {
		note = err.Error()
	} else if !served {
		note = "not served: install metrics-server, or engine CPU is not measured"
	}
	out = append(out, check{name: "metrics API (metrics.k8s.io)", ok: served, note: note})
	for _, a := range []struct{ verb, group, resource, sub, ns string }{
		{"create", "batch", "jobs", "", k.Namespace},
		{"delete", "batch", "jobs", "", k.Namespace},
		{"create", "", "secrets", "", k.Namespace},
		{"create", "", "configmaps", "", k.Namespace},
		{"list", "", "pods", "", k.Namespace}, {"watch", "", "pods", "", k.Namespace},
		{"get", "", "pods", "log", k.Namespace},
		{"list", "metrics.k8s.io", "pods", "", engNS},
	} {
		r := &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{
			Namespace: a.ns, Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.sub}}}
		name := fmt.Sprintf("may %s %s", a.verb, a.resource)
		if a.sub != "" {
			name += "/" + a.sub
		}
		if a.group != "" {
			name += "." + a.group
		}
		res, err := k.Client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, r, metav1.CreateOptions{})
		switch {
		case err != nil:
			out = append(out, check{name: name, note: err.Error()})
		default:
			out = append(out, check{name: name + " in " + a.ns, ok: res.Status.Allowed, note: res.Status.Reason})
		}
	}
	return out
}

func listNote(prefix string, xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return prefix + strings.Join(xs, "; ") + ")"
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
