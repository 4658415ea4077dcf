package owner

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerPID returns the process id of the other end of a unix socket
// connection (SO_PEERCRED: for a connection to a listener, the process
// that made it listen).
func peerPID(c net.Conn) (int, bool) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Ucred
	cerr := raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if cerr != nil || err != nil || cred == nil {
		return 0, false
	}
	return int(cred.Pid), true
}
