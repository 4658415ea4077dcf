// Sentinel and typed errors of the spool. Each sentinel carries the code of
// the recordstore sentinel a caller branches on, so recordstore.Code works.

package spool

import (
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// Sentinels. Each is a *recordstore.Error of code invalid (the input is
// malformed and will never load) or capacity (a configured limit was hit),
// so errors.Is finds recordstore.ErrInvalid or recordstore.ErrCapacity;
// add detail with recordstore.Errorf(ErrX, ...).
var (
	// ErrManifestFormat is returned for a manifest whose format is not 1.
	ErrManifestFormat = recordstore.Invalidf("unsupported manifest format")
	// ErrBadManifest is returned for a manifest that is not valid JSON or
	// whose fields break the rules of format 1 (bad ids, unknown op, ...).
	ErrBadManifest = recordstore.Invalidf("bad manifest")
	// ErrBadBatchName is returned for a batch folder name that does not
	// follow the naming rule.
	ErrBadBatchName = recordstore.Invalidf("bad batch name")
	// ErrChecksum is returned when a data file's size or SHA-256 differs
	// from its manifest entry.
	ErrChecksum = recordstore.Invalidf("checksum mismatch")
	// ErrUnsafePath is returned for a data file name that leaves the batch
	// folder, or a data file that is not a plain file (symlink, folder).
	ErrUnsafePath = recordstore.Invalidf("unsafe data file")
	// ErrRowCount is returned when a data file holds a different number of
	// rows than its manifest entry says.
	ErrRowCount = recordstore.Invalidf("row count mismatch")
	// ErrUnknownCodec is returned for a format name no codec is registered
	// under.
	ErrUnknownCodec = recordstore.Invalidf("unknown codec")
	// ErrTooManyRows is returned by a decoder that would return more rows
	// than Limits.MaxRows.
	ErrTooManyRows = recordstore.Errorf(recordstore.ErrCapacity, "too many rows")
	// ErrTooLarge is returned by a decoder that would read more bytes than
	// Limits.MaxBytes.
	ErrTooLarge = recordstore.Errorf(recordstore.ErrCapacity, "too large")
)

// ValidationError says which batch failed to load and why. It unwraps to
// the underlying error, so errors.Is(err, ErrChecksum) and
// recordstore.Code(err) work on it.
type ValidationError struct {
	// Batch is the batch folder name (or path, when no name is known).
	Batch string
	// Reason is the underlying error.
	Reason error
}

// Error implements error.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("spool batch %s: %v", e.Batch, e.Reason)
}

// Unwrap returns the reason.
func (e *ValidationError) Unwrap() error { return e.Reason }
