package kube

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/tokex-dev/tokex/collector/event"
	"github.com/tokex-dev/tokex/collector/stats"
	"github.com/tokex-dev/tokex/runner/config"
)

func fileMode(mode string) func(*config.Campaign) {
	return func(c *config.Campaign) { c.Kube.EvidenceFile = mode }
}

// Issue 17: an agent whose log passes the kubelet's rotation size loses the
// lines the follow had not read at the rotation. With the evidence file the
// run keeps every row: the stream's live, the lost ones from the file
// (evidence only), and the reconciliation with k6's summary finds nothing
// missing. Without the file, the same loss is flagged.
func TestEvidenceFileKeepsWhatRotationTook(t *testing.T) {
	const s0 = 1796064356036000
	// Lines 5–24 of agent 0 (warmup 5–9, measured slots 0–14) never reach
	// the stream; agent 1 loses nothing.
	agents := []agentSpec{
		{startUS: s0, warm: 10, meas: 20, sumWarm: -1, sumMeas: -1, file: true, lose: [2]int{5, 25}},
		{startUS: s0, warm: 10, meas: 20, sumWarm: -1, sumMeas: -1, file: true, dropSlots: []int{4}},
	}
	r := runFake(t, agents, fileMode(fileAlways))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if w, m, d := r.out.count(stats.Warmup, false), r.out.count(stats.Measured, false), r.out.count(stats.Measured, true); w != 20 || m != 39 || d != 1 {
		t.Errorf("rows: warmup %d measured %d dropped %d, want 20, 39, 1\n%s", w, m, d, r.out.logs())
	}
	if r.out.kept != 20 {
		t.Errorf("%d rows from the file, want the 20 the stream lost", r.out.kept)
	}
	for _, w := range r.res.Warnings {
		if w.Code == stats.WarnIncompleteEvidence {
			t.Errorf("evidence judged incomplete: %s", w)
		}
	}
	// Every row exactly once: agent 0's slots each have one row.
	seen := map[string]int{}
	for _, q := range r.out.rows {
		seen[string(q.Phase)+string(rune('0'+q.Agent))+":"+time.Duration(q.Seq).String()]++
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s: %d rows", k, n)
		}
	}
	for pod, n := range r.fc.touched {
		if n != 1 || r.fc.cats[pod] != 1 {
			t.Errorf("%s: %d cat, %d touch", pod, r.fc.cats[pod], n)
		}
	}
	if len(r.fc.touched) != 2 || !strings.Contains(r.out.logs(), "it held 20 request line(s) the log stream had not delivered") {
		t.Errorf("touched %v\n%s", r.fc.touched, r.out.logs())
	}

	// The same loss without the file: rows are lost, and flagged.
	r = runFake(t, agents, fileMode(fileNever))
	if m := r.out.count(stats.Measured, false); m != 24 || !strings.Contains(codes(r.res.Warnings), string(stats.WarnIncompleteEvidence)) {
		t.Errorf("without the file: %d measured rows, warnings %s", m, codes(r.res.Warnings))
	}
}

// A copy that fails leaves the stream's rows as the evidence, flagged; an
// exec failure is retried, and the Pod is told to end all the same.
func TestEvidenceFileCopyFails(t *testing.T) {
	const s0 = 1796064356036000
	a := agentSpec{startUS: s0, warm: 10, meas: 20, sumWarm: -1, sumMeas: -1, file: true, lose: [2]int{12, 20},
		cat: func(io.Writer, []string) error { return errors.New(`container "k6" not found`) }}
	r := runFake(t, []agentSpec{a}, fileMode(fileAlways))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if m := r.out.count(stats.Measured, false); m != 12 || r.out.kept != 0 {
		t.Errorf("%d measured rows (%d from the file), want the stream's 12", m, r.out.kept)
	}
	if !strings.Contains(codes(r.res.Warnings), string(stats.WarnIncompleteEvidence)) {
		t.Errorf("warnings %s", codes(r.res.Warnings))
	}
	logs := r.out.logs()
	if !strings.Contains(logs, `evidence file not copied: exec: container "k6" not found; its log's rows are the evidence`) {
		t.Errorf("logs:\n%s", logs)
	}
	for pod, n := range r.fc.cats {
		if n != copyTries || r.fc.touched[pod] != 1 {
			t.Errorf("%s: %d cat, %d touch", pod, n, r.fc.touched[pod])
		}
	}
}

// The file is the agent's, so an adversary's: a gzip bomb, an endless line,
// a file that is not gzip, more rows than the plan: each stops the copy with
// a clear error, bounded, without a retry; the stream's rows stay.
func TestEvidenceFileHostile(t *testing.T) {
	const s0 = 1796064356036000
	flood := func(w io.Writer, unit string) error {
		zw := gzip.NewWriter(w)
		chunk := []byte(strings.Repeat(unit, max(1, 1<<16/len(unit))))
		for i := 0; i < 1<<14; i++ { // 1 GiB at most: the reader stops far earlier
			if _, err := zw.Write(chunk); err != nil {
				return err
			}
		}
		return zw.Close()
	}
	cases := []struct {
		name string
		cat  func(io.Writer, []string) error
		err  string
	}{
		{"gzip bomb", func(w io.Writer, _ []string) error { return flood(w, "k6 says "+strings.Repeat("x", 8184)+"\n") }, "evidence file: more than the plan allows (16 MiB decompressed)"},
		{"empty lines", func(w io.Writer, _ []string) error { return flood(w, "\n") }, "evidence file: more than the 100124 lines the plan allows"},
		{"endless line", func(w io.Writer, _ []string) error { return flood(w, "0") }, "evidence file: a line longer than 64 KiB"},
		{"not gzip", func(w io.Writer, full []string) error {
			_, err := io.WriteString(w, strings.Join(full, "\n"))
			return err
		}, "evidence file: gzip: invalid header"},
		{"more rows than the plan", func(w io.Writer, full []string) error {
			zw := gzip.NewWriter(w)
			for i := 0; i < 5; i++ {
				_, _ = io.WriteString(zw, strings.Join(full, "\n")+"\n")
			}
			return zw.Close()
		}, "evidence file: more than the 62 request lines the plan allows"},
		{"truncated", func(w io.Writer, full []string) error {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			_, _ = io.WriteString(zw, strings.Join(full, "\n")+"\n")
			_ = zw.Close()
			_, err := w.Write(b.Bytes()[:b.Len()/2])
			return err
		}, "evidence file: unexpected EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := agentSpec{startUS: s0, warm: 10, meas: 20, sumWarm: -1, sumMeas: -1, file: true, lose: [2]int{12, 20}, cat: tc.cat}
			r := runFake(t, []agentSpec{a}, fileMode(fileAlways))
			if r.err != nil {
				t.Fatal(r.err)
			}
			if logs := r.out.logs(); !strings.Contains(logs, "evidence file not copied: "+tc.err) {
				t.Errorf("logs:\n%s", logs)
			}
			if m := r.out.count(stats.Measured, false); m < 12 || !strings.Contains(codes(r.res.Warnings), string(stats.WarnIncompleteEvidence)) {
				t.Errorf("%d measured rows, warnings %s", m, codes(r.res.Warnings))
			}
			for pod, n := range r.fc.cats {
				if n != 1 || r.fc.touched[pod] != 1 {
					t.Errorf("%s: %d cat, %d touch", pod, n, r.fc.touched[pod])
				}
			}
		})
	}
}

// kube.evidence_file decides per run: always, never, or auto when one
// agent's log estimate passes half the nodes' rotation size; auto keeps no
// file where the caller may not exec.
func TestKeepsFile(t *testing.T) {
	o := testObjects(t)
	small := event.PlannedRun{ID: "r", TargetRPS: 500, Warmup: 30 * time.Second, Duration: 5 * time.Minute, Agents: 10} // 1.7 MiB an agent
	big := small
	big.TargetRPS = 5000 // 17 MiB an agent
	cases := []struct {
		mode     string
		limit    int64
		noExec   bool
		run      event.PlannedRun
		want     bool
		annotate bool
	}{
		{"", 0, false, small, false, false},
		{"", 0, false, big, true, true},
		{"auto", 3 << 20, false, small, true, true}, // 1.7 MiB > half of 3 MiB
		{"auto", 0, true, big, false, false},
		{"always", 0, true, small, true, true},
		{"never", 0, false, big, false, false},
	}
	for _, c := range cases {
		o.Cfg.Kube.EvidenceFile, o.LogLimit, o.noExec = c.mode, c.limit, c.noExec
		j, err := o.JobObject(c.run)
		if err != nil {
			t.Fatal(err)
		}
		ct := j.Spec.Template.Spec.Containers[0]
		_, ann := j.Spec.Template.Annotations[fileAnnotation]
		wrapped := len(ct.Command) == 4 && ct.Command[0] == "sh" && ct.Command[2] == agentWrapper && ct.WorkingDir == evidenceDir
		if o.keepsFile(c.run) != c.want || wrapped != c.want || ann != c.annotate {
			t.Errorf("%+v: keeps %v, wrapped %v, annotated %v", c, o.keepsFile(c.run), wrapped, ann)
		}
		if wrapped && strings.Join(ct.Args, " ") != "run --quiet --no-color --log-format=raw /scripts/exchange.js" {
			t.Errorf("k6's arguments changed: %q", ct.Args)
		}
	}
	// The user's annotations are not written through.
	o.Cfg.Kube.Annotations = map[string]string{"a": "b"}
	o.Cfg.Kube.EvidenceFile = fileAlways
	if _, err := o.JobObject(small); err != nil || len(o.Cfg.Kube.Annotations) != 1 {
		t.Errorf("annotations %v (%v)", o.Cfg.Kube.Annotations, err)
	}
}

// Copying the file needs exec into the agent Pods, asked once per campaign:
// always without it is refused at the start, auto then keeps no file.
func TestEvidenceFileNeedsExec(t *testing.T) {
	for _, mode := range []string{fileAlways, fileAuto} {
		o := testObjects(t)
		o.Cfg.Kube.EvidenceFile = mode
		cs := fake.NewClientset()
		cs.PrependReactor("create", "selfsubjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, &authv1.SelfSubjectAccessReview{Status: authv1.SubjectAccessReviewStatus{Reason: "RBAC: no rule allows it"}}, nil
		})
		d := &Driver{Cfg: o.Cfg, CampaignID: o.CampaignID, Client: cs, Namespace: "pf-perf", Secret: "x", Key: o.Key,
			exec: func(context.Context, string, string, []string, io.Writer) error { return nil }}
		out := &recorder{}
		err := d.Start(context.Background(), out)
		if mode == fileAlways {
			if err == nil || !strings.Contains(err.Error(), "kube.evidence_file always: copying the agents' evidence files needs exec into their Pods: the caller may not create pods/exec in pf-perf (RBAC: no rule allows it)") {
				t.Errorf("always: %v", err)
			}
			continue
		}
		if err != nil || !d.objs.noExec || !strings.Contains(out.logs(), "agents keep no evidence file (the caller may not create pods/exec in pf-perf (RBAC: no rule allows it))") {
			t.Errorf("auto: %v, noExec %v\n%s", err, d.objs.noExec, out.logs())
		}
		_ = d.Close()
	}
}
