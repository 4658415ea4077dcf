//go:build !linux

package owner

import "errors"

// errNoWatch is watchFolder's answer on a platform without folder
// notifications.
var errNoWatch = errors.New("folder notifications are not supported on this platform")

// watchFolder is not available here (see watch_linux.go): the owner is
// woken by its socket and its polling.
func watchFolder(dir string, arrived func()) (stop func(), err error) {
	return nil, errNoWatch
}
