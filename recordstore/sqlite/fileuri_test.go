// Specs of FileURI and OpenFile: the file SQLite opens is exactly the path
// given, whatever its folders are named, and a file that must exist is
// never created.

package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// awkwardFolders are folder names a file URI must carry through.
var awkwardFolders = []string{
	"a #?%b", "hash#tag", "what?", "100%", "%41", "%2", "sp ace", "déjà vu", "日本", "semi;colon&amp=1",
	"tab\tin", "\xff\xfe", "x?mode=ro", "y#?immutable=1",
}

// mainFile returns the file SQLite has open as db's main schema.
func mainFile(db *sql.DB) string {
	var file string
	Expect(db.QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file)).To(Succeed())
	return file
}

// entries lists the names in dir.
func entries(dir string) []string {
	es, err := os.ReadDir(dir)
	Expect(err).NotTo(HaveOccurred())
	out := []string{}
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

var _ = Describe("File URIs", func() {
	var root string
	BeforeEach(func() {
		var err error
		root, err = filepath.EvalSymlinks(GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
	})

	DescribeTable("opens exactly the path given, in a folder named",
		awkwardEntries(func(folder string) {
			dir := filepath.Join(root, folder)
			Expect(os.Mkdir(dir, 0o700)).To(Succeed())
			path := filepath.Join(dir, "f.db")
			db, err := sqlite.OpenFile(ctx, path, sqlite.FileOptions{})
			Expect(err).NotTo(HaveOccurred())
			_, err = db.Exec(`CREATE TABLE t (x)`)
			Expect(err).NotTo(HaveOccurred())
			Expect(mainFile(db)).To(Equal(path))
			Expect(db.Close()).To(Succeed())
			Expect(entries(root)).To(Equal([]string{folder}), "nothing beside the folder")
			Expect(entries(dir)).To(Equal([]string{"f.db"}))

			ro, err := sqlite.OpenFile(ctx, path, sqlite.FileOptions{ReadOnly: true, Immutable: true})
			Expect(err).NotTo(HaveOccurred())
			defer ro.Close()
			var n int
			Expect(ro.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 't'`).Scan(&n)).To(Succeed())
			Expect(n).To(Equal(1))
		})...,
	)

	It("writes every byte SQLite or the driver would misread as %HH, and an empty authority before an absolute path", func() {
		Expect(sqlite.FileURI("/a #?%b/f.db", url.Values{"mode": {"ro"}})).To(Equal("file:///a%20%23%3F%25b/f.db?mode=ro"))
		Expect(sqlite.FileURI("//srv/x", nil)).To(Equal("file:////srv/x"))
		Expect(sqlite.FileURI("rel/é.db", nil)).To(Equal("file:rel/%C3%A9.db"))
	})

	It("opens a store (writer and readers) under a folder named a #?%b", func() {
		dir := filepath.Join(root, "a #?%b")
		path := filepath.Join(dir, "records.sqlite")
		k := eventsKind()
		b, err := sqlite.Open(ctx, path, sqlite.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		declare(b, k)
		mustBatch(b, newBatch([]recordstore.Kind{k}, appendEntry("s", k, recordstore.Row{"name": "a"})))
		Expect(b.Close()).To(Succeed())
		Expect(entries(root)).To(Equal([]string{"a #?%b"}), "nothing beside the folder")
		db, err := sqlite.OpenFile(ctx, sqlite.LivePath(path), sqlite.FileOptions{ReadOnly: true})
		Expect(err).NotTo(HaveOccurred())
		defer db.Close()
		Expect(rawCount(db, `SELECT count(*) FROM events`)).To(Equal(int64(1)))
	})

	DescribeTable("never creates a file that must exist",
		func(o sqlite.FileOptions) {
			path := filepath.Join(root, "a #?%b", "missing.db")
			Expect(os.Mkdir(filepath.Dir(path), 0o700)).To(Succeed())
			_, err := sqlite.OpenFile(ctx, path, o)
			Expect(err).To(MatchError(recordstore.ErrNotFound))
			Expect(entries(filepath.Dir(path))).To(BeEmpty())
		},
		Entry("MustExist", sqlite.FileOptions{MustExist: true}),
		Entry("ReadOnly", sqlite.FileOptions{ReadOnly: true}),
		Entry("Immutable", sqlite.FileOptions{Immutable: true}),
	)

	It("refuses an empty path and a path with a NUL byte", func() {
		for _, p := range []string{"", filepath.Join(root, "a\x00b")} {
			_, err := sqlite.OpenFile(ctx, p, sqlite.FileOptions{})
			Expect(err).To(MatchError(recordstore.ErrInvalid))
		}
		Expect(entries(root)).To(BeEmpty())
	})

	It("sets the busy timeout and the pragmas given on every connection", func() {
		db, err := sqlite.OpenFile(ctx, filepath.Join(root, "p.db"), sqlite.FileOptions{BusyTimeout: 1234_000_000, Pragmas: []string{"query_only(1)"}})
		Expect(err).NotTo(HaveOccurred())
		defer db.Close()
		var ms, qo int
		Expect(db.QueryRow(`PRAGMA busy_timeout`).Scan(&ms)).To(Succeed())
		Expect(db.QueryRow(`PRAGMA query_only`).Scan(&qo)).To(Succeed())
		Expect([]int{ms, qo}).To(Equal([]int{1234, 1}))
	})
})

// awkwardEntries are the table entries of awkwardFolders, after the body.
func awkwardEntries(body any) []any {
	out := []any{body}
	for _, f := range awkwardFolders {
		out = append(out, Entry(fmt.Sprintf("%q", f), f))
	}
	return out
}

// FuzzFileURI checks the round trip: for any folder name the OS takes,
// the file SQLite opens through FileURI is exactly the path given, and
// nothing else appears beside the folder.
func FuzzFileURI(f *testing.F) {
	for _, s := range awkwardFolders {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, folder string) {
		if folder == "" || folder == "." || folder == ".." || len(folder) > 200 || strings.ContainsAny(folder, "/\x00") {
			t.Skip()
		}
		root, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, folder)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Skip() // a name this file system refuses
		}
		path := filepath.Join(dir, "f.db")
		db, err := sqlite.OpenFile(context.Background(), path, sqlite.FileOptions{})
		if err != nil {
			t.Fatalf("open %q: %v", path, err)
		}
		defer db.Close()
		if _, err := db.Exec(`CREATE TABLE t (x)`); err != nil {
			t.Fatalf("create in %q: %v", path, err)
		}
		var file string
		if err := db.QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
			t.Fatal(err)
		}
		if file != path {
			t.Fatalf("SQLite opened %q, want %q", file, path)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Fatalf("no database at %q: %v", path, err)
		}
		es, err := os.ReadDir(root)
		if err != nil || len(es) != 1 || es[0].Name() != folder {
			t.Fatalf("beside the folder %q: %v (%v)", folder, es, err)
		}
	})
}
