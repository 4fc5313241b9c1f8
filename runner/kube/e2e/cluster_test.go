// Package e2e runs a real Kubernetes control plane on loopback for tokex's
// end-to-end tests: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kwok fake nodes and metrics-server, built by
// scripts/kube-e2e/build.sh. No Docker, no kubectl: everything is started
// and configured from Go, every port is free and on 127.0.0.1.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// Cluster is a running control plane.
type Cluster struct {
	Dir        string // run folder: pki, logs, pod-logs
	Kubeconfig string
	Config     *rest.Config
	Client     kubernetes.Interface
	Dynamic    dynamic.Interface
	Nodes      []string

	procs []*exec.Cmd
}

// Options say where the binaries and the kwok config are.
type Options struct {
	Bin    string // folder with etcd, kube-*, kwok, metrics-server
	Config string // scripts/kube-e2e/config
	Nodes  int
	Log    func(format string, args ...any)
	// PortForward is where kwok sends port-forwards to Pod port 9031.
	PortForward int
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start brings a cluster up in dir; Stop tears it down.
func Start(ctx context.Context, dir string, o Options) (c *Cluster, err error) {
	c = &Cluster{Dir: dir}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	b := &boot{c: c, o: o, dir: dir, pki: filepath.Join(dir, "pki"), t0: time.Now(), logf: o.Log}
	if b.logf == nil {
		b.logf = func(string, ...any) {}
	}
	if b.o.Nodes <= 0 {
		b.o.Nodes = 2
	}
	for _, step := range []func(context.Context) error{b.prepare, b.startEtcd, b.startAPIServer,
		b.startControllers, b.startKwok, b.addNodes, b.startMetricsServer} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	b.logf("cluster up in %s (metrics API Available)", time.Since(b.t0).Round(time.Millisecond))
	return c, nil
}

// boot is one Start: the cluster being built and what its steps share.
type boot struct {
	c     *Cluster
	o     Options
	dir   string
	pki   string
	ports map[string]int
	t0    time.Time
	logf  func(format string, args ...any)
}

// k is a file of the PKI folder; bin a binary of the bin folder.
func (b *boot) k(n string) string   { return filepath.Join(b.pki, n) }
func (b *boot) bin(n string) string { return filepath.Join(b.o.Bin, n) }

// api and etcd are the URLs the control plane serves.
func (b *boot) api() string  { return fmt.Sprintf("https://127.0.0.1:%d", b.ports["api"]) }
func (b *boot) etcd() string { return fmt.Sprintf("http://127.0.0.1:%d", b.ports["etcd"]) }

// prepare makes the run folders, the PKI, the ports and the kubeconfig.
func (b *boot) prepare(context.Context) error {
	dir, c := b.dir, b.c
	for _, d := range []string{"pki", "logs", "pod-logs", "pod-fs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "pod-logs", "default.log"), nil, 0o644); err != nil {
		return err
	}
	if err := genPKI(b.pki); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	b.ports = map[string]int{}
	for _, n := range []string{"etcd", "etcd-peer", "api", "kcm", "sched", "kwok", "ms"} {
		var err error
		if b.ports[n], err = freePort(); err != nil {
			return err
		}
	}
	k := b.k
	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: %q, certificate-authority: %q}
users:
- name: admin
  user: {client-certificate: %q, client-key: %q}
contexts:
- name: e2e
  context: {cluster: e2e, user: admin, namespace: default}
current-context: e2e
`, b.api(), k("ca.crt"), k("admin.crt"), k("admin.key"))
	return os.WriteFile(c.Kubeconfig, []byte(kc), 0o600)
}

// startEtcd starts etcd and waits until it is healthy.
func (b *boot) startEtcd(ctx context.Context) error {
	dir, c, ports := b.dir, b.c, b.ports
	etcd := b.etcd()
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports["etcd-peer"])
	if err := c.start("etcd", b.bin("etcd"), "--name=node0", "--data-dir="+filepath.Join(dir, "etcd-data"),
		"--listen-client-urls="+etcd, "--advertise-client-urls="+etcd, "--listen-peer-urls="+peer,
		"--initial-advertise-peer-urls="+peer, "--initial-cluster=node0="+peer, "--log-level=warn", "--unsafe-no-fsync=true"); err != nil {
		return err
	}
	if err := waitHTTP(ctx, http.DefaultClient, etcd+"/health", 30*time.Second); err != nil {
		return c.failed("etcd", err)
	}
	b.logf("etcd healthy after %s", time.Since(b.t0).Round(time.Millisecond))
	return nil
}

// startAPIServer starts kube-apiserver, waits until it is ready and makes
// the cluster's clients.
func (b *boot) startAPIServer(ctx context.Context) error {
	c, ports, k := b.c, b.ports, b.k
	etcd, api := b.etcd(), b.api()
	if err := c.start("kube-apiserver", b.bin("kube-apiserver"), "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports["api"]), "--etcd-servers="+etcd,
		"--tls-cert-file="+k("apiserver.crt"), "--tls-private-key-file="+k("apiserver.key"), "--client-ca-file="+k("ca.crt"),
		"--service-account-key-file="+k("sa.pub"), "--service-account-signing-key-file="+k("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local", "--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=Node,RBAC", "--allow-privileged=true",
		"--kubelet-client-certificate="+k("kubelet-client.crt"), "--kubelet-client-key="+k("kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP",
		"--requestheader-client-ca-file="+k("ca.crt"), "--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file="+k("front-proxy-client.crt"), "--proxy-client-key-file="+k("front-proxy-client.key"),
		"--enable-aggregator-routing=false", "--endpoint-reconciler-type=none", "--profiling=false", "--v=1"); err != nil {
		return err
	}
	admin, err := tls.LoadX509KeyPair(k("admin.crt"), k("admin.key"))
	if err != nil {
		return err
	}
	caPEM, _ := os.ReadFile(k("ca.crt"))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{admin}}}}
	if err := waitHTTP(ctx, hc, api+"/readyz", 90*time.Second); err != nil {
		return c.failed("kube-apiserver", err)
	}
	b.logf("kube-apiserver ready after %s", time.Since(b.t0).Round(time.Millisecond))
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return err
	}
	c.Config.QPS, c.Config.Burst = 100, 200
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return err
	}
	if c.Dynamic, err = dynamic.NewForConfig(c.Config); err != nil {
		return err
	}
	return nil
}

// startControllers starts kube-controller-manager and kube-scheduler.
func (b *boot) startControllers(context.Context) error {
	c, ports, k := b.c, b.ports, b.k
	if err := c.start("kube-controller-manager", b.bin("kube-controller-manager"), "--kubeconfig="+c.Kubeconfig,
		"--authentication-kubeconfig="+c.Kubeconfig, "--authorization-kubeconfig="+c.Kubeconfig, "--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports["kcm"]), "--service-account-private-key-file="+k("sa.key"), "--root-ca-file="+k("ca.crt"),
		"--use-service-account-credentials=false", "--leader-elect=false",
		"--controllers=*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-persistentvolume-binder",
		"--kube-api-qps=500", "--kube-api-burst=1000", "--v=1"); err != nil {
		return err
	}
	if err := c.start("kube-scheduler", b.bin("kube-scheduler"), "--kubeconfig="+c.Kubeconfig,
		"--authentication-kubeconfig="+c.Kubeconfig, "--authorization-kubeconfig="+c.Kubeconfig, "--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports["sched"]), "--leader-elect=false", "--kube-api-qps=500", "--kube-api-burst=1000", "--v=1"); err != nil {
		return err
	}
	return nil
}

// startKwok installs kwok's CRDs and starts kwok with its config.
func (b *boot) startKwok(ctx context.Context) error {
	c, o, dir, ports, k := b.c, b.o, b.dir, b.ports, b.k
	for _, f := range []string{"kwok.x-k8s.io_logs.yaml", "kwok.x-k8s.io_execs.yaml"} {
		if err := c.ApplyFile(ctx, filepath.Join(o.Config, f), nil); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	kwokCfg, err := os.ReadFile(filepath.Join(o.Config, "kwok.yaml"))
	if err != nil {
		return err
	}
	kwokPath := filepath.Join(dir, "kwok.yaml")
	pf := o.PortForward
	if pf == 0 {
		pf = 9
	}
	kwokCfg = bytes.ReplaceAll(kwokCfg, []byte("${PF_PORT}"), []byte(fmt.Sprint(pf)))
	if err := os.WriteFile(kwokPath, bytes.ReplaceAll(kwokCfg, []byte("${RUN_DIR}"), []byte(dir)), 0o644); err != nil {
		return err
	}
	// The CRDs must be established before kwok watches them.
	time.Sleep(time.Second)
	if err := c.start("kwok", b.bin("kwok"), "--kubeconfig="+c.Kubeconfig, "--config="+kwokPath, "--enable-crds=Logs,Exec",
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--node-ip=127.0.0.1", fmt.Sprintf("--node-port=%d", ports["kwok"]), fmt.Sprintf("--server-address=127.0.0.1:%d", ports["kwok"]),
		"--tls-cert-file="+k("kwok.crt"), "--tls-private-key-file="+k("kwok.key"), "--node-lease-duration-seconds=40"); err != nil {
		return err
	}
	return nil
}

// addNodes creates the kwok nodes and waits until they are Ready and the
// default ServiceAccount exists.
func (b *boot) addNodes(ctx context.Context) error {
	c, o := b.c, b.o
	for i := 0; i < o.Nodes; i++ {
		name := fmt.Sprintf("kwok-node-%d", i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name,
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0",
					"metrics.k8s.io/resource-metrics-path": "/metrics/nodes/" + name + "/metrics/resource"},
				Labels: map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"}},
			Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("32Gi"), "pods": resource.MustParse("110")},
				Capacity:    corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("32Gi"), "pods": resource.MustParse("110")},
			},
		}
		if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return err
		}
		c.Nodes = append(c.Nodes, name)
	}
	if err := poll(ctx, 60*time.Second, func() (bool, error) {
		for _, n := range c.Nodes {
			node, err := c.Client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil || !nodeReady(node) {
				return false, nil
			}
		}
		_, err := c.Client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return c.failed("kwok/kube-controller-manager", fmt.Errorf("nodes not Ready: %w", err))
	}
	b.logf("%d kwok nodes Ready after %s", o.Nodes, time.Since(b.t0).Round(time.Millisecond))
	return nil
}

// startMetricsServer starts metrics-server, registers its APIService and
// waits until the metrics API is Available.
func (b *boot) startMetricsServer(ctx context.Context) error {
	c, dir, ports := b.c, b.dir, b.ports
	if err := c.start("metrics-server", b.bin("metrics-server"), "--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", ports["ms"]),
		"--cert-dir="+filepath.Join(dir, "ms-certs"), "--kubeconfig="+c.Kubeconfig, "--authentication-kubeconfig="+c.Kubeconfig,
		"--authorization-kubeconfig="+c.Kubeconfig, "--kubelet-preferred-address-types=InternalIP", "--kubelet-use-node-status-port",
		"--kubelet-insecure-tls", "--metric-resolution=10s", "--kubelet-request-timeout=5s", "--v=1"); err != nil {
		return err
	}
	ms := fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: metrics-server, namespace: kube-system}
spec: {type: ExternalName, externalName: localhost}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec:
  group: metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  insecureSkipTLSVerify: true
  service: {name: metrics-server, namespace: kube-system, port: %d}
`, ports["ms"])
	if err := c.Apply(ctx, []byte(ms), nil); err != nil {
		return err
	}
	apisvc := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	if err := poll(ctx, 90*time.Second, func() (bool, error) {
		u, err := c.Dynamic.Resource(apisvc).Get(ctx, "v1beta1.metrics.k8s.io", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, x := range conds {
			m, _ := x.(map[string]any)
			if m["type"] == "Available" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		return c.failed("metrics-server", fmt.Errorf("metrics API not Available: %w", err))
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (c *Cluster) start(name, bin string, args ...string) error {
	logf, err := os.Create(filepath.Join(c.Dir, "logs", name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	c.procs = append(c.procs, cmd)
	return nil
}

// failed adds the tail of a component's log to err.
func (c *Cluster) failed(name string, err error) error {
	b, _ := os.ReadFile(filepath.Join(c.Dir, "logs", name+".log"))
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return fmt.Errorf("%s: %w\n--- %s log tail ---\n%s", name, err, name, b)
}

// Stop ends every process: SIGTERM, then SIGKILL after 3 s.
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		if p := c.procs[i].Process; p != nil {
			_ = syscall.Kill(-p.Pid, syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(3 * time.Second)
	for _, cmd := range c.procs {
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Until(deadline)):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	c.procs = nil
}

// Apply creates every object of a multi-document YAML through the dynamic
// client (kind → resource by a small table; tokex needs only these).
func (c *Cluster) Apply(ctx context.Context, data []byte, _ map[string]string) error {
	for _, doc := range strings.Split(string(data), "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return err
		}
		if obj == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		gvk := u.GroupVersionKind()
		res, ok := resources[gvk.Kind]
		if !ok {
			return fmt.Errorf("e2e apply: unknown kind %s", gvk.Kind)
		}
		gvr := gvk.GroupVersion().WithResource(res)
		var ri dynamic.ResourceInterface = c.Dynamic.Resource(gvr)
		if ns := u.GetNamespace(); ns != "" {
			ri = c.Dynamic.Resource(gvr).Namespace(ns)
		}
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s %s: %w", gvk.Kind, u.GetName(), err)
		}
	}
	return nil
}

var resources = map[string]string{
	"CustomResourceDefinition": "customresourcedefinitions", "Service": "services", "APIService": "apiservices",
	"Logs": "logs", "Exec": "execs", "Deployment": "deployments", "ServiceAccount": "serviceaccounts",
	"Role": "roles", "RoleBinding": "rolebindings", "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings",
	"Namespace": "namespaces",
}

// ApplyFile is Apply of a file.
func (c *Cluster) ApplyFile(ctx context.Context, path string, vars map[string]string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return c.Apply(ctx, b, vars)
}

func waitHTTP(ctx context.Context, hc *http.Client, url string, timeout time.Duration) error {
	return poll(ctx, timeout, func() (bool, error) {
		resp, err := hc.Get(url)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == 200, nil
	})
}

func poll(ctx context.Context, timeout time.Duration, f func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := f()
		if ok {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if last != nil {
		return fmt.Errorf("timed out after %s: %w", timeout, last)
	}
	return fmt.Errorf("timed out after %s", timeout)
}

// genPKI writes the throwaway PKI of the control plane.
func genPKI(dir string) error {
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tokex-e2e-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, _ := x509.ParseCertificate(caDER)
	write := func(name string, der []byte, key *rsa.PrivateKey) error {
		if err := os.WriteFile(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
	}
	if err := write("ca", caDER, caKey); err != nil {
		return err
	}
	serial := int64(2)
	sign := func(name string, subj pkix.Name, ips []string, dns []string, server bool) error {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return err
		}
		t := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: subj, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, DNSNames: dns}
		serial++
		if server {
			t.ExtKeyUsage = append(t.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		}
		for _, ip := range ips {
			t.IPAddresses = append(t.IPAddresses, net.ParseIP(ip))
		}
		der, err := x509.CreateCertificate(rand.Reader, t, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		return write(name, der, key)
	}
	steps := []error{
		sign("apiserver", pkix.Name{CommonName: "kube-apiserver"}, []string{"127.0.0.1", "10.96.0.1"},
			[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}, true),
		sign("admin", pkix.Name{CommonName: "kubernetes-admin", Organization: []string{"system:masters"}}, nil, nil, false),
		sign("front-proxy-client", pkix.Name{CommonName: "front-proxy-client"}, nil, nil, false),
		sign("kubelet-client", pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}}, nil, nil, false),
		sign("kwok", pkix.Name{CommonName: "kwok"}, []string{"127.0.0.1"}, []string{"localhost"}, true),
	}
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(sa)}), 0o600); err != nil {
		return err
	}
	pub, _ := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	return os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}
