// Specs for the file layout: paths, modes, WAL, the catalog version row,
// and what a reopen keeps.

package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("files on disk", func() {
	It("maps the configured path to <dir>/v1/<its file name>", func() {
		Expect(sqlite.LivePath("data/records.sqlite")).To(Equal(filepath.Join("data", "v1", "records.sqlite")))
		Expect(sqlite.LivePath("/x/y/store.db")).To(Equal("/x/y/v1/store.db"))
		Expect(sqlite.LivePath("/x/y/store/")).To(Equal("/x/y/v1/store"), "a trailing slash names the same store, as Open takes it")
	})

	It("keeps two stores configured in one folder in two live files", func() {
		dir := GinkgoT().TempDir()
		a := openAt(filepath.Join(dir, "a.sqlite"), sqlite.Options{})
		b := openAt(filepath.Join(dir, "b.sqlite"), sqlite.Options{})
		Expect(a.LivePath()).NotTo(Equal(b.LivePath()))
		declare(a, eventsKind())
		mustAppend(a, "s", "events", recordstore.Row{"name": "only in a"})
		_, err := b.Meta(context.Background(), "s")
		Expect(err).To(MatchError(recordstore.ErrNotFound))
	})

	DescribeTable("refuses a store path whose file name is one SQLite keeps beside a database",
		func(name string) {
			_, err := sqlite.Open(context.Background(), filepath.Join(GinkgoT().TempDir(), name), sqlite.Options{})
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err).To(MatchError(ContainSubstring("SQLite's own")))
		},
		Entry("-wal", "records.sqlite-wal"),
		Entry("-shm", "records.sqlite-shm"),
		Entry("-journal", "x-journal"),
	)

	It("creates folders 0700 and the live, -wal and -shm files 0600 whatever the umask", func() {
		old := syscall.Umask(0)
		defer syscall.Umask(old)
		path := storePath()
		b := openAt(path, sqlite.Options{})
		declare(b, eventsKind())
		mustAppend(b, "s", "events", recordstore.Row{"name": "a"})
		Expect(b.Path()).To(Equal(path))
		Expect(b.LivePath()).To(Equal(filepath.Join(filepath.Dir(path), "v1", "records.sqlite")))
		for _, dir := range []string{filepath.Dir(path), filepath.Dir(b.LivePath())} {
			fi, err := os.Stat(dir)
			Expect(err).NotTo(HaveOccurred())
			Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o700)), dir)
		}
		for _, f := range []string{"", "-wal", "-shm"} {
			fi, err := os.Stat(b.LivePath() + f)
			Expect(err).NotTo(HaveOccurred())
			Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)), f)
		}
	})

	It("puts the file in WAL mode", func() {
		b := openStore(newClock())
		var mode string
		Expect(rawDB(b).QueryRow("PRAGMA journal_mode").Scan(&mode)).To(Succeed())
		Expect(mode).To(Equal("wal"))
	})

	It("records the catalog version and refuses a file with another one", func() {
		path := storePath()
		b := openAt(path, sqlite.Options{})
		Expect(rawCount(rawDB(b), `SELECT value FROM record_meta WHERE key = 'catalog_version'`)).To(BeEquivalentTo(sqlite.CatalogVersion))
		Expect(b.Close()).To(Succeed())

		db, err := sql.Open("sqlite", sqlite.LivePath(path))
		Expect(err).NotTo(HaveOccurred())
		_, err = db.Exec(`UPDATE record_meta SET value = 99 WHERE key = 'catalog_version'`)
		Expect(err).NotTo(HaveOccurred())
		Expect(db.Close()).To(Succeed())
		_, err = sqlite.Open(ctx, path, sqlite.Options{SweepInterval: -1})
		Expect(errors.Is(err, sqlite.ErrCatalogVersion)).To(BeTrue(), "%v", err)
	})

	DescribeTable("refuses a damaged live file with ErrCorrupt, naming it, and leaves it as it is",
		func(damage func(live string), readOnly bool) {
			path := storePath()
			b := openAt(path, sqlite.Options{})
			declare(b, eventsKind())
			for i := range 50 {
				mustAppend(b, fmt.Sprintf("s%d", i), "events", recordstore.Row{"name": strings.Repeat("x", 200)})
			}
			Expect(b.Close()).To(Succeed())
			live := sqlite.LivePath(path)
			damage(live)
			before, err := os.ReadFile(live)
			Expect(err).NotTo(HaveOccurred())

			_, err = sqlite.Open(ctx, path, sqlite.Options{ReadOnly: readOnly, SweepInterval: -1})
			Expect(errors.Is(err, sqlite.ErrCorrupt)).To(BeTrue(), "%v", err)
			Expect(recordstore.Code(err)).To(Equal("corrupt"))
			Expect(err.Error()).To(ContainSubstring(live))
			after, err := os.ReadFile(live)
			Expect(err).NotTo(HaveOccurred())
			Expect(after).To(Equal(before), "the file is left as it is")
		},
		Entry("not a database, writable", overwrite(0), false),
		Entry("not a database, read-only", overwrite(0), true),
		Entry("pages overwritten, writable", overwrite(4096), false),
		Entry("pages overwritten, read-only", overwrite(4096), true),
	)

	It("reports a damaged page of a kind's rows as ErrCorrupt from the calls that meet it, and stops the writer", func() {
		path := storePath()
		b := openAt(path, sqlite.Options{})
		declare(b, eventsKind())
		notes := recordstore.Kind{Name: "notes", Columns: []recordstore.Column{{Name: "text", Type: recordstore.TypeString}}}
		declare(b, notes)
		rows := make([]recordstore.Row, 2000)
		for i := range rows {
			rows[i] = recordstore.Row{"name": strings.Repeat("y", 100)}
		}
		_, err := b.Append(ctx, "s", "events", rows)
		Expect(err).NotTo(HaveOccurred())
		var root, pageSize int64
		raw := rawDB(b)
		Expect(raw.QueryRow(`SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name LIKE '%events%' ORDER BY rootpage DESC LIMIT 1`).Scan(&root)).To(Succeed())
		Expect(raw.QueryRow(`PRAGMA page_size`).Scan(&pageSize)).To(Succeed())
		Expect(b.Close()).To(Succeed())
		var busy, frames, moved int64
		Expect(raw.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &moved)).To(Succeed())
		Expect(busy).To(BeZero(), "every page is in the live file, none in the WAL")
		live := sqlite.LivePath(path)
		f, err := os.OpenFile(live, os.O_WRONLY, 0)
		Expect(err).NotTo(HaveOccurred())
		_, err = f.WriteAt(bytes.Repeat([]byte{0xff}, int(pageSize)), (root-1)*pageSize)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Close()).To(Succeed())

		// Open reads the catalog, not the kind's rows: it succeeds.
		b = openAt(path, sqlite.Options{})
		Expect(b.Damage()).To(Succeed(), "no call met the damage yet")

		_, err = b.Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(errors.Is(err, sqlite.ErrCorrupt)).To(BeTrue(), "%v", err)
		Expect(b.Damage()).To(MatchError(err), "the damage met is remembered")
		Expect(recordstore.Code(err)).To(Equal("corrupt"))
		Expect(err.Error()).To(ContainSubstring(live))
		_, err = b.Append(ctx, "s", "events", []recordstore.Row{{"name": "z"}})
		Expect(errors.Is(err, sqlite.ErrCorrupt)).To(BeTrue(), "%v", err)

		// Writing on could spread the damage: the writer stops, reads of
		// what is intact go on.
		_, err = b.Append(ctx, "n", "notes", []recordstore.Row{{"text": "elsewhere"}})
		Expect(errors.Is(err, sqlite.ErrWriterFailed)).To(BeTrue(), "%v", err)
		Expect(recordstore.Code(err)).To(Equal("corrupt"))
		m, err := b.Meta(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect(m.HighSeq).To(BeEquivalentTo(2000))
		Expect(errors.Is(b.Damage(), sqlite.ErrCorrupt)).To(BeTrue(), "a call that succeeds does not clear it")
	})

	It("refuses a path the driver cannot take", func() {
		_, err := sqlite.Open(ctx, "", sqlite.Options{})
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
		_, err = sqlite.Open(ctx, filepath.Join(GinkgoT().TempDir(), "a\x00b", "r.sqlite"), sqlite.Options{})
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
		// '?', '#' and '%' are fine: every connection names the file by
		// FileURI ("File URIs" opens a store under a folder named a #?%b).
	})

	It("keeps rows, kinds and generations across a reopen", func() {
		path := storePath()
		b := openAt(path, sqlite.Options{})
		declare(b, eventsKind())
		mustAppend(b, "s", "events", recordstore.Row{"name": "a"})
		Expect(b.Delete(ctx, "s")).To(Succeed())
		mustAppend(b, "s", "events", recordstore.Row{"name": "b"}, recordstore.Row{"name": "c"})
		Expect(b.Close()).To(Succeed())

		b = openAt(path, sqlite.Options{})
		m := mustMeta(b, "s")
		Expect(m.Generation).To(BeEquivalentTo(2))
		Expect(m.HighSeq).To(BeEquivalentTo(2))
		recs := mustScan(b, "s")
		Expect(recs).To(HaveLen(2))
		Expect(recs[1].Values["name"]).To(Equal("c"))
		Expect(declare(b, eventsKind())).To(Equal(recordstore.KindUnchanged))
		Expect(b.Delete(ctx, "s")).To(Succeed())
		res := mustAppend(b, "s", "events", recordstore.Row{"name": "d"})
		Expect(res.From).To(BeEquivalentTo(1))
		Expect(mustMeta(b, "s").Generation).To(BeEquivalentTo(3))
	})
})

// overwrite returns a damage that writes 8 KiB of 0xff into a file from
// offset on.
func overwrite(offset int64) func(path string) {
	return func(path string) {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		Expect(err).NotTo(HaveOccurred())
		_, err = f.WriteAt(bytes.Repeat([]byte{0xff}, 8192), offset)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Close()).To(Succeed())
	}
}
