package debugapi

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	"github.com/fb46ecde/records/drakkar/recorder"
	rsqlite "github.com/fb46ecde/records/recordstore/sqlite"
)

// eventSelect is the pinned 20 columns, quoted.
var eventSelect = func() string {
	q := make([]string, len(recorder.EventColumns))
	for i, c := range recorder.EventColumns {
		q[i] = `"` + c + `"`
	}
	return strings.Join(q, ", ")
}()

// openRO opens path read-only; immutable adds immutable=1 (sealed files,
// which never change: no lock, no sidecar file).
func openRO(path string, immutable bool) (*sql.DB, error) {
	q := url.Values{"mode": {"ro"}, "_pragma": {"busy_timeout(5000)"}}
	if immutable {
		q = url.Values{"mode": {"ro"}, "immutable": {"1"}}
	}
	db, err := sql.Open("sqlite", rsqlite.FileURI(path, q))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// queryRows runs an events query and returns each row as a column → value
// object with worker_name added.
func queryRows(ctx context.Context, db *sql.DB, worker, query string, args ...any) ([]map[string]any, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		m := make(map[string]any, len(cols)+1)
		for i, c := range cols {
			if b, ok := vals[i].([]byte); ok {
				vals[i] = string(b)
			}
			m[c] = vals[i]
		}
		if worker != "" {
			m["worker_name"] = worker
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return out, nil
}
