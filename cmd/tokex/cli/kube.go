package cli

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/tokex-dev/tokex/runner/kube"
)

// kubeConn connects like kubectl: --kubeconfig, --context, -n/--namespace,
// in-cluster config when run as a Pod.
type kubeConn struct {
	flags *genericclioptions.ConfigFlags

	Config    *rest.Config
	Client    kubernetes.Interface
	Metrics   metricsclient.Interface
	Namespace string
	Context   string
	API       *kube.APICounter // the requests tokex sends, stated per run
}

func newKubeConn() *kubeConn {
	f := genericclioptions.NewConfigFlags(true)
	return &kubeConn{flags: f}
}

// addFlags registers only the connection flags tokex needs.
func (k *kubeConn) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(k.flags.KubeConfig, "kubeconfig", "", "path to the kubeconfig file")
	fs.StringVar(k.flags.Context, "context", "", "kubeconfig context to use")
	fs.StringVarP(k.flags.Namespace, "namespace", "n", "", "namespace of the agent Jobs (default: the context's)")
}

// connect builds the clients; namespace overrides the context's when set.
func (k *kubeConn) connect(namespace string) error {
	cfg, err := k.flags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("kubernetes connection: %w", err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	k.API = kube.CountRequests(cfg)
	k.Config = cfg
	loader := k.flags.ToRawKubeConfigLoader()
	ns, _, err := loader.Namespace()
	if err != nil {
		return fmt.Errorf("kubernetes namespace: %w", err)
	}
	if *k.flags.Namespace == "" && namespace != "" {
		ns = namespace
	}
	k.Namespace = ns
	if raw, err := loader.RawConfig(); err == nil {
		k.Context = raw.CurrentContext
		if *k.flags.Context != "" {
			k.Context = *k.flags.Context
		}
	}
	if k.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if k.Metrics, err = metricsclient.NewForConfig(cfg); err != nil {
		return err
	}
	return nil
}
