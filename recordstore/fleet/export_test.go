// Test seams of the fleet package.

package fleet

import "database/sql"

// SetBeforePublish makes every create call h with the store path just
// before it links the staged file there; an error from h fails the create.
func (f *Fleet) SetBeforePublish(h func(path string) error) { f.hooks.beforePublish = h }

// SetInspected makes List and ListPage call h with the path (relative to
// the root) of each store file whose identity they read.
func (f *Fleet) SetInspected(h func(rel string)) { f.hooks.inspected = h }

// SetIdentityRead makes every open call h with the store path whose
// identity it reads (not called when the read is skipped).
func (f *Fleet) SetIdentityRead(h func(abs string)) { f.hooks.identityRead = h }

// OpenIdentityDB opens the connection pool an identity read uses on the
// store file at path (its connection opens at the first query).
var OpenIdentityDB = func(path string) (*sql.DB, error) { return openRaw(path, true) }
