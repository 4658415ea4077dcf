// Sentinel errors of drakkar/merge: the arguments a merge refuses and why
// a source is skipped.

package merge

import (
	"github.com/fb46ecde/records/recordstore"
)

// Errors of Merge's arguments and outcome, all of code invalid (they match
// recordstore.ErrInvalid). Nothing is written when Merge returns one.
var (
	// ErrOutputExists is returned when something already exists at the
	// output's path: a merge never overwrites a file.
	ErrOutputExists = recordstore.Invalidf("merge output already exists")
	// ErrNoSources is returned when the list of sources is empty.
	ErrNoSources = recordstore.Invalidf("merge has no sources")
	// ErrBadPath is returned for an empty output path or one that names a
	// folder.
	ErrBadPath = recordstore.Invalidf("bad merge output path")
	// ErrNothingMerged is returned when every source was skipped (none
	// merged, none partial): no output is written. The Result still
	// reports each source's cause.
	ErrNothingMerged = recordstore.Invalidf("merge: no source could be read")
)

// Causes of a skipped source, found with errors.Is on SourceResult.Err.
// Every skipped source's Err also matches ErrUnreadable. They are of code
// invalid: the source is not a file the merge reads.
var (
	// ErrUnreadable wraps the cause of every skipped source.
	ErrUnreadable = recordstore.Invalidf("merge: source unreadable")
	// ErrNotSQLite is the cause for a file that does not start with the
	// SQLite header (garbage, an empty file, a gzip archive not yet
	// decompressed) or is not a regular file.
	ErrNotSQLite = recordstore.Invalidf("merge: source is not a SQLite database")
	// ErrUnknownFormat is the cause for a SQLite file that holds neither
	// the recorder's tables nor the merged format.
	ErrUnknownFormat = recordstore.Invalidf("merge: source is neither a recorder file nor a merged file")
	// ErrDuplicateSource is the cause for a path given twice: its second
	// occurrence is skipped so that no event is merged twice.
	ErrDuplicateSource = recordstore.Invalidf("merge: source given twice")
)

// unreadable wraps a source's failure so that it matches ErrUnreadable
// and keeps its cause.
func unreadable(path string, err error) error {
	return recordstore.Errorf(ErrUnreadable, "%s: %w", path, err)
}
