package kube

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/tokex-dev/tokex/internal/names"
)

// watchPods keeps the run's Pods current with one watch (re-opened when the
// API server ends it) instead of a List every second: the API server's load
// stays one long-running request per run, whatever the number of agents. The
// watch is opened before the List that fills in what happened before it, so
// nothing falls between the two; observe merges states monotonically (a Pod
// never goes back from started or ended), so an event older than the List
// changes nothing. Every poll interval the Pods' ages are re-judged locally
// (a Pod Pending past the start timeout sends no event).
func (r *kubeRun) watchPods(ctx context.Context) {
	pods := r.d.Client.CoreV1().Pods(r.d.Namespace)
	lo := metav1.ListOptions{LabelSelector: LabelRun + "=" + names.DNSLabel(r.p.ID) + "," + LabelInstance + "=" + names.DNSLabel(r.d.CampaignID)}
	tick := time.NewTicker(r.t.poll)
	defer tick.Stop()
	backoff := r.t.poll
	for ctx.Err() == nil {
		w, err := pods.Watch(ctx, lo)
		if err == nil {
			var list *corev1.PodList
			if list, err = pods.List(ctx, lo); err == nil {
				for i := range list.Items {
					r.observe(ctx, &list.Items[i])
				}
				backoff = r.t.poll
				if r.settled() {
					w.Stop()
					return
				}
				if r.follow1(ctx, w, tick.C) {
					return
				}
				continue
			}
			w.Stop()
		}
		if ctx.Err() == nil {
			r.d.log(r.out, "warn", "watch pods: "+err.Error()+"; retrying")
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// follow1 handles one watch's events until the run is settled (true) or the
// watch ends (false: open another).
func (r *kubeRun) follow1(ctx context.Context, w watch.Interface, tick <-chan time.Time) bool {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return true
		case <-tick:
			r.rejudge(ctx)
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				if pod, ok := ev.Object.(*corev1.Pod); ok {
					r.observe(ctx, pod)
				}
			case watch.Deleted:
				if pod, ok := ev.Object.(*corev1.Pod); ok {
					r.deleted(pod)
				}
			case watch.Error:
				return false
			}
		}
		if r.settled() {
			return true
		}
	}
}

// rejudge re-checks the known Pods against the start timeout.
func (r *kubeRun) rejudge(ctx context.Context) {
	for _, ps := range r.pods {
		if ps.last != nil {
			r.observe(ctx, ps.last)
		}
	}
}

// deleted notes an agent Pod removed before it ended: its Job cannot complete.
func (r *kubeRun) deleted(pod *corev1.Pod) {
	if ps := r.pods[pod.Name]; ps != nil && !ps.ended() && r.failure == nil {
		r.failure = fmt.Errorf("agent pod %s was deleted before it ended", pod.Name)
	}
}

// settled reports whether the run's Pods are all done, or one cannot run.
// It also updates the in-flight gauge: k6 reports no in-flight count, so it
// is the number of agents running.
func (r *kubeRun) settled() bool {
	done := len(r.pods) == r.d.Cfg.Agents.Count
	var running int64
	for _, ps := range r.pods {
		ended := ps.ended()
		if ps.following && !ended {
			running++
		}
		done = done && ended
	}
	r.d.inFlight.Store(running)
	return r.failure != nil || done
}
