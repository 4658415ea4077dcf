package owner

import "time"

// StandInFileSystem makes Open see every folder as a file system of type
// name, remote or not, until the returned func puts the real probe back.
func StandInFileSystem(name string, remote bool) (restore func()) {
	real := probeFileSystem
	probeFileSystem = func(string) (string, bool, error) { return name, remote, nil }
	return func() { probeFileSystem = real }
}

// AppendNotice appends the notice line the owner writes for commit count n.
func AppendNotice(buf []byte, n uint64) []byte { return appendNotice(buf, n) }

// RunListenChild is runListenChild for the external test package's TestMain.
var RunListenChild = runListenChild

// SetNoticeHold makes a producer hold a notice that arrives while its
// append waits for d instead of noticeHold (a loaded machine may answer
// later than that), until the returned func puts the default back.
func SetNoticeHold(d time.Duration) (restore func()) {
	noticeHoldFor.Store(int64(d))
	return func() { noticeHoldFor.Store(0) }
}
