package interop_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/spool/parquet"
)

// allTypes has a column of every type; id is its key (not nullable).
func allTypes(t *testing.T) *recordstore.Kind {
	k := &recordstore.Kind{Name: "all_types", Key: []string{"id"}, Columns: []recordstore.Column{
		{Name: "id", Type: recordstore.TypeString},
		{Name: "s", Type: recordstore.TypeString},
		{Name: "i", Type: recordstore.TypeInteger},
		{Name: "n", Type: recordstore.TypeNumber},
		{Name: "b", Type: recordstore.TypeBool},
		{Name: "d", Type: recordstore.TypeDatetime},
		{Name: "j", Type: recordstore.TypeJSON},
	}}
	if err := k.Validate(); err != nil {
		t.Fatal(err)
	}
	return k
}

// writeParquet encodes rows with the spool's parquet codec into a file
// named as a spool data file, and returns its path.
func writeParquet(t *testing.T, k *recordstore.Kind, rows []recordstore.Row) string {
	t.Helper()
	codec, err := spool.Lookup(parquet.Name)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc, err := codec.NewEncoder(&buf, k)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		v, err := k.Normalize(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := enc.Write(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "e00001.parquet")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func openDuckDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestDuckDBReadsSpoolParquetTypes: DuckDB reads the columns with the SQL
// types the spool format promises for each record type.
func TestDuckDBReadsSpoolParquetTypes(t *testing.T) {
	k := allTypes(t)
	path := writeParquet(t, k, []recordstore.Row{{"id": "a"}})
	rows, err := openDuckDB(t).QueryContext(context.Background(),
		"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(?))", path)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		got[name] = typ
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"id": "VARCHAR", "s": "VARCHAR", "i": "BIGINT", "n": "DOUBLE", "b": "BOOLEAN",
		"d": "TIMESTAMP WITH TIME ZONE", "j": "VARCHAR",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DuckDB sees the columns as %v, want %v", got, want)
	}
}

// TestDuckDBReadsSpoolParquetValues: the values DuckDB reads are the ones
// written — integers at both ends of int64, unicode text, microsecond
// datetimes in UTC, JSON text, and nulls as NULL.
func TestDuckDBReadsSpoolParquetValues(t *testing.T) {
	k := allTypes(t)
	at := time.Date(2024, 2, 29, 23, 59, 59, 123456000, time.UTC)
	path := writeParquet(t, k, []recordstore.Row{
		{"id": "a", "s": "héllo, 世界", "i": int64(9223372036854775807), "n": 1.5, "b": true, "d": at,
			"j": map[string]any{"k": []any{1, "x"}}},
		{"id": "b", "i": int64(-9223372036854775808), "n": -0.25, "b": false},
		{"id": "c"},
	})
	rows, err := openDuckDB(t).QueryContext(context.Background(), `
		SELECT id, s, i, n, b, strftime(d AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%fZ'), j
		FROM read_parquet(?) ORDER BY id`, path)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type row struct {
		id string
		s  sql.NullString
		i  sql.NullInt64
		n  sql.NullFloat64
		b  sql.NullBool
		d  sql.NullString
		j  sql.NullString
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.s, &r.i, &r.n, &r.b, &r.d, &r.j); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []row{
		{id: "a", s: sql.NullString{String: "héllo, 世界", Valid: true}, i: sql.NullInt64{Int64: 9223372036854775807, Valid: true},
			n: sql.NullFloat64{Float64: 1.5, Valid: true}, b: sql.NullBool{Bool: true, Valid: true},
			d: sql.NullString{String: "2024-02-29T23:59:59.123456Z", Valid: true}, j: sql.NullString{String: `{"k":[1,"x"]}`, Valid: true}},
		{id: "b", i: sql.NullInt64{Int64: -9223372036854775808, Valid: true}, n: sql.NullFloat64{Float64: -0.25, Valid: true},
			b: sql.NullBool{Bool: false, Valid: true}},
		{id: "c"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DuckDB read\n%+v\nwant\n%+v", got, want)
	}
}
