// Package benchdata holds what the benchmarks of several packages share: a
// ten-column row of every type; the raw-SQLite baseline (the best plain
// code a user would write: prepared multi-row INSERTs in one transaction
// into a bare table with the same columns and the backend's pragmas, the
// same synchronous), so that every vs_raw ratio is measured against the
// same thing; the alternation of a measured function with its baseline
// (Pair); and the disk's bare fsync time (FsyncMs), which every
// fsync-bound figure is reported beside. Only tests and benchmarks import
// it.
package benchdata

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver of the baseline

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// Kind returns the benchmark kind "bench": ten columns mixing every type,
// no key. The result is validated.
func Kind() recordstore.Kind {
	k := recordstore.Kind{Name: "bench", Columns: []recordstore.Column{
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
	if err := k.Validate(); err != nil {
		panic(err)
	}
	return k
}

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// Row returns row i of the benchmark data.
func Row(i int) recordstore.Row {
	return recordstore.Row{
		"id": fmt.Sprintf("row-%08d", i), "n": int64(i), "x": float64(i) * 0.5, "ok": i%2 == 0,
		"at": epoch.Add(time.Duration(i) * time.Millisecond), "doc": json.RawMessage(`{"k":1,"v":[1,2,3]}`),
		"host": "host-a.example.org", "count": int64(i * 7), "score": 3.25, "tag": "benchmark",
	}
}

// Rows returns rows 0..n-1.
func Rows(n int) []recordstore.Row {
	rows := make([]recordstore.Row, n)
	for i := range rows {
		rows[i] = Row(i)
	}
	return rows
}

// Normalize normalizes rows for k, failing tb on a bad row.
func Normalize(tb testing.TB, k *recordstore.Kind, rows []recordstore.Row) []recordstore.Values {
	tb.Helper()
	vals := make([]recordstore.Values, len(rows))
	for i, r := range rows {
		v, err := k.Normalize(r)
		if err != nil {
			tb.Fatal(err)
		}
		vals[i] = v
	}
	return vals
}

// RawRowsPerInsert is how many rows one multi-row INSERT of the baseline
// writes (the backend's largest statement for a ten-column kind writes as
// many). Fewer rows left at the end go through the single-row INSERT.
const RawRowsPerInsert = 64

// Raw is the baseline store: a bare table with the kind's columns in its own
// file, written through one connection with the backend's writer pragmas
// (WAL, synchronous=NORMAL, BEGIN IMMEDIATE).
type Raw struct {
	db     *sql.DB
	insert *sql.Stmt // one row
	many   *sql.Stmt // RawRowsPerInsert rows
	cols   int
}

// OpenRaw creates the baseline table for k in a temp folder of tb.
func OpenRaw(tb testing.TB, k recordstore.Kind) *Raw {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "raw.sqlite")
	q := url.Values{"_pragma": {"busy_timeout(5000)", "journal_mode(WAL)", "synchronous(NORMAL)"}, "_txlock": {"immediate"}}
	db, err := sql.Open("sqlite", sqlite.FileURI(path, q))
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { _ = db.Close() })
	defs, names, marks := make([]string, len(k.Columns)), make([]string, len(k.Columns)), make([]string, len(k.Columns))
	for i, c := range k.Columns {
		typ := "TEXT"
		switch c.Type {
		case recordstore.TypeInteger, recordstore.TypeBool:
			typ = "INTEGER"
		case recordstore.TypeNumber:
			typ = "REAL"
		}
		defs[i], names[i], marks[i] = c.Name+" "+typ, c.Name, "?"
	}
	if _, err := db.Exec("CREATE TABLE raw (" + strings.Join(defs, ", ") + ")"); err != nil {
		tb.Fatal(err)
	}
	head := "INSERT INTO raw (" + strings.Join(names, ", ") + ") VALUES "
	row := "(" + strings.Join(marks, ", ") + ")"
	st, err := db.Prepare(head + row)
	if err != nil {
		tb.Fatal(err)
	}
	many, err := db.Prepare(head + strings.TrimSuffix(strings.Repeat(row+", ", RawRowsPerInsert), ", "))
	if err != nil {
		tb.Fatal(err)
	}
	return &Raw{db: db, insert: st, many: many, cols: len(k.Columns)}
}

// InsertAll stores already-normalized rows in one transaction: as many
// RawRowsPerInsert-row INSERTs as fit, then single-row INSERTs for the
// rest, both prepared once. On error the transaction is rolled back and
// the table holds what it held before.
func (r *Raw) InsertAll(ctx context.Context, vals []recordstore.Values) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		_ = tx.Rollback()
		return err
	}
	i := 0
	if len(vals) >= RawRowsPerInsert {
		st := tx.StmtContext(ctx, r.many)
		args := make([]any, r.cols*RawRowsPerInsert)
		for ; i+RawRowsPerInsert <= len(vals); i += RawRowsPerInsert {
			for j, v := range vals[i : i+RawRowsPerInsert] {
				copy(args[j*r.cols:(j+1)*r.cols], v)
			}
			if _, err := st.ExecContext(ctx, args...); err != nil {
				return fail(err)
			}
		}
	}
	if i < len(vals) {
		st := tx.StmtContext(ctx, r.insert)
		args := make([]any, r.cols)
		for _, v := range vals[i:] {
			copy(args, v)
			if _, err := st.ExecContext(ctx, args...); err != nil {
				return fail(err)
			}
		}
	}
	return tx.Commit()
}

// ScanAll reads every row of the bare table in rowid order and returns how
// many it read.
func (r *Raw) ScanAll(ctx context.Context) (int, error) {
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
