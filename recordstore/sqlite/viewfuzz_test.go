// FuzzViewSQL: whatever text a view holds, checking and running it leaves
// the store's tables, rows and files as they were.

package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// viewFuzzSeeds are texts that try to do more than read: statements after
// the view's subquery, hidden by comments or not, ATTACH, PRAGMA, DML,
// VACUUM INTO, load_extension.
var viewFuzzSeeds = []string{
	"SELECT * FROM rows",
	"SELECT name, count(*) FROM rows GROUP BY name",
	"SELECT * FROM rows) ; PRAGMA query_only=0; DELETE FROM record_streams; DROP TABLE ev; SELECT (1",
	"SELECT * FROM rows);",
	"SELECT * FROM rows;",
	"SELECT * FROM rows; DELETE FROM ev",
	"SELECT 1) /* ; */ --\n; DROP TABLE ev; SELECT (1",
	"SELECT 1) -- x\n; PRAGMA query_only=0; INSERT INTO ev(name) VALUES ('x'); SELECT (1",
	"SELECT 1); ATTACH 'attached.db' AS x; CREATE TABLE x.t(a); SELECT (1",
	"PRAGMA query_only=0",
	"PRAGMA journal_mode=DELETE",
	"SELECT * FROM pragma_query_only(0)",
	"INSERT INTO ev(name) VALUES ('x')",
	"SELECT 1); INSERT INTO ev(name) VALUES ('x'); SELECT (1",
	"WITH x AS (SELECT 1) DELETE FROM ev",
	"SELECT 1); WITH x AS (SELECT 1) UPDATE ev SET name = 'y'; SELECT (1",
	"SELECT 1); VACUUM INTO 'copy.db'; SELECT (1",
	"SELECT load_extension('x.so')",
	"SELECT * FROM rows) UNION ALL SELECT * FROM (SELECT * FROM rows",
	"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c",
}

// FuzzViewSQL checks and runs view text over a store with rows, in a
// working folder of its own, and requires the store's schema, every row
// and the files of both folders to be as before; an error may be
// ErrInvalid or any failure of the run, but never corruption.
func FuzzViewSQL(f *testing.F) {
	for _, s := range viewFuzzSeeds {
		f.Add(s)
	}
	work := f.TempDir()
	f.Chdir(work)
	b, err := sqlite.Open(context.Background(), filepath.Join(work, "data", "records.sqlite"), sqlite.Options{SweepInterval: -1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = b.Close() })
	ctx := context.Background()
	if _, err := b.DeclareKind(ctx, recordstore.Kind{Name: "ev", Columns: []recordstore.Column{
		{Name: "name", Type: recordstore.TypeString}, {Name: "n", Type: recordstore.TypeInteger}}}); err != nil {
		f.Fatal(err)
	}
	if _, err := b.Append(ctx, "e1", "ev", []recordstore.Row{{"name": "a", "n": int64(1)}, {"name": "b", "n": int64(2)}}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		before := viewFuzzState(t, b, work)
		// A bound on runaway queries (an endless recursive CTE), not a
		// property: an interrupted run is an error like any other.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, cerr := b.CheckView(ctx, "ev", text)
		rerr := b.RunView(ctx, "ev", text, "e1", 0, 0, 10, func([]any) error { return nil })
		for _, err := range []error{cerr, rerr} {
			if errors.Is(err, sqlite.ErrCorrupt) {
				t.Fatalf("view %q: %v", text, err)
			}
		}
		if err := b.Damage(); err != nil {
			t.Fatalf("view %q: store damaged: %v", text, err)
		}
		if after := viewFuzzState(t, b, work); after != before {
			t.Fatalf("view %q (check: %v, run: %v) changed the store:\nbefore:\n%s\nafter:\n%s", text, cerr, rerr, before, after)
		}
	})
}

// viewFuzzState is storeDump of b and the names of the files in work.
func viewFuzzState(t *testing.T, b *sqlite.Backend, work string) string {
	t.Helper()
	s, err := storeDump(b.LivePath())
	if err != nil {
		t.Fatal(err)
	}
	names, err := fileNames(work)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return s + wd + "\n" + strings.Join(names, "\n")
}
