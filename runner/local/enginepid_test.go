package local

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/proc"
	"github.com/tokex-dev/tokex/runner/config"
)

// TestEnginePIDWays: every way of naming the engine process, with this
// test process as the engine, and how each is recorded; a recorded engine
// whose PID now has another start time is refused.
func TestEnginePIDWays(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	me := os.Getpid()
	self, err := proc.Identify(me)
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "as.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(me)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := config.Article()
	c.Target.URL = "http://" + ln.Addr().String() + "/token"
	withPID, withFile := c, c
	withPID.Target.PID, withFile.Target.PIDFile = me, pidFile
	stale := &evidence.EngineProcess{PID: me, StartTicks: self.Start + 1, Comm: self.Comm, Found: "target.pid"}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	cases := []struct {
		name     string
		d        *Driver
		found    string
		wantErr  string
		exitedTo bool
	}{
		{"target.pid", &Driver{Cfg: withPID}, "target.pid", "", false},
		{"target.pid_file", &Driver{Cfg: withFile}, "target.pid_file " + pidFile, "", false},
		{"--pid N", &Driver{Cfg: withPID, PID: strconv.Itoa(me), Recorded: stale}, "--pid", "", false},
		{"--pid listen", &Driver{Cfg: c, PID: PIDListen}, "--pid listen: the process listening on port " + port, "", false},
		{"reused", &Driver{Cfg: withPID, Recorded: stale}, "", "its PID now names", true},
		{"reused through the pid file", &Driver{Cfg: withFile, Recorded: stale}, "", "its PID now names", true},
		{"another program", &Driver{Cfg: withPID, Recorded: &evidence.EngineProcess{PID: me, Comm: "dex"}}, "", "not " + strconv.Itoa(me) + " (dex)", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, found, err := tc.d.enginePID()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.Is(err, proc.ErrExited) != tc.exitedTo ||
					!strings.Contains(err.Error(), "--pid listen ("+strconv.Itoa(me)) {
					t.Errorf("err %v, want %q with the listening process named", err, tc.wantErr)
				}
				return
			}
			if err != nil || id.PID != me || id.Start != self.Start || found != tc.found {
				t.Errorf("%+v found by %q, %v; want %d found by %q", id, found, err, me, tc.found)
			}
		})
	}
}
