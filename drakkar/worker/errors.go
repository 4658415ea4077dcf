// Errors of the worker package.

package worker

import "github.com/fb46ecde/records/recordstore"

// ErrConfig is returned by Load and Config.Set for an unknown key, a key
// moved to another name, an unparsable value or a value out of range; the
// message names the key. It wraps recordstore.ErrInvalid.
var ErrConfig = recordstore.Invalidf("worker config")
