//go:build !unix

package owner

import (
	"io/fs"

	"github.com/gofrs/flock"
)

// flockFile is one exclusive lock on a path, taken without blocking
// (github.com/gofrs/flock's, which locks with LockFileEx on Windows).
type flockFile struct{ *flock.Flock }

func newFlockFile(path string, perm fs.FileMode) *flockFile {
	return &flockFile{flock.New(path, flock.SetPermissions(perm))}
}
