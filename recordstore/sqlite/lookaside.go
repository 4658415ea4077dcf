// Process-wide SQLite memory settings for programs that keep many stores
// open (a fleet server): the lookaside memory every connection reserves.

package sqlite

import (
	"errors"
	"fmt"
	"sync"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/fb46ecde/records/recordstore"
)

// ErrTooLate is returned by ConfigureLookaside once SQLite has been
// initialized in this process (a connection was opened): the setting can
// only be made before.
var ErrTooLate = errors.New("too late: SQLite is already initialized in this process")

// MaxLookasideSlotSize and MaxLookasideSlots bound ConfigureLookaside's
// arguments.
const (
	MaxLookasideSlotSize = 65528
	MaxLookasideSlots    = 1 << 16
)

var configMu sync.Mutex

// ConfigureLookaside sets the lookaside memory of every SQLite connection
// the process opens afterwards: slots slots of slotSize bytes each, which
// SQLite reserves per connection to serve its small allocations quickly
// (its default is 40 slots of 1200 bytes, about 48 KB a connection once
// used). (0, 0) turns lookaside off: each open store then costs about
// 45 KB less resident memory, for slightly slower statement preparation
// and schema parsing (see docs/performance.md, "Memory per open store").
// A program that keeps hundreds of stores open — `query serve --fleet`,
// a service over a fleet.Fleet — is the one to call it.
//
// The setting is process-wide, not per store, and SQLite takes it only
// before it is initialized: call it first thing in main, before any store
// or SQLite connection is opened, and not concurrently with an open. Later
// it returns an error wrapping ErrTooLate and changes nothing; a size or
// count out of range is refused with recordstore.ErrInvalid.
func ConfigureLookaside(slotSize, slots int) error {
	if slotSize < 0 || slotSize > MaxLookasideSlotSize || slots < 0 || slots > MaxLookasideSlots {
		return recordstore.Invalidf("sqlite lookaside: %d slots of %d bytes: want 0..%d slots of 0..%d bytes", slots, slotSize, MaxLookasideSlots, MaxLookasideSlotSize)
	}
	configMu.Lock()
	defer configMu.Unlock()
	tls := libc.NewTLS()
	defer tls.Close()
	const vaSlot = 8 // libc.VaList's stride per argument
	va := libc.Xmalloc(tls, 2*vaSlot)
	if va == 0 {
		return fmt.Errorf("sqlite lookaside: out of memory")
	}
	defer libc.Xfree(tls, va)
	switch rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_LOOKASIDE, libc.VaList(va, int32(slotSize), int32(slots))); rc {
	case sqlite3.SQLITE_OK:
		return nil
	case sqlite3.SQLITE_MISUSE:
		return fmt.Errorf("sqlite lookaside: %w", ErrTooLate)
	default:
		return fmt.Errorf("sqlite lookaside: sqlite3_config returned %d", rc)
	}
}
