package cli

import (
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/runner/config"
)

// TestPIDFlag: --pid takes a process id or listen, overrides target.pid
// only where an engine process on this host is sampled, and goes with
// --resume (a restarted server has a new PID; issue 23).
func TestPIDFlag(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{{"1234", true}, {"listen", true}, {" 77 ", true}, {"0", false}, {"-3", false}, {"auto", false}, {"99999999", false}} {
		var v pidValue
		if err := v.Set(c.in); (err == nil) != c.ok {
			t.Errorf("--pid %q: %v", c.in, err)
		}
	}
	remote := config.Article()
	remote.Target.URL = "http://127.0.0.1:5556/token"
	cgroup := remote
	cgroup.Target.Cgroup = "/sys/fs/cgroup/as.service"
	kube := remote
	kube.Driver = "kube"
	for _, c := range []struct {
		cfg  config.Campaign
		want string
	}{{remote, ""}, {config.Article(), "embedded"}, {cgroup, "target.cgroup"}, {kube, "kube"}} {
		err := pidApplies("1234", c.cfg)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("--pid with %+v: %v, want %q", c.cfg.Target, err, c.want)
		}
	}
	cmd := newRunCmd(deps{})
	if err := cmd.ParseFlags([]string{"--resume", "dir", "--pid", "listen"}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		t.Errorf("--resume with --pid: %v", err)
	}
}
