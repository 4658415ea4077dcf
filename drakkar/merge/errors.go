// Sentinel errors of drakkar/merge: the arguments a merge refuses and why
// a source is skipped.

package merge

import (
	"errors"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// Errors of Merge's arguments and outcome. The argument errors also match
// recordstore.ErrInvalid. Nothing is written when Merge returns one.
var (
	// ErrOutputExists is returned when something already exists at the
	// output's path: a merge never overwrites a file.
	ErrOutputExists = fmt.Errorf("%w: merge output already exists", recordstore.ErrInvalid)
	// ErrNoSources is returned when the list of sources is empty.
	ErrNoSources = fmt.Errorf("%w: merge has no sources", recordstore.ErrInvalid)
	// ErrBadPath is returned for an empty output path or one that names a
	// folder.
	ErrBadPath = fmt.Errorf("%w: bad merge output path", recordstore.ErrInvalid)
	// ErrNothingMerged is returned when every source was skipped (none
	// merged, none partial): no output is written. The Result still
	// reports each source's cause.
	ErrNothingMerged = errors.New("merge: no source could be read")
)

// Causes of a skipped source, found with errors.Is on SourceResult.Err.
// Every skipped source's Err also matches ErrUnreadable.
var (
	// ErrUnreadable wraps the cause of every skipped source.
	ErrUnreadable = errors.New("merge: source unreadable")
	// ErrNotSQLite is the cause for a file that does not start with the
	// SQLite header (garbage, an empty file, a gzip archive not yet
	// decompressed) or is not a regular file.
	ErrNotSQLite = errors.New("merge: source is not a SQLite database")
	// ErrUnknownFormat is the cause for a SQLite file that holds neither
	// the recorder's tables nor the merged format.
	ErrUnknownFormat = errors.New("merge: source is neither a recorder file nor a merged file")
	// ErrDuplicateSource is the cause for a path given twice: its second
	// occurrence is skipped so that no event is merged twice.
	ErrDuplicateSource = errors.New("merge: source given twice")
)

// unreadable wraps a source's failure so that it matches ErrUnreadable
// and keeps its cause.
func unreadable(path string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrUnreadable, path, err)
}
