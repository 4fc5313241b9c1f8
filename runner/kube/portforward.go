package kube

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// Forward opens a port-forward to a ready Pod behind Service svc (port
// port), like kubectl port-forward svc/…, and returns the local port and a
// function that closes it.
func Forward(ctx context.Context, cfg *rest.Config, c kubernetes.Interface, namespace, svc string, port int) (int, func(), error) {
	s, err := c.CoreV1().Services(namespace).Get(ctx, svc, metav1.GetOptions{})
	if err != nil {
		return 0, nil, err
	}
	var target corev1.ServicePort
	found := false
	for _, p := range s.Spec.Ports {
		if int(p.Port) == port || port == 0 {
			target, found = p, true
			break
		}
	}
	if !found {
		return 0, nil, fmt.Errorf("service %s/%s has no port %d", namespace, svc, port)
	}
	pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(s.Spec.Selector).String()})
	if err != nil {
		return 0, nil, err
	}
	var pod *corev1.Pod
	for i := range pods.Items {
		if isReady(&pods.Items[i]) {
			pod = &pods.Items[i]
			break
		}
	}
	if pod == nil {
		return 0, nil, fmt.Errorf("no ready pod behind service %s/%s", namespace, svc)
	}
	podPort := target.TargetPort.IntValue()
	if target.TargetPort.StrVal != "" {
		for _, ct := range pod.Spec.Containers {
			for _, cp := range ct.Ports {
				if cp.Name == target.TargetPort.StrVal {
					podPort = int(cp.ContainerPort)
				}
			}
		}
	}
	if podPort == 0 {
		podPort = int(target.Port)
	}
	tr, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return 0, nil, err
	}
	u, err := url.Parse(c.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod.Name).SubResource("portforward").URL().String())
	if err != nil {
		return 0, nil, err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: tr}, http.MethodPost, u)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", podPort)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return 0, nil, err
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errc:
		return 0, nil, fmt.Errorf("port-forward to %s: %w", pod.Name, err)
	case <-ctx.Done():
		close(stop)
		return 0, nil, ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		close(stop)
		return 0, nil, fmt.Errorf("port-forward: %v", err)
	}
	return int(ports[0].Local), func() { close(stop) }, nil
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
