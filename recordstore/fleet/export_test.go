// Test seams of the fleet package.

package fleet

import (
	"bytes"
	"database/sql"
)

// SetBeforePublish makes every create call h with the store path just
// before it links the staged file there; an error from h fails the create.
func (f *Fleet) SetBeforePublish(h func(path string) error) { f.hooks.beforePublish = h }

// SetInspected makes List and ListPage call h with the path (relative to
// the root) of each store file whose identity they read.
func (f *Fleet) SetInspected(h func(rel string)) { f.hooks.inspected = h }

// SetSQLiteRead makes List and ListPage call h with the path (relative to
// the root) of each store file whose identity they read through SQLite
// (opening a connection), not from the file's pages.
func (f *Fleet) SetSQLiteRead(h func(rel string)) { f.hooks.sqliteRead = h }

// ParseIdentity reads the identity key of the SQLite file in data from its
// pages (see rawIdentity); ok is false when the reader cannot tell.
func ParseIdentity(data []byte) (id string, ok bool) {
	id, err := parseIdentity(bytes.NewReader(data), int64(len(data)))
	return id, err == nil
}

// SetIdentityRead makes every open call h with the store path whose
// identity it reads (not called when the read is skipped).
func (f *Fleet) SetIdentityRead(h func(abs string)) { f.hooks.identityRead = h }

// OpenIdentityDB opens the connection pool an identity read uses on the
// store file at path (its connection opens at the first query).
var OpenIdentityDB = func(path string) (*sql.DB, error) { return openRaw(path, true) }
