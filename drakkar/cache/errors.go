// Sentinel errors of the cache, each wrapping a recordstore sentinel so
// that its code survives wherever it surfaces (the CLI, the debug API).

package cache

import (
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

var (
	// ErrBadEntry is returned by Set and Delete for a key that is empty
	// or not UTF-8, a value that is not JSON text, an unknown scope or a
	// negative ttl, and by Apply for a row breaking the same rules.
	// Nothing is written.
	ErrBadEntry = fmt.Errorf("%w: bad cache entry", recordstore.ErrInvalid)
	// ErrConfig is returned by Config.Validate (and Open) for a bad key.
	ErrConfig = fmt.Errorf("%w: cache config", recordstore.ErrInvalid)
	// ErrOff is returned by the operations that need the cache engine
	// (List, Changes) when it is off: cache.enabled false, no storage.dir,
	// or the cache closed.
	ErrOff = fmt.Errorf("%w: the cache engine is off", recordstore.ErrUnsupported)
	// ErrBadPage is returned by the pull for a peer's answer that breaks
	// the exchange's rules: not the route's JSON, too large, a row of
	// another origin or scope, out of cursor order, a bad value. Nothing
	// of that page is applied.
	ErrBadPage = fmt.Errorf("%w: bad exchange page", recordstore.ErrInvalid)
)
