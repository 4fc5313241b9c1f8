package kube

import (
	"context"
	"fmt"
	"maps"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/runner"
)

// The kubelet's log rotation can take lines the log follow has not read
// yet (rotation.go). With the evidence file, each agent Pod runs k6 under a
// small shell wrapper that tees k6's output, unchanged, into a gzip file on
// an emptyDir; once k6 has exited and the file is complete it prints
// fileMarker and waits, up to copyWait, for tokex to copy the file out
// (exec cat) and touch "copied". The log stream still carries every line
// live; the file gives tokex the lines the stream lost.
const (
	evidenceDir    = "/tokex"
	evidenceFile   = "k6.log.gz"
	copiedFile     = "copied"
	fileMarker     = "tokex-agent: k6 output complete in " + evidenceFile
	noFileMarker   = "tokex-agent: no evidence file"
	copyWaitS      = 300
	fileAnnotation = "tokex.dev/evidence-file"
)

// agentWrapper is the agent container's command in file mode: sh -c
// agentWrapper k6 <k6 args>. POSIX sh (the k6 image's busybox ash). k6's
// output goes through tee, so the log and the file hold the same lines in
// the same order; TERM (the Job deleted) reaches k6, which the shell as PID
// 1 would otherwise hold back; k6's exit code is the container's.
var agentWrapper = fmt.Sprintf(`set -u
stop=0
rm -f k6.fifo k6.pid k6.rc %[1]s %[1]s.part %[2]s
mkfifo k6.fifo || { echo "%[3]s: mkfifo failed"; exec k6 "$@"; }
gzip -c <k6.fifo >%[1]s.part &
z=$!
{ k6 "$@" 2>&1 & echo $! >k6.pid; wait $!; echo $? >k6.rc; } | tee k6.fifo &
p=$!
trap 'stop=1; kill -TERM "$(cat k6.pid 2>/dev/null)" 2>/dev/null' TERM INT
wait $p
while kill -0 $p 2>/dev/null; do wait $p; done
rc=$(cat k6.rc 2>/dev/null || echo 70)
if wait $z && mv %[1]s.part %[1]s; then
  echo "%[4]s (k6 exit code $rc)"
  i=0
  while [ $stop = 0 ] && [ ! -e %[2]s ] && [ $i -lt %[5]d ]; do sleep 1; i=$((i+1)); done
else
  echo "%[3]s: gzip failed"
fi
exit $rc
`, evidenceFile, copiedFile, noFileMarker, fileMarker, copyWaitS)

// Evidence file modes (kube.evidence_file).
const (
	fileAuto   = "auto"
	fileAlways = "always"
	fileNever  = "never"
)

// keepsFile says whether run p's agents keep the evidence file: always,
// never, or (auto) when one agent's log estimate passes half the smallest
// rotation size known (error lines are longer than the estimate's, and a
// follow that lags at a rotation loses what it had not read).
func (o *Objects) keepsFile(p event.PlannedRun) bool {
	switch o.Cfg.Kube.EvidenceFile {
	case fileAlways:
		return true
	case fileNever:
		return false
	}
	if o.noExec {
		return false
	}
	lines, per := agentLogEstimate(p, o.Cfg.Agents.Count)
	limit := o.LogLimit
	if limit <= 0 {
		limit = defaultContainerLogMaxSize
	}
	return 2*lines*per > limit
}

// withEvidenceFile makes the agent Pod keep the evidence file: the wrapper
// as its command (k6's arguments unchanged), an emptyDir as its working
// directory, and an annotation saying so.
func withEvidenceFile(tmpl *corev1.PodTemplateSpec) {
	c := &tmpl.Spec.Containers[0]
	c.Command = []string{"sh", "-c", agentWrapper, "k6"}
	c.WorkingDir = evidenceDir
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "tokex", MountPath: evidenceDir})
	tmpl.Spec.Volumes = append(tmpl.Spec.Volumes, corev1.Volume{Name: "tokex", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	ann := maps.Clone(tmpl.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[fileAnnotation] = evidenceDir + "/" + evidenceFile
	tmpl.Annotations = ann
}

// mayExec asks the API server whether the caller may exec into the agent
// Pods (SelfSubjectAccessReview), as copying the evidence file needs.
func mayExec(ctx context.Context, d *Driver) (bool, string, error) {
	r := &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{
		Namespace: d.Namespace, Verb: "create", Resource: "pods", Subresource: "exec"}}}
	res, err := d.Client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, r, metav1.CreateOptions{})
	if err != nil {
		return false, "", err
	}
	return res.Status.Allowed, res.Status.Reason, nil
}

// checkExec settles, once per campaign, whether the agents may keep the
// evidence file: it needs exec into their Pods. always without it is an
// error; auto without it uses the log stream alone, and says so.
func (d *Driver) checkExec(ctx context.Context, out runner.Output) error {
	mode := d.Cfg.Kube.EvidenceFile
	if mode == fileNever {
		return nil
	}
	why := "this connection cannot exec"
	if d.RESTConfig != nil || d.exec != nil {
		ok, reason, err := mayExec(ctx, d)
		switch {
		case err != nil:
			why = "cannot ask whether exec is allowed: " + err.Error()
		case !ok:
			why = "the caller may not create pods/exec in " + d.Namespace
			if reason != "" {
				why += " (" + reason + ")"
			}
		default:
			return nil
		}
	}
	if mode == fileAlways {
		return fmt.Errorf("kube.evidence_file always: copying the agents' evidence files needs exec into their Pods: %s", why)
	}
	d.objs.noExec = true
	d.log(out, "info", "agents keep no evidence file ("+why+"): a run whose log passes the kubelet's rotation size may lose rows, flagged as incomplete evidence")
	return nil
}
