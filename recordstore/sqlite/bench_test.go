// Benchmarks of Append and Scan against a baseline measured in the same
// run: the same rows through one prepared statement in one transaction on
// a bare table with the same columns and pragmas (vs_raw = raw time / our
// time, so 1.0 means "as fast as bare SQLite").

package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// benchKind is a 10-column kind mixing every type.
func benchKind() recordstore.Kind {
	return recordstore.Kind{Name: "bench", Columns: []recordstore.Column{
		{Name: "id", Type: recordstore.TypeString},
		{Name: "n", Type: recordstore.TypeInteger},
		{Name: "x", Type: recordstore.TypeNumber},
		{Name: "ok", Type: recordstore.TypeBool},
		{Name: "at", Type: recordstore.TypeDatetime},
		{Name: "doc", Type: recordstore.TypeJSON},
		{Name: "host", Type: recordstore.TypeString},
		{Name: "count", Type: recordstore.TypeInteger},
		{Name: "score", Type: recordstore.TypeNumber},
		{Name: "tag", Type: recordstore.TypeString},
	}}
}

func benchRows(n int) []recordstore.Row {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := make([]recordstore.Row, n)
	for i := range rows {
		rows[i] = recordstore.Row{
			"id": fmt.Sprintf("row-%08d", i), "n": int64(i), "x": float64(i) * 0.5, "ok": i%2 == 0,
			"at": at.Add(time.Duration(i) * time.Millisecond), "doc": json.RawMessage(`{"k":1,"v":[1,2,3]}`),
			"host": "host-a.example.org", "count": int64(i * 7), "score": 3.25, "tag": "benchmark",
		}
	}
	return rows
}

// rawStore is the baseline: a bare table with the kind's columns in a file
// opened with the backend's writer pragmas.
type rawStore struct {
	db     *sql.DB
	insert *sql.Stmt
	cols   int
}

func openRaw(b *testing.B, k recordstore.Kind) *rawStore {
	path := filepath.Join(b.TempDir(), "raw.sqlite")
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { _ = db.Close() })
	ddl, names, marks := "CREATE TABLE raw (", "", ""
	for i, c := range k.Columns {
		typ := map[recordstore.ColumnType]string{recordstore.TypeInteger: "INTEGER", recordstore.TypeBool: "INTEGER",
			recordstore.TypeNumber: "REAL"}[c.Type]
		if typ == "" {
			typ = "TEXT"
		}
		if i > 0 {
			ddl, names, marks = ddl+", ", names+", ", marks+", "
		}
		ddl += c.Name + " " + typ
		names += c.Name
		marks += "?"
	}
	if _, err := db.Exec(ddl + ")"); err != nil {
		b.Fatal(err)
	}
	st, err := db.Prepare("INSERT INTO raw (" + names + ") VALUES (" + marks + ")")
	if err != nil {
		b.Fatal(err)
	}
	return &rawStore{db: db, insert: st, cols: len(k.Columns)}
}

// insert stores already-normalized rows in one transaction.
func (r *rawStore) insertAll(ctx context.Context, vals []recordstore.Values) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	st := tx.StmtContext(ctx, r.insert)
	args := make([]any, r.cols)
	for _, v := range vals {
		copy(args, v)
		if _, err := st.ExecContext(ctx, args...); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// scanAll reads every row of the bare table.
func (r *rawStore) scanAll(ctx context.Context) (int, error) {
	rows, err := r.db.QueryContext(ctx, "SELECT rowid, * FROM raw ORDER BY rowid")
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var seq int64
	vals := make([]any, r.cols)
	dest := make([]any, r.cols+1)
	dest[0] = &seq
	for i := range vals {
		dest[i+1] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

func openBench(b *testing.B) (*sqlite.Backend, *rawStore, recordstore.Kind) {
	k := benchKind()
	s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "store", "records.sqlite"), sqlite.Options{SweepInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	if _, err := s.DeclareKind(context.Background(), k); err != nil {
		b.Fatal(err)
	}
	if err := k.Validate(); err != nil {
		b.Fatal(err)
	}
	return s, openRaw(b, k), k
}

func normalizeAll(b *testing.B, k recordstore.Kind, rows []recordstore.Row) []recordstore.Values {
	vals := make([]recordstore.Values, len(rows))
	for i, r := range rows {
		v, err := k.Normalize(r)
		if err != nil {
			b.Fatal(err)
		}
		vals[i] = v
	}
	return vals
}

// pair accumulates the interleaved timings of ours and the baseline.
type pair struct {
	ours, raw time.Duration
	ratios    []float64 // raw/ours of each iteration
}

// run times one iteration of both, alternating which goes first.
func (p *pair) run(b *testing.B, i int, ours, raw func() error) {
	timeIt := func(f func() error) time.Duration {
		t0 := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var o, r time.Duration
	if i%2 == 0 {
		o, r = timeIt(ours), timeIt(raw)
	} else {
		r, o = timeIt(raw), timeIt(ours)
	}
	p.ours, p.raw = p.ours+o, p.raw+r
	p.ratios = append(p.ratios, r.Seconds()/o.Seconds())
}

// report writes rows/s (ours), vs_raw (total baseline time / total our
// time) and vs_raw_p50 (the median of the per-iteration ratios, which a
// busy machine disturbs less).
func (p *pair) report(b *testing.B, rows int) {
	b.ReportMetric(float64(rows)/p.ours.Seconds(), "rows/s")
	b.ReportMetric(p.raw.Seconds()/p.ours.Seconds(), "vs_raw")
	slices.Sort(p.ratios)
	b.ReportMetric(p.ratios[len(p.ratios)/2], "vs_raw_p50")
}

// BenchmarkAppend appends batches of rows=N to one stream; the baseline
// inserts the same rows, normalized beforehand, into the bare table. The
// two alternate inside each iteration.
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			ctx := context.Background()
			s, raw, k := openBench(b)
			rows := benchRows(n)
			vals := normalizeAll(b, k, rows)
			var p pair
			ours := func() error {
				_, err := s.Append(ctx, "bench", "bench", rows)
				return err
			}
			base := func() error { return raw.insertAll(ctx, vals) }
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p.run(b, i, ours, base)
			}
			p.report(b, n*b.N)
		})
	}
}

// BenchmarkScan reads a 10000-row stream with Scan; the baseline selects
// the same rows from the bare table.
func BenchmarkScan(b *testing.B) {
	const n = 10000
	ctx := context.Background()
	s, raw, k := openBench(b)
	rows := benchRows(n)
	if _, err := s.Append(ctx, "bench", "bench", rows); err != nil {
		b.Fatal(err)
	}
	if err := raw.insertAll(ctx, normalizeAll(b, k, rows)); err != nil {
		b.Fatal(err)
	}
	var p pair
	ours := func() error {
		recs, err := s.Scan(ctx, "bench", recordstore.ScanOptions{})
		if err == nil && len(recs) != n {
			err = fmt.Errorf("scan: %d rows", len(recs))
		}
		return err
	}
	base := func() error {
		got, err := raw.scanAll(ctx)
		if err == nil && got != n {
			err = fmt.Errorf("raw scan: %d rows", got)
		}
		return err
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.run(b, i, ours, base)
	}
	p.report(b, n*b.N)
}
