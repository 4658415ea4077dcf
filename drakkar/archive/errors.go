// Sentinel errors of drakkar/archive.

package archive

import (
	"github.com/fb46ecde/records/drakkar/internal/errcode"
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
// Report.Failed, each with its code (recordstore.Code).
var (
	// ErrFenced (code "fenced"): the lock no longer holds this pass's
	// token; the pass published nothing and deleted nothing since.
	ErrFenced = errcode.Sentinel("fenced", "archive: the lock was taken over")
	// ErrCorruptArchive (code "corrupt", as the engine's corrupt store):
	// the file at the window's final name cannot be read; the window
	// stalls with its sources untouched until an operator removes the
	// file.
	ErrCorruptArchive = errcode.Sentinel("corrupt", "archive: the archive at the final name is unreadable")
	// ErrArchiveAppeared (code "exists"): a file appeared at the final
	// name while the window was merged; nothing was published and the
	// next pass folds it.
	ErrArchiveAppeared = errcode.Sentinel("exists", "archive: an archive appeared at the final name")
	// ErrNotArchived is returned by Report.Err when a due window could not
	// be published (Report.Failed is not empty). Its code is internal: the
	// cause of each window is in Report.Failed.
	ErrNotArchived = errcode.Sentinel(recordstore.CodeInternal, "due windows not archived")
)
