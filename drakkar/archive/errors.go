// Sentinel errors of drakkar/archive.

package archive

import (
	"errors"

	"github.com/fb46ecde/records/recordstore"
)

// ErrConfig is returned by Config.Set and Config.Validate for an unknown
// key or a bad value; the message names the key. errors.Is(err,
// recordstore.ErrInvalid) holds as well. Pass returns it (wrapped) for a
// configuration that does not validate, and then touches nothing.
var ErrConfig = recordstore.Invalidf("archive config")

// ErrOptions is returned by Pass for missing options (no shared folder,
// no cluster): nothing is touched. It matches recordstore.ErrInvalid.
var ErrOptions = recordstore.Invalidf("archive options")

// Errors of one window, found with errors.Is in the log and in
// Report.Failed.
var (
	// ErrFenced: the lock no longer holds this pass's token; the pass
	// published nothing and deleted nothing since.
	ErrFenced = errors.New("archive: fenced (the lock was taken over)")
	// ErrCorruptArchive: the file at the window's final name cannot be
	// read; the window stalls with its sources untouched until an operator
	// removes the file.
	ErrCorruptArchive = errors.New("archive: the archive at the final name is unreadable")
	// ErrArchiveAppeared: a file appeared at the final name while the
	// window was merged; nothing was published and the next pass folds it.
	ErrArchiveAppeared = errors.New("archive: an archive appeared at the final name")
	// ErrNotArchived is returned by Report.Err when a due window could not
	// be published (Report.Failed is not empty).
	ErrNotArchived = errors.New("due windows not archived")
)
