//go:build !linux

package owner

import "net"

// peerPID is not available here: a socket still served by a dying
// previous owner is left for listenControl to refuse (the promotion then
// serves a second later; see serveUntilServed).
func peerPID(net.Conn) (int, bool) { return 0, false }
