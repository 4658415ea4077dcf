// Errors of Restore and Verify, each with the stable code the CLI prints
// (recordstore.Code).

package replica

import (
	"errors"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// sentinel is a sentinel with a code of its own (recordstore.Code).
func sentinel(code, text string) error { return recordstore.NewCodedSentinel(code, text) }

var (
	// ErrGap is returned by Restore and Verify when the replica's history
	// has a hole before the point asked for: a transaction range no file
	// of the replica holds (code "gap"). Nothing is restored, nothing is
	// replaced, and no file of the replica is removed.
	ErrGap = sentinel("gap", "gap in the replica's history")
	// ErrChecksum is returned when a replica file needed for the restore
	// fails its checksum or does not decode (code "checksum"). The staged
	// copy is removed; nothing is replaced.
	ErrChecksum = sentinel("checksum", "replica file fails its checksum")
	// ErrCheckFailed is returned when the restored copy fails
	// integrity_check or the engine's consistency checks
	// (sqlite.CheckFile) or the caller's own check (code "check_failed").
	// The staged copy is removed; nothing is replaced.
	ErrCheckFailed = sentinel("check_failed", "restored copy fails its checks")
	// ErrExists is returned by Restore when the store has a live file and
	// RestoreOptions.Force is not set (code "exists"). Nothing is read
	// from the replica.
	ErrExists = sentinel("exists", "store exists")
	// ErrInUse is returned by Restore when another process holds the
	// store's lock (an owner is running; code "in_use"). Nothing is read
	// from the replica and nothing is changed.
	ErrInUse = sentinel("in_use", "store is open in another process")
	// ErrMismatch is returned by Verify when a stream's high seq or row
	// count in the restored copy differs from the live store's, or a
	// stream is on one side only (code "mismatch"). The report lists
	// them.
	ErrMismatch = sentinel("mismatch", "replica differs from the live store")
)

// errorf returns an error of sentinel s (its code; errors.Is(err, s))
// whose message is the formatted text alone, so that the CLI prints
// "gap: ..." and not "gap: gap in ...: ...". A %w operand stays in the
// chain.
func errorf(s error, format string, args ...any) error {
	cause := fmt.Errorf(format, args...)
	wrapped := s
	_, many := cause.(interface{ Unwrap() []error })
	if many || errors.Unwrap(cause) != nil {
		wrapped = fmt.Errorf("%w: %w", s, cause)
	}
	return &recordstore.Error{Code: recordstore.Code(s), Msg: cause.Error(), Err: wrapped}
}
