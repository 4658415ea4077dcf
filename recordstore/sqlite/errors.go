// Errors of the SQLite backend. API errors wrap the recordstore sentinels;
// the ones here describe the file itself.

package sqlite

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"modernc.org/sqlite"

	"github.com/fb46ecde/records/recordstore"
)

var (
	// ErrCatalogVersion is returned by Open when the live file records a
	// catalog version other than CatalogVersion: it was written by a build
	// with a different file layout and this build must not touch it.
	ErrCatalogVersion = errors.New("catalog version mismatch")
	// ErrCorrupt says the live file is damaged; its code (recordstore.Code)
	// is "corrupt". Nothing is written when it is returned, and the file is
	// left as it is, for a backup to replace. It is returned
	//   - when SQLite finds the file damaged (not a database, or a
	//     malformed image): by Open, and by the reads (Scan, Meta, Streams,
	//     Kinds, Kind, BatchOutcome, ProducerSeq), the sweeps and the write
	//     transactions that meet a damaged page. A write that meets one
	//     also stops the writer (ErrWriterFailed, wrapping this error, on
	//     every later write): writing on could spread the damage;
	//   - when the bookkeeping tables contradict themselves (a stream of a
	//     kind the catalog does not know, a schema that does not parse).
	//     This does not stop the writer.
	ErrCorrupt error = recordstore.NewCodedSentinel("corrupt", "corrupt store")
	// ErrWriterFailed is returned by every write after SQLite reported an
	// I/O error (SQLITE_IOERR, which includes a failed fsync) or a damaged
	// page (ErrCorrupt, which the error then wraps too) on the writer
	// connection. After a failed fsync the kernel may have dropped dirty
	// pages, so a retry could report success for data that is gone
	// ("fsyncgate", PostgreSQL 2018): the writer stops, reads go on, and
	// reopening the store recovers from the WAL.
	ErrWriterFailed = errors.New("writer stopped after an I/O error")
	// ErrFenced is returned by AppendBatch, and by every write after it,
	// when the live file's epoch has moved past this backend's: another
	// process opened the store writable since (a paused owner that was
	// replaced, then resumed), so this one is no longer its writer and
	// stops writing. Nothing of the call was written; reads go on.
	ErrFenced = errors.New("fenced by a newer epoch")
	// ErrSealBusy is returned by Seal when another connection holds the
	// file (SQLite keeps it in WAL mode, or reports it busy or locked), or
	// SQLite left a -wal or -shm beside it. The bookkeeping tables may be
	// dropped already; a later Seal, once the file is free, finishes.
	ErrSealBusy = errors.New("file is in use: cannot seal")
)

// SQLite's primary result codes for a file another connection holds.
const (
	sqliteBusy   = 5 // SQLITE_BUSY
	sqliteLocked = 6 // SQLITE_LOCKED
)

// isBusy reports whether err carries SQLITE_BUSY or SQLITE_LOCKED.
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqliteBusy || c == sqliteLocked
}

// SQLite's primary result codes for a damaged file.
const (
	sqliteCorrupt = 11 // SQLITE_CORRUPT: "database disk image is malformed"
	sqliteNotADB  = 26 // SQLITE_NOTADB: "file is not a database"
)

// isDamaged reports whether err carries an SQLite code saying the file is
// damaged.
func isDamaged(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqliteCorrupt || c == sqliteNotADB
}

// isNotADB reports whether err carries SQLITE_NOTADB: the file is no
// SQLite database at all.
func isNotADB(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqliteNotADB
}

// corrupted wraps *err in ErrCorrupt, naming the live file, when SQLite
// found the file damaged (and it is not wrapped already). Exported calls
// defer it, so that a damaged file reads as such whichever call met it.
// The first damage met is kept for Damage.
func (b *Backend) corrupted(err *error) {
	if *err != nil && isDamaged(*err) && !errors.Is(*err, ErrCorrupt) {
		*err = fmt.Errorf("%w: live file %s: %w", ErrCorrupt, b.LivePath(), *err)
	}
	if *err != nil && errors.Is(*err, ErrCorrupt) {
		met := *err
		b.damage.CompareAndSwap(nil, &met)
	}
}

// Damage returns the first error wrapping ErrCorrupt that a call of this
// backend met since Open (a read or a write that found a damaged page, or
// bookkeeping tables that contradict themselves), or nil. It does not read
// the file: damage no call has met yet is not reported. Once set it stays
// set until the store is reopened, since a damaged file does not heal; a
// health check (query serve's /healthz) reports it.
func (b *Backend) Damage() error {
	if p := b.damage.Load(); p != nil {
		return *p
	}
	return nil
}

// sqliteFull is SQLite's primary result code for a full disk
// (SQLITE_FULL: a write got ENOSPC, or the file reached its size limit).
const sqliteFull = 13

// sqliteIOErrShmSize is SQLite's extended code for a -shm file it could
// not grow (SQLITE_IOERR_SHMSIZE): the file system had no room for it.
const sqliteIOErrShmSize = sqliteIOErr | 19<<8

// DiskFull reports whether err says that a file system had no space left
// for a write: SQLITE_FULL, SQLITE_IOERR_SHMSIZE (the -shm file could not
// grow) or ENOSPC from a file system call. A backend's write returns such
// errors as recordstore.ErrDiskFull; an Open that fails so does not wrap
// them, and its callers ask DiskFull.
func DiskFull(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) && (se.Code()&0xff == sqliteFull || se.Code() == sqliteIOErrShmSize) {
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}

// noTransaction reports whether err is SQLite's answer to a ROLLBACK with
// no transaction open: SQLite rolled it back itself, as it does after
// SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM or an interrupt
// (sqlite.org/lang_transaction.html, "Response To Errors Within A
// Transaction"), so nothing is left to roll back.
func noTransaction(err error) bool {
	return strings.Contains(err.Error(), "no transaction is active")
}

// sqliteIOErr is SQLite's primary result code for I/O errors.
const sqliteIOErr = 10

// isIOError reports whether err carries an SQLite I/O error code.
func isIOError(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqliteIOErr
}

// sqliteConstraint is SQLite's primary result code for a broken
// constraint.
const sqliteConstraint = 19

// isConstraintError reports whether err carries an SQLite constraint
// error code.
func isConstraintError(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqliteConstraint
}

// errLedgerConflict: a batch id is in the ledger already. AppendBatch
// meets it only when a producer mark let it skip the lookup of a batch
// that was recorded (see producerMarks), and then plans again with the
// lookup.
var errLedgerConflict = errors.New("batch id already in the ledger")

// closedErr is what every call returns after Close.
func closedErr(path string) error {
	return fmt.Errorf("records sqlite %s: %w", path, recordstore.ErrClosed)
}

func notFound(format string, args ...any) error {
	return recordstore.Errorf(recordstore.ErrNotFound, format, args...)
}

func schemaConflict(format string, args ...any) error {
	return recordstore.Errorf(recordstore.ErrSchemaConflict, format, args...)
}

func sealed(stream string) error {
	return recordstore.Errorf(recordstore.ErrSealed, "stream %s is sealed", stream)
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
