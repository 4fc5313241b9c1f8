//go:build !unix

package authserver

import (
	"errors"
	"syscall"
)

func reusePort(_, _ string, _ syscall.RawConn) error {
	return errors.New("reuse_port: SO_REUSEPORT is not available on this system")
}
