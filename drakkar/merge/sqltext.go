// The SQL text a source's copy is built from (its row tables, SELECT
// lists, quoting) and the sorting of a SQLite failure into the source's
// fault or the merge's.

package merge

import (
	"errors"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// rowTable is a table whose rows are copied from a source: events, or the
// worker states.
type rowTable struct {
	src, dst string           // the source's table, the output's
	cols     []dbfiles.Column // the recorder table's shape, id first
	order    string           // the column rows are copied in order of (then id)
}

// rowTables are the row tables of a source of kind, events first.
func rowTables(kind string) []rowTable {
	states := "worker_state"
	if kind == KindMerged {
		states = "worker_states"
	}
	return []rowTable{
		{src: "events", dst: "events", cols: dbfiles.EventColumns, order: "ts"},
		{src: states, dst: "worker_states", cols: dbfiles.WorkerStateColumns, order: "updated_at"},
	}
}

// columnNames lists the names of cols.
func columnNames(cols []dbfiles.Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
}

// selectList is the SELECT list of names over the source alias "s", with
// NULL for a column the source lacks.
func selectList(names []string, have map[string]bool) string {
	parts := make([]string, len(names))
	for i, n := range names {
		if have[n] {
			parts[i] = "s." + quote(n)
		} else {
			parts[i] = "NULL"
		}
	}
	return strings.Join(parts, ", ")
}

// quoteList is names quoted and joined by commas.
func quoteList(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = quote(n)
	}
	return strings.Join(parts, ", ")
}

// quote quotes a SQL identifier.
func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// placeholders is n comma-separated "?".
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// fatalError marks a failure met while handling a source that is the
// merge's own (a detach that failed), not the source's.
type fatalError struct{ err error }

func (e fatalError) Error() string { return e.err.Error() }
func (e fatalError) Unwrap() error { return e.err }

// isFatal reports whether err fails the merge rather than the source.
func isFatal(err error) bool {
	var fe fatalError
	return errors.As(err, &fe) || outputFault(err)
}

// outputFault reports whether a SQLite error is the output's fault (full
// disk, a write or fsync error, no memory) rather than the source's.
func outputFault(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_READONLY:
		return true
	case sqlite3.SQLITE_IOERR:
		switch se.Code() {
		case sqlite3.SQLITE_IOERR_READ, sqlite3.SQLITE_IOERR_SHORT_READ:
			return false
		}
		return true
	}
	return false
}
