// Views: a view's text is one read-only SELECT; anything else is refused
// before it runs, on check and on run, and leaves the store as it was.

package sqlite_test

import (
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// viewAttack closes the view's subquery and runs statements after it: it
// turns query_only off on the reader connection, then deletes and drops.
const viewAttack = "SELECT * FROM rows) ; PRAGMA query_only=0; DELETE FROM record_streams; DROP TABLE events; SELECT (1"

// storeDump is everything a view must not change: the schema, every row
// of every table, and the names of the files beside the live file.
func storeDump(live string) (string, error) {
	db, err := sql.Open("sqlite", "file:"+live+"?mode=ro")
	if err != nil {
		return "", err
	}
	defer db.Close()
	var b strings.Builder
	tables, err := dumpQuery(db, &b, "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name")
	if err != nil {
		return "", err
	}
	for _, t := range tables {
		if _, err := dumpQuery(db, &b, "SELECT * FROM \""+strings.ReplaceAll(t, `"`, `""`)+"\" ORDER BY 1"); err != nil {
			return "", err
		}
	}
	files, err := fileNames(filepath.Dir(live))
	if err != nil {
		return "", err
	}
	fmt.Fprintln(&b, files)
	return b.String(), nil
}

// dumpQuery writes the rows of q to b, and returns the names of the
// ordinary tables among them when q reads sqlite_master.
func dumpQuery(db *sql.DB, b *strings.Builder, q string) ([]string, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var tables []string
	fmt.Fprintln(b, q)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		fmt.Fprintf(b, "%v\n", vals)
		if len(vals) == 4 && fmt.Sprint(vals[0]) == "table" && !strings.HasPrefix(strings.ToUpper(fmt.Sprint(vals[3])), "CREATE VIRTUAL") {
			tables = append(tables, fmt.Sprint(vals[1]))
		}
	}
	return tables, rows.Err()
}

// fileNames lists the files under dir.
func fileNames(dir string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		names = append(names, p)
		return err
	})
	slices.Sort(names)
	return names, err
}

var _ = Describe("A view", func() {
	var b *sqlite.Backend

	BeforeEach(func() {
		b = openStore(newClock())
		declare(b, eventsKind())
		mustAppend(b, "e1", "events", recordstore.Row{"name": "a", "n": int64(1)}, recordstore.Row{"name": "b", "n": int64(2)})
	})

	dump := func() string {
		s, err := storeDump(b.LivePath())
		Expect(err).NotTo(HaveOccurred())
		return s
	}

	It("runs one SELECT over the stream window", func() {
		cols, err := b.CheckView(ctx, "events", "SELECT name, n * 10 AS m FROM rows ORDER BY _seq DESC")
		Expect(err).NotTo(HaveOccurred())
		Expect(cols).To(Equal([]string{"name", "m"}))
		var got [][]any
		Expect(b.RunView(ctx, "events", "SELECT name, n * 10 AS m FROM rows ORDER BY _seq DESC", "e1", 0, 0, 0, func(v []any) error {
			got = append(got, slices.Clone(v))
			return nil
		})).To(Succeed())
		Expect(got).To(Equal([][]any{{"b", int64(20)}, {"a", int64(10)}}))
	})

	DescribeTable("refuses text that is not one read-only SELECT, on check and on run, changing nothing",
		func(text, mention string) {
			text = strings.ReplaceAll(text, "DIR", filepath.Dir(b.LivePath()))
			before := dump()
			_, err := b.CheckView(ctx, "events", text)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err).To(MatchError(ContainSubstring(mention)))
			err = b.RunView(ctx, "events", text, "e1", 0, 0, 0, func([]any) error { return nil })
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err).To(MatchError(ContainSubstring(mention)))
			Expect(dump()).To(Equal(before))
			Expect(mustScan(b, "e1")).To(HaveLen(2))
		},
		Entry("statements after the subquery", viewAttack, "more than one statement"),
		Entry("a second statement after a semicolon", "SELECT * FROM rows); DELETE FROM events; SELECT (1", "more than one statement"),
		Entry("a semicolon closing the subquery", "SELECT * FROM rows);", "more than one statement"),
		Entry("a trailing semicolon", "SELECT * FROM rows;", "does not compile"),
		Entry("a second statement behind comments", "SELECT 1) /* ; */ --\n; DROP TABLE events; SELECT (1", "more than one statement"),
		Entry("an ATTACH", "SELECT 1); ATTACH 'DIR/x.db' AS x; CREATE TABLE x.t(a); SELECT (1", "more than one statement"),
		Entry("a PRAGMA", "PRAGMA query_only=0", "does not compile"),
		Entry("an INSERT", "INSERT INTO events(name) VALUES ('x')", "does not compile"),
		Entry("an INSERT after the subquery", "SELECT 1); INSERT INTO events(name) VALUES ('x'); SELECT (1", "more than one statement"),
		Entry("a common table expression with a DELETE", "WITH x AS (SELECT 1) DELETE FROM events", "does not compile"),
		Entry("a VACUUM INTO", "SELECT 1); VACUUM INTO 'DIR/copy.db'; SELECT (1", "more than one statement"),
		Entry("load_extension", "SELECT load_extension('DIR/x.so')", "not authorized"),
	)

	It("runs after a refused text on reader connections that still cannot write", func() {
		_, err := b.CheckView(ctx, "events", viewAttack)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		for range 8 { // more than the pool's connections
			var n int64
			Expect(b.RunView(ctx, "events", "SELECT count(*) FROM rows", "e1", 0, 0, 0, func(v []any) error {
				n = v[0].(int64)
				return nil
			})).To(Succeed())
			Expect(n).To(Equal(int64(2)))
		}
	})
})
