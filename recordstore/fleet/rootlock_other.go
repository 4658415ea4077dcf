//go:build !unix

package fleet

// lockDir takes no lock where folders cannot be flocked: there a delete
// racing an open in another process is not excluded.
func lockDir(string, bool) (unlock func(), busy bool, err error) { return func() {}, false, nil }
