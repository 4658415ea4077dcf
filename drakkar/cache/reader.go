// The reader connection: the cache's one read-only connection to its file
// (busy_timeout 10000, query_only), for Get's fallback, dumps, the marks
// and the pages peers pull, so reads never queue behind a flush.

package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"

	"github.com/fb46ecde/records/recordstore/sqlite"
)

// BusyTimeoutMS is the busy_timeout of the cache's connections (the
// spec's 10000 ms: a checkpoint must not fail a local flush).
const BusyTimeoutMS = 10000

const entryColumns = "key, scope, value, size_bytes, created_at_ms, updated_at_ms, expires_at_ms, origin_worker_id"

// reader wraps the connection.
type reader struct{ db *sql.DB }

// openReader opens the reader connection of the file at path.
func openReader(path string) (*reader, error) {
	q := url.Values{}
	q.Add("mode", "ro")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeoutMS))
	q.Add("_pragma", "query_only(1)")
	db, err := sql.Open("sqlite", sqlite.FileURI(path, q))
	if err != nil {
		return nil, fmt.Errorf("open the cache reader of %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	return &reader{db: db}, nil
}

func (r *reader) close() error { return r.db.Close() }

func scanEntry(sc interface{ Scan(...any) error }) (Entry, error) {
	var (
		e   Entry
		exp sql.NullInt64
	)
	err := sc.Scan(&e.Key, &e.Scope, &e.Value, &e.SizeBytes, &e.CreatedAtMS, &e.UpdatedAtMS, &exp, &e.OriginWorkerID)
	if exp.Valid {
		e.ExpiresAtMS = ptr(exp.Int64)
	}
	return e, err
}

// get reads the row of key, expired or not.
func (r *reader) get(ctx context.Context, key string) (Entry, bool, error) {
	e, err := scanEntry(r.db.QueryRowContext(ctx, "SELECT "+entryColumns+" FROM cache_entries WHERE key = ?", key))
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, fmt.Errorf("read cache entry %q: %w", key, err)
	}
	return e, true, nil
}

// querier is the connection pool or one read transaction on it.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// query runs q on db and returns its rows as entries.
func query(ctx context.Context, db querier, q string, args ...any) ([]Entry, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// list returns every row in key order.
func (r *reader) list(ctx context.Context) ([]Entry, error) {
	out, err := query(ctx, r.db, "SELECT "+entryColumns+" FROM cache_entries ORDER BY key")
	if err != nil {
		return nil, fmt.Errorf("list cache entries: %w", err)
	}
	return out, nil
}

// pageSQL is one scope's search of idx_cache_scope_updated from the
// cursor, in cursor order, stopping at the page size: the range on
// updated_at_ms uses the index, and only the rows sharing one
// updated_at_ms are sorted by key.
const pageSQL = "SELECT " + entryColumns + ` FROM cache_entries
 WHERE scope = ?1 AND updated_at_ms >= ?2 AND (updated_at_ms > ?2 OR key > ?3)
   AND origin_worker_id = ?4 AND (expires_at_ms IS NULL OR expires_at_ms > ?5)
 ORDER BY updated_at_ms, key LIMIT ?6`

// firstPageSQL is pageSQL without a cursor: from the start.
const firstPageSQL = "SELECT " + entryColumns + ` FROM cache_entries
 WHERE scope = ?1 AND origin_worker_id = ?4 AND (expires_at_ms IS NULL OR expires_at_ms > ?5)
 ORDER BY updated_at_ms, key LIMIT ?6`

// page returns up to limit+1 rows of the given scopes after the cursor
// (from the start when after is nil), in cursor order, originated by
// origin and not expired at nowMS. The scopes are read in one read
// transaction, so from one snapshot of the file: a flush committed
// between two scopes' searches could otherwise put its rows of the second
// scope on the page without its rows of the first, and the puller's
// cursor, moved past them, would skip those for good. between, when set,
// runs after the first scope's search (a test seam).
func (r *reader) page(ctx context.Context, scopes []Scope, after *Cursor, origin string, nowMS int64, limit int, between func()) ([]Entry, error) {
	q, at := firstPageSQL, Cursor{}
	if after != nil {
		q, at = pageSQL, *after
	}
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin the page read: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // read only: nothing to keep
	var all []Entry
	for i, s := range scopes {
		if i == 1 && between != nil {
			between()
		}
		rows, err := query(ctx, tx, q, string(s), at.MS, at.Key, origin, nowMS, limit+1)
		if err != nil {
			return nil, fmt.Errorf("read the %s rows after %d/%q: %w", s, at.MS, at.Key, err)
		}
		all = mergeByCursor(all, rows)
	}
	if len(all) > limit+1 {
		all = all[:limit+1]
	}
	return all, nil
}

// mergeByCursor merges two lists sorted in cursor order.
func mergeByCursor(a, b []Entry) []Entry {
	out := make([]Entry, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if cursorOf(b[0]).Less(cursorOf(a[0])) {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// marks returns, for scopes cluster and global, the cursor of the newest
// row origin wrote; a scope without one is absent.
func (r *reader) marks(ctx context.Context, origin string) (map[Scope]Cursor, error) {
	out := map[Scope]Cursor{}
	tx, err := r.db.BeginTx(ctx, nil) // both scopes from one snapshot
	if err != nil {
		return nil, fmt.Errorf("begin the marks read: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, s := range []Scope{ScopeCluster, ScopeGlobal} {
		var c Cursor
		err := tx.QueryRowContext(ctx, `SELECT updated_at_ms, key FROM cache_entries
 WHERE scope = ? AND origin_worker_id = ? ORDER BY updated_at_ms DESC, key DESC LIMIT 1`, string(s), origin).Scan(&c.MS, &c.Key)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the %s mark: %w", s, err)
		}
		out[s] = c
	}
	return out, nil
}

// Cursor is a position in the exchange's order: (updated_at_ms, key).
type Cursor struct {
	MS  int64  `json:"ms"`
	Key string `json:"key"`
}

// Less reports whether c comes before d.
func (c Cursor) Less(d Cursor) bool { return c.MS < d.MS || (c.MS == d.MS && c.Key < d.Key) }

func cursorOf(e Entry) Cursor { return Cursor{MS: e.UpdatedAtMS, Key: e.Key} }
