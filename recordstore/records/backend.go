// The one backend interface a Store holds, and the names of the owner
// package's generic types over it.

package records

import (
	"context"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstore/submitonly"
)

// Backend is what a Store opened by Open holds (Store.Backend): a
// *sqlite.Backend, writable for the owner and read-only for the other
// processes, or a *submitonly.Backend whose reads fail with the cause it
// was opened with — in a process detached from the store's catalog
// (owner.RoleDetached, cause *owner.CatalogVersionError), or in a
// non-owner of a store opened with Options.SubmitOnly. Either checks a
// write locally and prepares its batch (owner.Preparer,
// owner.SourceAppender, CheckDeclare), so that the Store's one-call writes
// publish it. It is the one target interface of the owner election in the
// repository: the recorder, the cache, the fleet and the CLI all hold it.
type Backend interface {
	owner.Target
	owner.Preparer
	owner.SourceAppender
	recordstore.ChangeSource
	recordstore.Sweeper
	// CheckDeclare checks k as DeclareKind would, without declaring it,
	// and says what declaring it would do.
	CheckDeclare(ctx context.Context, k recordstore.Kind) (recordstore.KindStatus, error)
	// ReadOnly reports whether the backend does not write the store
	// itself (every process but the owner).
	ReadOnly() bool
}

// Store is a store opened by Open: the owner package's Store over Backend.
type Store = owner.Store[Backend]

// Writer is the role-aware bulk writer of a Store (Store.NewWriter); not
// to be confused with spool.Writer, which it is built on.
type Writer = owner.Writer[Backend]

// OwnerOptions are the owner election's options (Options.Owner): every
// field of owner.Options but the five Open sets itself.
type OwnerOptions = owner.Options[Backend]

var (
	_ Backend = (*sqlite.Backend)(nil)
	_ Backend = (*submitonly.Backend)(nil)
)
