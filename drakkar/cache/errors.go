// Sentinel errors of the cache, each wrapping a recordstore sentinel so
// that its code survives wherever it surfaces (the CLI, the debug API).

package cache

import "github.com/fb46ecde/records/recordstore"

var (
	// ErrBadEntry is returned by Set and Delete for a key that is empty
	// or not UTF-8, a value that is not JSON text, an unknown scope or a
	// negative ttl, and by Apply for a row breaking the same rules.
	// Nothing is written.
	ErrBadEntry = recordstore.Invalidf("bad cache entry")
	// ErrConfig is returned by Config.Set and Config.Validate (and Open)
	// for an unknown key or a bad value; the message names the key.
	ErrConfig = recordstore.Invalidf("cache config")
	// ErrOff is returned by the operations that need the cache engine
	// (List, Changes) when it is off: cache.enabled false, no storage.dir,
	// or the cache closed.
	ErrOff = recordstore.Errorf(recordstore.ErrUnsupported, "the cache engine is off")
	// ErrBadPage is returned by the pull for a peer's answer that breaks
	// the exchange's rules: not the route's JSON, too large, a row of
	// another origin or scope, out of cursor order, a bad value. Nothing
	// of that page is applied.
	ErrBadPage = recordstore.Invalidf("bad exchange page")
)
