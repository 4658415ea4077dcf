// Sentinel errors of dbfiles, one per kind of bad input.

package dbfiles

import "errors"

var (
	// ErrBadJSON is returned by Canonicalize for text that is not JSON,
	// not UTF-8, or holds a number no float64 can hold.
	ErrBadJSON = errors.New("dbfiles: bad json")
	// ErrUnsupported is returned by CanonicalJSON for a Go value that has
	// no canonical JSON form (a struct, a channel, a map whose keys are
	// not strings, []byte) or a float that is NaN or infinite.
	ErrUnsupported = errors.New("dbfiles: value has no canonical json form")
	// ErrBadTime is returned by ParseTime for text that is not exactly
	// YYYY-MM-DDTHH:MM:SS.ffffffZ.
	ErrBadTime = errors.New("dbfiles: bad time")
	// ErrBadMeta is returned by DecodeMeta, EncodeMeta and ReadMeta for a
	// meta object that breaks schema 1: unknown schema, a missing or
	// unknown key, a value of the wrong type, bad time text.
	ErrBadMeta = errors.New("dbfiles: bad meta file")
	// ErrBadLock is returned by DecodeLock and EncodeLock for a lock body
	// that is not the spec's four keys with their types.
	ErrBadLock = errors.New("dbfiles: bad archive lock body")
)
