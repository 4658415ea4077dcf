// Sentinel errors of dbfiles, one per kind of bad input. Each is a
// recordstore.Error of code invalid, so that the error code of a bad meta file or
// lock body is invalid wherever it surfaces (the CLI, the debug API).

package dbfiles

import "github.com/fb46ecde/records/recordstore"

var (
	// ErrBadJSON is returned by Canonicalize for text that is not JSON,
	// not UTF-8, or holds a number no float64 can hold.
	ErrBadJSON = recordstore.Invalidf("bad json")
	// ErrUnsupported is returned by CanonicalJSON for a Go value that has
	// no canonical JSON form (a struct, a channel, a map whose keys are
	// not strings, []byte) or a float that is NaN or infinite.
	ErrUnsupported = recordstore.Invalidf("value has no canonical json form")
	// ErrBadTime is returned by ParseTime for text that is not exactly
	// YYYY-MM-DDTHH:MM:SS.ffffffZ.
	ErrBadTime = recordstore.Invalidf("bad time")
	// ErrBadMeta is returned by DecodeMeta, EncodeMeta and ReadMeta for a
	// meta object that breaks schema 1: unknown schema, a missing or
	// unknown key, a value of the wrong type, bad time text.
	ErrBadMeta = recordstore.Invalidf("bad meta file")
	// ErrBadLock is returned by DecodeLock and EncodeLock for a lock body
	// that is not the spec's four keys with their types.
	ErrBadLock = recordstore.Invalidf("bad archive lock body")
)
