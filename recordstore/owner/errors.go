// Sentinel and typed errors of the owner package.

package owner

import (
	"errors"
	"fmt"
)

var (
	// ErrUnsafeFileSystem is returned by Open (and CheckFileSystem) when
	// the store's folder is on a network or FUSE file system.
	ErrUnsafeFileSystem = errors.New("unsafe file system")
	// ErrLocked is returned by Exclusive when another process holds the
	// lock; the error is a *LockedError carrying the holder's state.
	ErrLocked = errors.New("locked")
	// ErrNoState is returned by ReadState when no state file exists.
	ErrNoState = errors.New("no owner state")
	// ErrBadState is returned by ReadState when the state file is not a
	// state (not JSON, or JSON of another shape): torn by hand, or garbage.
	ErrBadState = errors.New("unreadable owner state")
	// ErrProtocol is returned by the control client when the peer speaks
	// another protocol or answers with malformed JSON.
	ErrProtocol = errors.New("control protocol")
)

// ErrCatalogVersion is the sentinel of CatalogVersionError.
var ErrCatalogVersion = errors.New("catalog version mismatch")

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
