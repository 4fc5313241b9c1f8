package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/runner"
	"github.com/tokex-dev/tokex/runner/config"
)

// Driver runs each run as an Indexed Job of k6 Pods.
type Driver struct {
	Cfg        config.Campaign
	CampaignID string
	Client     kubernetes.Interface
	Metrics    metricsclient.Interface // nil: no metrics API client
	// RESTConfig is the connection's, for exec (copying the agents'
	// evidence files); nil: no exec.
	RESTConfig *rest.Config
	Namespace  string
	Context    string
	Secret     string
	Key        *jose.Key
	// ActorKey signs the agents' actor tokens (subject.actor minted).
	ActorKey *jose.Key
	// Poll is how often Pods are re-judged against the start timeout (default 1 s).
	Poll time.Duration

	objs     *Objects
	inFlight atomic.Int64
	stopMet  context.CancelFunc
	metWG    sync.WaitGroup
	created  bool
	logs     logOpener // nil: the API server's Pod logs
	exec     podExec   // nil: the API server's exec
	agentCPU agentCPU  // the agents' PodMetrics, for the starvation rule
	// API counts the requests sent to the API server (nil: not counted).
	API *APICounter

	logLimits nodeLogLimits // the nodes' containerLogMaxSize

	nodesMu sync.Mutex
	nodes   map[string]bool // nodes of the current run's agent Pods

	wl *workload // the engines' workload a campaign over engine counts scales
}

// noteNode records a node the current run's agents run on.
func (d *Driver) noteNode(n string) {
	if n == "" {
		return
	}
	d.nodesMu.Lock()
	if d.nodes == nil {
		d.nodes = map[string]bool{}
	}
	d.nodes[n] = true
	d.nodesMu.Unlock()
}

// agentNodes returns a copy of the current run's agent nodes.
func (d *Driver) agentNodes() map[string]bool {
	d.nodesMu.Lock()
	defer d.nodesMu.Unlock()
	out := make(map[string]bool, len(d.nodes))
	for n := range d.nodes {
		out[n] = true
	}
	return out
}

var _ runner.Driver = (*Driver)(nil)

// Name implements runner.Driver.
func (d *Driver) Name() string {
	ctx := d.Context
	if ctx == "" {
		ctx = "in-cluster/default"
	}
	return fmt.Sprintf("kube (%s/%s)", ctx, d.Namespace)
}

// Target implements runner.Driver.
func (d *Driver) Target() string { return d.Cfg.Target.URL }

// logSlack is how long an agent's line takes from k6 to the runner
// through the API server's log stream, at most, as the watch assumes.
const logSlack = 2 * time.Second

// ReportDelay implements runner.Late: k6 prints a request's line when it
// completes, at most the request timeout after it was sent, and the line
// then travels the Pod's log stream.
func (d *Driver) ReportDelay() time.Duration { return d.Cfg.Request.Timeout + logSlack }

// InFlight implements runner.Driver: k6 does not report it per second.
func (d *Driver) InFlight() int64 { return d.inFlight.Load() }

func (d *Driver) log(out runner.Output, level, msg string) {
	out.Emit(event.Log{At: time.Now(), Source: "kube", Level: level, Message: msg})
}

// Start creates the campaign's Secret and ConfigMap and starts polling
// metrics.k8s.io (when the cluster serves it).
func (d *Driver) Start(ctx context.Context, out runner.Output) error {
	if d.Key == nil || d.Key.Alg != jose.RS256 && d.Key.Alg != jose.ES256 {
		return errors.New("the k6 agents need an RS256 or ES256 subject key")
	}
	d.objs = &Objects{Cfg: d.Cfg, CampaignID: d.CampaignID, Namespace: d.Namespace, Secret: d.Secret, Key: d.Key, ActorKey: d.ActorKey}
	if d.Poll == 0 {
		d.Poll = time.Second
	}
	if err := d.checkExec(ctx, out); err != nil {
		return err
	}
	sec, err := d.objs.SecretObject()
	if err != nil {
		return err
	}
	cm, err := d.objs.ConfigMapObject()
	if err != nil {
		return err
	}
	d.created = true
	if err := recreate(ctx, func() error {
		_, err := d.Client.CoreV1().Secrets(d.Namespace).Create(ctx, sec, metav1.CreateOptions{})
		return err
	}, func() error {
		return d.Client.CoreV1().Secrets(d.Namespace).Delete(ctx, sec.Name, metav1.DeleteOptions{})
	}); err != nil {
		return fmt.Errorf("create secret %s/%s: %w", d.Namespace, sec.Name, err)
	}
	if err := recreate(ctx, func() error {
		_, err := d.Client.CoreV1().ConfigMaps(d.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		return err
	}, func() error {
		return d.Client.CoreV1().ConfigMaps(d.Namespace).Delete(ctx, cm.Name, metav1.DeleteOptions{})
	}); err != nil {
		return fmt.Errorf("create configmap %s/%s: %w", d.Namespace, cm.Name, err)
	}
	served, err := MetricsServed(d.Client)
	switch {
	case err != nil:
		d.log(out, "warn", "cannot discover the metrics API: "+err.Error())
	case !served || d.Metrics == nil:
		d.log(out, "warn", "metrics.k8s.io is not served by this cluster: engine CPU is not measured (install metrics-server)")
	default:
		mctx, cancel := context.WithCancel(context.Background())
		d.stopMet = cancel
		p := &metricsPoller{d: d, out: out, seen: map[string]time.Time{}}
		d.metWG.Add(1)
		go func() {
			defer d.metWG.Done()
			p.run(mctx)
		}()
	}
	return nil
}

// recreate creates an object, replacing a leftover of an earlier attempt.
func recreate(ctx context.Context, create, del func() error) error {
	err := create()
	if apierrors.IsAlreadyExists(err) {
		if err := del(); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		for i := 0; i < 50; i++ {
			if err = create(); !apierrors.IsAlreadyExists(err) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return err
}

func completionIndex(pod *corev1.Pod) int {
	var i int
	_, _ = fmt.Sscanf(pod.Annotations["batch.kubernetes.io/job-completion-index"], "%d", &i)
	return i
}

func containerStarted(pod *corev1.Pod) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == container && (cs.State.Running != nil || cs.State.Terminated != nil) {
			return true
		}
	}
	return pod.Status.Phase == corev1.PodRunning || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func containerTerminated(pod *corev1.Pod) (bool, int32) {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == container && cs.State.Terminated != nil {
			return true, cs.State.Terminated.ExitCode
		}
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return true, 0
	case corev1.PodFailed:
		return true, 1
	}
	return false, 0
}

// podFailure names why an agent Pod cannot run: unschedulable past the
// start timeout, an image that cannot be pulled, a bad container config,
// OOMKilled. Exit code 99 (k6 thresholds crossed) is a verdict, not a failure.
func podFailure(pod *corev1.Pod, age, startTimeout time.Duration) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError", "CrashLoopBackOff", "ErrImageNeverPull":
				return fmt.Sprintf("%s: %s", w.Reason, w.Message)
			}
		}
		if t := cs.State.Terminated; t != nil && t.Reason == "OOMKilled" {
			return "OOMKilled"
		}
	}
	if pod.Status.Phase == corev1.PodPending && age > startTimeout {
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return fmt.Sprintf("not scheduled after %s: %s", startTimeout, c.Message)
			}
		}
		return fmt.Sprintf("still Pending after %s", startTimeout)
	}
	return ""
}

// Close deletes everything the campaign created, and restores the engines'
// workload if a campaign over engine counts left it scaled (the campaign
// restores it itself; this is the backstop).
func (d *Driver) Close() error {
	if d.stopMet != nil {
		d.stopMet()
		d.metWG.Wait()
	}
	var rerr error
	if d.wl != nil && d.wl.changed {
		ctx, cancel := context.WithTimeout(context.Background(), runner.RestoreTimeout)
		_, _, rerr = d.Restore(ctx, nil)
		cancel()
	}
	if !d.created {
		return rerr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return errors.Join(rerr, Cleanup(ctx, d.Client, d.Namespace, d.objs.Selector()))
}

// Cleanup deletes tokex's Jobs (with their Pods), Secrets and ConfigMaps
// matching selector in namespace.
func Cleanup(ctx context.Context, c kubernetes.Interface, namespace, selector string) error {
	bg := metav1.DeletePropagationBackground
	lo := metav1.ListOptions{LabelSelector: selector}
	var errs []error
	jobs, err := c.BatchV1().Jobs(namespace).List(ctx, lo)
	if err != nil {
		errs = append(errs, err)
	} else {
		for _, j := range jobs.Items {
			if err := c.BatchV1().Jobs(namespace).Delete(ctx, j.Name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
	}
	// Pods of deleted Jobs go with them; orphans (a Job deleted elsewhere with
	// orphan propagation) are removed too. List-then-delete works on every
	// API server (and on client-go's fake) alike.
	errs = append(errs, deleteAll[*corev1.PodList](ctx, "pods", lo, c.CoreV1().Pods(namespace))...)
	errs = append(errs, deleteAll[*corev1.SecretList](ctx, "secrets", lo, c.CoreV1().Secrets(namespace))...)
	errs = append(errs, deleteAll[*corev1.ConfigMapList](ctx, "configmaps", lo, c.CoreV1().ConfigMaps(namespace))...)
	return errors.Join(errs...)
}

// listDeleter is what deleteAll needs of a typed client (Pods, Secrets, …).
type listDeleter[L runtime.Object] interface {
	List(context.Context, metav1.ListOptions) (L, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

// deleteAll lists the objects matching lo and deletes them one by one, which
// works on every API server and on client-go's fake alike.
func deleteAll[L runtime.Object](ctx context.Context, kind string, lo metav1.ListOptions, c listDeleter[L]) []error {
	l, err := c.List(ctx, lo)
	if err != nil {
		return []error{fmt.Errorf("list %s: %w", kind, err)}
	}
	items, err := meta.ExtractList(l)
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, it := range items {
		a, err := meta.Accessor(it)
		if err != nil {
			continue
		}
		if err := c.Delete(ctx, a.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s %s: %w", kind, a.GetName(), err))
		}
	}
	return errs
}
