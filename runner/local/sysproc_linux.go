package local

import "syscall"

// sysProcAttr puts the child in its own process group (a terminal's Ctrl-C
// reaches tokex only, which stops the load first) and kills it if tokex dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
