// Package kube is the Kubernetes driver: per campaign a Secret and a
// ConfigMap with the k6 agent script, per run an Indexed Job of k6 Pods
// next to the authorization server; their logs become the same events and
// request rows as the local driver, and metrics.k8s.io gives engine CPU.
package kube

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/internal/jose"
	"github.com/tokex-dev/tokex/internal/names"
	"github.com/tokex-dev/tokex/runner/config"
	"github.com/tokex-dev/tokex/runner/k6"
)

// Labels tokex puts on everything it creates.
const (
	LabelName     = "app.kubernetes.io/name"
	LabelInstance = "app.kubernetes.io/instance"
	LabelRun      = "tokex.dev/run"
	LabelManaged  = "app.kubernetes.io/managed-by"
	NameValue     = "tokex"
	scriptKey     = "exchange.js"
	caKey         = "ca.pem"
	container     = "k6"
)

// Objects builds tokex's Kubernetes objects for one campaign.
type Objects struct {
	Cfg        config.Campaign
	CampaignID string
	Namespace  string
	Secret     string    // client secret of the agents
	Key        *jose.Key // subject-token signing key (RS256 or ES256)
	ActorKey   *jose.Key // actor-token signing key (subject.actor minted)
	// LogLimit is the smallest containerLogMaxSize known of the agents'
	// nodes (0: the kubelet's default), for kube.evidence_file auto.
	LogLimit int64
	noExec   bool // the caller may not exec into Pods: auto keeps no file
}

// Name is the prefix of every object of the campaign (DNS-1123, ≤ 52 chars).
func (o *Objects) Name() string { return names.DNSLabel("tokex-" + o.CampaignID) }

// CampaignLabels select every object of the campaign.
func (o *Objects) CampaignLabels() map[string]string {
	return map[string]string{LabelName: NameValue, LabelInstance: names.DNSLabel(o.CampaignID), LabelManaged: NameValue}
}

// Selector is CampaignLabels as a label selector string.
func (o *Objects) Selector() string {
	return LabelName + "=" + NameValue + "," + LabelInstance + "=" + names.DNSLabel(o.CampaignID)
}

// SecretObject holds the client secret and the subject key as a private JWK.
func (o *Objects) SecretObject() (*corev1.Secret, error) {
	jwk := o.Key.PrivateJWK()
	b, err := json.Marshal(jwk)
	if err != nil {
		return nil, err
	}
	data := map[string]string{"client-secret": o.Secret, "subject-jwk": string(b)}
	if o.actorMinted() {
		a, err := json.Marshal(o.ActorKey.PrivateJWK())
		if err != nil {
			return nil, err
		}
		data["actor-jwk"] = string(a)
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name(), Namespace: o.Namespace, Labels: o.CampaignLabels()},
		Type:       corev1.SecretTypeOpaque,
		StringData: data,
	}, nil
}

// ConfigMapObject holds the generated k6 script, and target.ca_file's
// certificates when set (public material).
func (o *Objects) ConfigMapObject() (*corev1.ConfigMap, error) {
	js, err := k6.Script(k6.ScriptParams{MaxVUs: o.Cfg.Agents.MaxInFlight})
	if err != nil {
		return nil, err
	}
	data := map[string]string{scriptKey: js}
	if f := o.Cfg.Target.CAFile; f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("target.ca_file: %w", err)
		}
		data[caKey] = string(pem)
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name(), Namespace: o.Namespace, Labels: o.CampaignLabels()},
		Data:       data,
	}, nil
}

// env is what the agent script reads: the run's rate and phases, the
// request, the subject tokens, the thresholds; secrets from the Secret.
func (o *Objects) env(p event.PlannedRun, perAgentMilli int64) []corev1.EnvVar {
	c := o.Cfg
	secretEnv := func(name, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: o.Name()}, Key: key}}}
	}
	env := []corev1.EnvVar{
		{Name: "AGENT_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
		{Name: "RATE_MILLI", Value: strconv.FormatInt(perAgentMilli, 10)},
		{Name: "WARMUP", Value: k6Duration(p.Warmup)},
		{Name: "DURATION", Value: k6Duration(p.Duration)},
		{Name: "TOKEN_URL", Value: c.Target.URL},
		{Name: "FORM", Value: o.form()},
		{Name: "AUTH_METHOD", Value: c.Request.AuthMethod},
		{Name: "REQUEST_TIMEOUT", Value: k6Duration(c.Request.Timeout)},
		{Name: "CLIENT_PREFIX", Value: c.Agents.ClientIDPrefix},
		{Name: "SUBJECT_ISSUER", Value: c.Subject.Issuer},
		{Name: "SUBJECT_ALG", Value: o.Key.Alg},
		{Name: "SUBJECT_LIFETIME_S", Value: strconv.Itoa(int(c.Subject.Lifetime / time.Second))},
		{Name: "USERS", Value: strconv.Itoa(c.Users.Count)},
		{Name: "USER_PREFIX", Value: c.Users.Prefix},
		{Name: "CAMPAIGN", Value: o.CampaignID},
		{Name: "P95_MS", Value: strconv.FormatFloat(c.Thresholds.P95Ms, 'f', -1, 64)},
		{Name: "SUCCESS_RATIO", Value: strconv.FormatFloat(c.Thresholds.SuccessRatio, 'f', -1, 64)},
		{Name: "MAX_DROPPED", Value: strconv.FormatInt(c.Thresholds.MaxDropped, 10)},
		secretEnv("CLIENT_SECRET", "client-secret"),
		secretEnv("SUBJECT_JWK", "subject-jwk"),
	}
	if w := o.workload(p); w != "" {
		env = append(env, corev1.EnvVar{Name: "WORKLOAD", Value: w})
	}
	if o.actorMinted() {
		env = append(env, secretEnv("ACTOR_JWK", "actor-jwk"))
	}
	return append(env, transportEnv(c)...)
}

// transportEnv makes k6 connect as the local driver does: TLS verification
// off when asked (target.insecure_skip_verify or kube.insecure_skip_verify),
// target.ca_file as the roots (Go's SSL_CERT_FILE, which k6 inherits), and
// HTTP/2 off when target.http is 1.1 or http2 false (Go's GODEBUG=http2client=0).
func transportEnv(c config.Campaign) []corev1.EnvVar {
	var env []corev1.EnvVar
	if c.Kube.InsecureSkipVerify || c.Target.InsecureSkipVerify {
		env = append(env, corev1.EnvVar{Name: "K6_INSECURE_SKIP_TLS_VERIFY", Value: "true"})
	}
	if c.Target.CAFile != "" {
		env = append(env, corev1.EnvVar{Name: "SSL_CERT_FILE", Value: "/scripts/" + caKey})
	}
	if c.Target.Protocol() == "1.1" {
		env = append(env, corev1.EnvVar{Name: "GODEBUG", Value: "http2client=0"})
	}
	return env
}

// form is the request's fixed part, form-encoded, for the script.
func (o *Objects) form() string {
	return o.Cfg.HopTemplate(1, 1).Compile().Fixed()
}

// JobName is the run's Job name.
func (o *Objects) JobName(p event.PlannedRun) string {
	return names.DNSLabel(fmt.Sprintf("%s-%d", o.Name(), p.Index))
}

// RunLabels select the run's Job and Pods.
func (o *Objects) RunLabels(p event.PlannedRun) map[string]string {
	l := o.CampaignLabels()
	l[LabelRun] = names.DNSLabel(p.ID)
	return l
}

// JobObject is the run's Indexed Job: one k6 Pod per agent.
func (o *Objects) JobObject(p event.PlannedRun) (*batchv1.Job, error) {
	c := o.Cfg
	k := c.Kube
	agents := int32(c.Agents.Count)
	perAgentMilli := int64(p.TargetRPS / float64(c.Agents.Count) * 1000)
	if perAgentMilli < 1 {
		return nil, fmt.Errorf("%s: %g exchanges/s over %d agents is below 0.001/s per agent", p.ID, p.TargetRPS, c.Agents.Count)
	}
	ttl := int32(k.TTLAfterFinished / time.Second)
	indexed := batchv1.IndexedCompletion
	zero := int32(0)
	env := o.env(p, perAgentMilli)
	labels := o.RunLabels(p)
	podLabels := map[string]string{}
	for kk, v := range k.Labels {
		podLabels[kk] = v
	}
	for kk, v := range labels {
		podLabels[kk] = v
	}
	pod := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name:         container,
			Image:        k.Image,
			Args:         k6Args(k.SummaryMode),
			Env:          env,
			VolumeMounts: []corev1.VolumeMount{{Name: "script", MountPath: "/scripts", ReadOnly: true}},
		}},
		Volumes: []corev1.Volume{{Name: "script", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: o.Name()}}}}},
		NodeSelector: k.NodeSelector,
	}
	if len(k.Resources) > 0 {
		if err := convert(k.Resources, &pod.Containers[0].Resources); err != nil {
			return nil, fmt.Errorf("kube.resources: %w", err)
		}
	}
	sizeAgent(&pod.Containers[0].Resources, p.TargetRPS/float64(c.Agents.Count), c.Subject.Alg, preallocatedVUs(c.Agents.MaxInFlight, p.Warmup > 0))
	if len(k.Tolerations) > 0 {
		if err := convert(k.Tolerations, &pod.Tolerations); err != nil {
			return nil, fmt.Errorf("kube.tolerations: %w", err)
		}
	}
	if len(k.Affinity) > 0 {
		pod.Affinity = &corev1.Affinity{}
		if err := convert(k.Affinity, pod.Affinity); err != nil {
			return nil, fmt.Errorf("kube.affinity: %w", err)
		}
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: k.Annotations}, Spec: pod}
	if o.keepsFile(p) {
		withEvidenceFile(&tmpl)
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.JobName(p), Namespace: o.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode:          &indexed,
			Completions:             &agents,
			Parallelism:             &agents,
			BackoffLimit:            &zero,
			TTLSecondsAfterFinished: &ttl,
			Template:                tmpl,
		},
	}, nil
}

// k6Args is the agent's command line; --summary-mode only when asked for,
// so that a pre-v1 k6 image still runs.
func k6Args(summaryMode string) []string {
	args := []string{"run", "--quiet", "--no-color", "--log-format=raw"}
	if summaryMode != "" && summaryMode != "compact" {
		args = append(args, "--summary-mode="+summaryMode)
	}
	return append(args, "/scripts/"+scriptKey)
}

// convert maps config values written with Kubernetes' JSON field names
// onto the API types, so that a wrong field is an error, not ignored.
func convert(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

// k6Duration renders a duration the way k6 parses it ("330s").
func k6Duration(d time.Duration) string {
	ms := d.Milliseconds()
	if ms%1000 == 0 {
		return strconv.FormatInt(ms/1000, 10) + "s"
	}
	return strconv.FormatInt(ms, 10) + "ms"
}
