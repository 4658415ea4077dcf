// Errors of the console's routes.

package console

import (
	"errors"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// Errors of the retry route.
var (
	// ErrWritesDisabled is returned (HTTP 403, code read_only) by a write
	// route of a console whose Options.AllowWrites is false: query serve
	// without --allow-writes.
	ErrWritesDisabled = fmt.Errorf("%w: the console only reads (query serve --allow-writes enables the retry of failed batches)", recordstore.ErrReadOnly)
	// ErrCrossOrigin is returned (HTTP 403, code invalid) by a write route
	// whose request comes from another origin, or lacks the console's
	// request header: a page of another site cannot make the console
	// write.
	ErrCrossOrigin = fmt.Errorf("%w: a write must come from the console itself (same origin, header %s)", recordstore.ErrInvalid, writeHeader)
	// ErrNoSpool is returned (HTTP 404, code not_found) by the spool routes
	// of a console without a spool (a store opened read-only).
	ErrNoSpool = fmt.Errorf("%w: this process has no spool (the store is open read-only)", recordstore.ErrNotFound)
)

// isForbidden reports whether err is one of the refusals answered 403.
func isForbidden(err error) bool {
	return errors.Is(err, ErrWritesDisabled) || errors.Is(err, ErrCrossOrigin)
}
