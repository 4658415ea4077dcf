// Sentinel and typed errors of the spool. Each sentinel wraps the
// recordstore sentinel a caller branches on, so recordstore.Code works.

package spool

import (
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// Sentinels. Each wraps recordstore.ErrInvalid (the input is malformed and
// will never load) or recordstore.ErrCapacity (a configured limit was hit).
var (
	// ErrManifestFormat is returned for a manifest whose format is not 1.
	ErrManifestFormat = fmt.Errorf("%w: unsupported manifest format", recordstore.ErrInvalid)
	// ErrBadManifest is returned for a manifest that is not valid JSON or
	// whose fields break the rules of format 1 (bad ids, unknown op, ...).
	ErrBadManifest = fmt.Errorf("%w: bad manifest", recordstore.ErrInvalid)
	// ErrBadBatchName is returned for a batch folder name that does not
	// follow the naming rule.
	ErrBadBatchName = fmt.Errorf("%w: bad batch name", recordstore.ErrInvalid)
	// ErrChecksum is returned when a data file's size or SHA-256 differs
	// from its manifest entry.
	ErrChecksum = fmt.Errorf("%w: checksum mismatch", recordstore.ErrInvalid)
	// ErrUnsafePath is returned for a data file name that leaves the batch
	// folder, or a data file that is not a plain file (symlink, folder).
	ErrUnsafePath = fmt.Errorf("%w: unsafe data file", recordstore.ErrInvalid)
	// ErrRowCount is returned when a data file holds a different number of
	// rows than its manifest entry says.
	ErrRowCount = fmt.Errorf("%w: row count mismatch", recordstore.ErrInvalid)
	// ErrUnknownCodec is returned for a format name no codec is registered
	// under.
	ErrUnknownCodec = fmt.Errorf("%w: unknown codec", recordstore.ErrInvalid)
	// ErrTooManyRows is returned by a decoder that would return more rows
	// than Limits.MaxRows.
	ErrTooManyRows = fmt.Errorf("%w: too many rows", recordstore.ErrCapacity)
	// ErrTooLarge is returned by a decoder that would read more bytes than
	// Limits.MaxBytes.
	ErrTooLarge = fmt.Errorf("%w: too large", recordstore.ErrCapacity)
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
