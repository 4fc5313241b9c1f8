package local

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/tokex-dev/tokex/collector/evidence"
	"github.com/tokex-dev/tokex/collector/proc"
	"github.com/tokex-dev/tokex/runner"
)

// PIDListen is Driver.PID's value that samples the process listening on
// the target's port (tokex run --pid listen).
const PIDListen = "listen"

// enginePID finds the remote target's engine process and says how: --pid
// (a number, or listen), target.pid_file (read now, so a restarted server
// is found by its new PID), or target.pid. A zero identity: none is set.
func (d *Driver) enginePID() (proc.Identity, string, error) {
	t := d.Cfg.Target
	switch {
	case d.PID == PIDListen:
		port, addrs, err := targetPort(t.URL)
		if err != nil {
			return proc.Identity{}, "", fmt.Errorf("--pid listen: %w", err)
		}
		id, err := proc.Listening(port, addrs)
		if err != nil {
			return proc.Identity{}, "", fmt.Errorf("--pid listen: %w", err)
		}
		return id, fmt.Sprintf("--pid listen: the process listening on port %d", port), nil
	case d.PID != "":
		pid, err := strconv.Atoi(d.PID)
		if err != nil || pid <= 0 {
			return proc.Identity{}, "", fmt.Errorf("--pid: %q is neither a process id nor %q", d.PID, PIDListen)
		}
		id, err := proc.Identify(pid)
		if err != nil {
			return id, "", fmt.Errorf("--pid: %w", err)
		}
		return id, "--pid", nil
	case t.PIDFile != "":
		pid, err := proc.ReadPIDFile(t.PIDFile)
		if err != nil {
			return proc.Identity{}, "", fmt.Errorf("target.pid_file: %w", err)
		}
		id, err := d.recorded(pid)
		if err != nil {
			return id, "", fmt.Errorf("target.pid_file %s: %w%s", t.PIDFile, err, d.restartHint())
		}
		return id, "target.pid_file " + t.PIDFile, nil
	case t.PID > 0:
		id, err := d.recorded(t.PID)
		if err != nil {
			return id, "", fmt.Errorf("target.pid: %w%s", err, d.restartHint())
		}
		return id, "target.pid", nil
	}
	return proc.Identity{}, "", nil
}

// recorded identifies pid, the process the configuration names, and
// refuses it when it is not the one a resumed campaign sampled: its PID
// reused by another process, or another program.
func (d *Driver) recorded(pid int) (proc.Identity, error) {
	id, err := proc.Identify(pid)
	r := d.Recorded
	if err != nil || r == nil || r.PID != pid {
		return id, err
	}
	switch {
	case r.StartTicks != 0 && r.StartTicks != id.Start:
		return id, fmt.Errorf("process %d %w: its PID now names %s, started after the engine this campaign sampled (%s)",
			pid, proc.ErrExited, id, r)
	case r.Comm != "" && r.Comm != id.Comm:
		return id, fmt.Errorf("process %d is %s, not %s that this campaign sampled", pid, id, r)
	}
	return id, nil
}

// restartHint says how to go on when the configured engine process is
// gone: a restarted server has a new PID, perhaps the one listening on the
// target's port.
func (d *Driver) restartHint() string {
	hint := "; if the server restarted, give its new PID: --pid N"
	if port, addrs, err := targetPort(d.Cfg.Target.URL); err == nil {
		if id, err := proc.Listening(port, addrs); err == nil {
			return fmt.Sprintf("%s, or --pid %s (%s listens on port %d)", hint, PIDListen, id, port)
		}
		return hint + ", or --pid " + PIDListen + " (the process listening on the target's port)"
	}
	return hint
}

// targetPort is the target URL's port and the addresses its host names.
func targetPort(target string) (int, []net.IP, error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return 0, nil, fmt.Errorf("target.url %q has no host", target)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n, err := strconv.Atoi(port)
	if err != nil || n <= 0 || n > 65535 {
		return 0, nil, fmt.Errorf("target.url %q has no TCP port", target)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		return n, []net.IP{ip}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip", host)
	if err != nil {
		return n, nil, nil // any address: the port decides
	}
	return n, ips, nil
}

// engineRecord is what the manifest keeps of the sampled process.
func engineRecord(id proc.Identity, found string) *evidence.EngineProcess {
	return &evidence.EngineProcess{PID: id.PID, StartTicks: id.Start, Comm: id.Comm, Found: found, At: time.Now()}
}

// engineExited stops every run from now on: the sampled process is gone.
func (d *Driver) engineExited(err error) {
	d.goneOnce.Do(func() {
		d.goneErr = fmt.Errorf("%w: %w", runner.ErrEngineExited, err)
		close(d.gone)
	})
}
