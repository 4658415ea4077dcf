// Sentinel errors of the registry.

package registry

import "github.com/fb46ecde/records/recordstore"

var (
	// ErrBadCard is returned by DecodeCard for bytes that are not a card
	// of a known version: not JSON, a missing or mistyped field, an
	// unknown state, a bad time or mark.
	ErrBadCard = recordstore.Invalidf("bad registry card")
	// ErrConfig is returned by Open for options it cannot run with (no
	// folder, a bad worker name, intervals that are not positive), and by
	// Config.Set and Config.Validate for a bad fleet.registry.* key.
	ErrConfig = recordstore.Invalidf("registry options")
)
