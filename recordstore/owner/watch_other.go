//go:build !linux

package owner

// watchFolder is not available here (see watch_linux.go): the owner is
// woken by its socket and its polling.
func watchFolder(dir string, arrived func()) (stop func(), err error) {
	return nil, errNoWatch
}
