// Sealing one recorder file and computing its meta object on the sealing
// connection.

package recorder

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// metaBase is what a meta object says of the process that seals.
type metaBase struct {
	worker, instance, cluster string
	now                       func() time.Time
}

// sealFile seals path with sqlite.Seal — the engine's bookkeeping tables
// dropped, the journal switched to DELETE on the last connection — and
// returns its meta object: the event times and counts are read on the
// sealing connection, the row counts and size come from the seal. A
// sealed file seals again with the same result; a failure leaves a file
// that a later sealFile finishes. A file without an events table fails
// with ErrNotRecorderFile.
func sealFile(ctx context.Context, path string, base metaBase) (dbfiles.Meta, error) {
	var first, last sql.NullFloat64
	types := map[string]int64{}
	stats, err := sqlite.Seal(ctx, path, func(ctx context.Context, conn *sql.Conn) error {
		if err := checkRecorderTables(ctx, conn); err != nil {
			return err
		}
		// Two subqueries, not MIN(ts), MAX(ts) in one SELECT: SQLite reads
		// a lone min() or max() from one end of idx_events_ts, but scans
		// the whole index for the pair.
		if err := conn.QueryRowContext(ctx, `SELECT (SELECT MIN(ts) FROM events), (SELECT MAX(ts) FROM events)`).Scan(&first, &last); err != nil {
			return fmt.Errorf("read event times: %w", err)
		}
		rows, err := conn.QueryContext(ctx, `SELECT event, count(*) FROM events GROUP BY event`)
		if err != nil {
			return fmt.Errorf("count event types: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var n int64
			if err := rows.Scan(&name, &n); err != nil {
				return fmt.Errorf("count event types: %w", err)
			}
			types[name] = n
		}
		return rows.Err()
	})
	if err != nil {
		return dbfiles.Meta{}, err
	}
	m := dbfiles.Meta{
		Schema:     1,
		Worker:     base.worker,
		Instance:   base.instance,
		Cluster:    base.cluster,
		SealedAt:   base.now(),
		SizeBytes:  stats.SizeBytes,
		Tables:     stats.Tables,
		EventTypes: types,
	}
	if first.Valid {
		t := timeOfTS(first.Float64)
		m.FirstEventTS = &t
	}
	if last.Valid {
		t := timeOfTS(last.Float64)
		m.LastEventTS = &t
	}
	return m, nil
}
