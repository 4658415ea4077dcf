// The fuzz target of a bound kind's DDL: what recordstore.CheckBoundDDL
// accepts, SQLite runs as the creation of that one table and its indexes.

package sqlite_test

import (
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/fb46ecde/records/recordstore"
)

// FuzzBoundDDL checks recordstore.CheckBoundDDL against SQLite itself:
// it never panics, refuses with ErrInvalid only, and whatever statement
// it accepts, run in a database holding another table (as the driver runs
// text holding several statements: all of them), creates nothing but
// table t and its indexes, drops nothing, and attaches nothing.
func FuzzBoundDDL(f *testing.F) {
	for _, s := range []string{
		"CREATE TABLE t (a TEXT)",
		"CREATE TABLE IF NOT EXISTS t (a TEXT); -- c",
		"CREATE TABLE t (a TEXT); DROP TABLE keep",
		"CREATE TABLE t (a TEXT DEFAULT ';'); DROP TABLE keep",
		"CREATE TABLE t (\"a;\" TEXT) /* ; DROP TABLE keep */",
		"CREATE TABLE t (a TEXT) -- \n; ATTACH ':memory:' AS x",
		"CREATE TABLE [t] (a TEXT);\n",
		"ATTACH ':memory:' AS t",
		eventsDDL,
		cacheEntriesDDL,
	} {
		f.Add(s, "CREATE INDEX i ON t(a)")
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		f.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	f.Cleanup(func() { _ = db.Close() })
	f.Fuzz(func(t *testing.T, create, index string) {
		bt := &recordstore.BoundTable{Name: "t", DDL: []string{create, index}}
		if err := recordstore.CheckBoundDDL("k", bt); err != nil {
			if !errors.Is(err, recordstore.ErrInvalid) {
				t.Fatalf("refused with %v, not ErrInvalid", err)
			}
			return
		}
		for _, q := range []string{"DROP TABLE IF EXISTS t", "DROP TABLE IF EXISTS keep", "CREATE TABLE keep (x)"} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		for _, stmt := range bt.DDL {
			if _, err := db.Exec(stmt); err != nil {
				return // SQLite refuses it: DeclareKind reports ErrInvalid
			}
		}
		var objects []string
		rows, err := db.Query(`SELECT type || ' ' || lower(tbl_name) FROM sqlite_master WHERE name <> 'keep' AND name <> 'sqlite_sequence'
			UNION ALL SELECT 'db ' || name FROM pragma_database_list WHERE name NOT IN ('main', 'temp')`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var o string
			if err := rows.Scan(&o); err != nil {
				t.Fatal(err)
			}
			objects = append(objects, o)
		}
		_ = rows.Close()
		var keep int
		if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'keep'`).Scan(&keep); err != nil || keep != 1 {
			t.Fatalf("accepted %q: table keep is gone (%v)", bt.DDL, err)
		}
		for _, o := range objects {
			if o != "table t" && o != "index t" {
				t.Fatalf("accepted %q: it made %s", bt.DDL, o)
			}
		}
		if len(objects) == 0 || !strings.HasPrefix(objects[0], "table") && !strings.HasPrefix(objects[len(objects)-1], "table") {
			t.Fatalf("accepted %q: no table t (%v)", bt.DDL, objects)
		}
	})
}
