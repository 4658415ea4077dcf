// Sentinel and typed errors of the owner package, grouped by the operation
// that returns them.

package owner

import (
	"errors"
	"fmt"
)

// Opening a store.
var (
	// ErrUnsafeFileSystem is returned by Open (and CheckFileSystem) when
	// the store's folder is on a network or FUSE file system.
	ErrUnsafeFileSystem = errors.New("unsafe file system")
	// ErrStartTimeout is returned by Open when the owner did not become
	// ready within StartWait.
	ErrStartTimeout = errors.New("owner did not become ready")
	// ErrCatalogVersion is the sentinel of CatalogVersionError, returned
	// by Open in a non-owner whose build has another catalog version than
	// the owner's (and by the reads of a detached backend).
	ErrCatalogVersion = errors.New("catalog version mismatch")
)

// Taking the lock.
var (
	// ErrLocked is returned by Exclusive when another process holds the
	// lock; the error is a *LockedError carrying the holder's state.
	ErrLocked = errors.New("locked")
)

// Reading the state file.
var (
	// ErrNoState is returned by ReadState when no state file exists.
	ErrNoState = errors.New("no owner state")
	// ErrBadState is returned by ReadState when the state file is not a
	// state (not JSON, or JSON of another shape): torn by hand, or garbage.
	ErrBadState = errors.New("unreadable owner state")
)

// Talking to the owner over the control socket.
var (
	// ErrProtocol is returned by the control client when the peer speaks
	// another protocol or answers with malformed JSON.
	ErrProtocol = errors.New("control protocol")
)

// Rotating the live file.
var (
	// ErrNotOwner is returned by Store.Rotate in a process that does not
	// own the store (only the owner writes the live file).
	ErrNotOwner = errors.New("not the store's owner")
	// ErrNoRotation is returned by Store.Rotate when the store's backend
	// is no Rotator.
	ErrNoRotation = errors.New("the backend cannot rotate its live file")
)

// Writing through the spool.
var (
	// ErrPending is the sentinel of PendingError, returned by a write (and
	// by Await) whose caller's context ended before the owner applied the
	// batch it published.
	ErrPending = errors.New("pending")
)

// CatalogVersionError says that the store's owner runs a build with another
// catalog version than this one. Open returns it in a non-owner without
// Options.OpenDetached; with it, every read of the detached backend
// returns an error wrapping it.
type CatalogVersionError struct {
	Owner, Build int
}

// Error names both catalog versions.
func (e *CatalogVersionError) Error() string {
	return fmt.Sprintf("the owner uses catalog version %d, this build %d", e.Owner, e.Build)
}

// Unwrap makes errors.Is(err, ErrCatalogVersion) true.
func (e *CatalogVersionError) Unwrap() error { return ErrCatalogVersion }

// ErrorCode is "catalog_version", the code the CLI prints.
func (e *CatalogVersionError) ErrorCode() string { return "catalog_version" }

// LockedError says who holds a lock. Owner is nil when the holder wrote no
// readable state.
type LockedError struct {
	Path  string
	Owner *State
}

// Error names the lock and, when known, the holder's pid and host.
func (e *LockedError) Error() string {
	if e.Owner == nil {
		return fmt.Sprintf("%s is locked by another process", e.Path)
	}
	return fmt.Sprintf("%s is locked by pid %d on %s (instance %s)", e.Path, e.Owner.PID, e.Owner.Host, e.Owner.Instance)
}

// Unwrap makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Unwrap() error { return ErrLocked }

// PendingError is returned when the caller's context ended before the
// owner applied a published batch. The batch is durable in the spool and
// will be applied exactly once; Store.Await resumes waiting for it. Do not
// blindly retry a write to an unkeyed kind: it would be applied twice.
type PendingError struct {
	BatchID string
}

// Error names the batch, which is spooled and not applied yet.
func (e *PendingError) Error() string {
	return "batch " + e.BatchID + " is spooled and not applied yet"
}

// Unwrap makes errors.Is(err, ErrPending) true.
func (e *PendingError) Unwrap() error { return ErrPending }

// ErrorCode is "pending", the code the CLI prints.
func (e *PendingError) ErrorCode() string { return "pending" }
