// Sentinel errors of the fleet, grouped by the operation that returns them,
// each with the stable code the CLI prints (recordstore.Code).

package fleet

import (
	"errors"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// sentinel is a sentinel with a code of its own (recordstore.Code).
func sentinel(code, text string) error { return recordstore.NewCodedSentinel(code, text) }

// Creating a store (Provision, Import, an open that creates on demand).
var (
	// ErrExists is returned by Provision and Import when the key already
	// has a store (code "exists"). Nothing was changed.
	ErrExists = sentinel("exists", "exists")
	// ErrInvalidSource is returned by Import when the source is no store
	// of this key: not a readable SQLite file, failing integrity_check,
	// recording no key or another key, or holding a kind that conflicts
	// with the fleet's (code "invalid_source"). Nothing is published.
	ErrInvalidSource = sentinel("invalid_source", "invalid source")
)

// Opening a store.
var (
	// ErrMisplaced is returned when a store file records another key than
	// the one its path names, or none (it was copied or renamed by hand;
	// code "misplaced"). The file is left as it is.
	ErrMisplaced = sentinel("misplaced", "misplaced")
	// ErrOutsideRoot is returned when a store path is a symlink, or its
	// nearest existing folder resolves outside the fleet's root (code
	// "outside_root"). Nothing is created.
	ErrOutsideRoot = sentinel("outside_root", "outside the fleet root")
	// ErrDeleting is returned by an open of a key that is being deleted
	// in this process (code "deleting").
	ErrDeleting = sentinel("deleting", "deleting")
)

// Deleting a store.
var (
	// ErrInUse is returned by Delete when another process owns the store
	// (holds its lock; code "in_use"). Nothing is removed.
	ErrInUse = sentinel("in_use", "open in another process")
)

// ErrUnsafeDest is returned by Backup when a folder on the way to the
// destination could be changed by another user (code "unsafe_dest").
// Nothing is written.
var ErrUnsafeDest = sentinel("unsafe_dest", "unsafe destination")

// ErrUnreadable is returned by List with ListOptions.Open when a store
// cannot be read (code "unreadable"); the list names each one.
var ErrUnreadable = sentinel("unreadable", "unreadable store")

// errorf returns an error of the fleet sentinel s (its code, and
// errors.Is(err, s)) whose message is the formatted text alone:
// recordstore.Message gives the text without the sentinel's word, so the
// CLI prints "exists: tenant:acme has a store", not "exists: exists: ...",
// and Error() reads "<code>: <text>". A %w operand stays in the chain.
func errorf(s error, format string, args ...any) error {
	cause := fmt.Errorf(format, args...)
	wrapped := s
	_, many := cause.(interface{ Unwrap() []error })
	if many || errors.Unwrap(cause) != nil {
		wrapped = fmt.Errorf("%w: %w", s, cause)
	}
	return &recordstore.Error{Code: recordstore.Code(s), Msg: cause.Error(), Err: wrapped}
}
