// Specs for Sync: the WAL made durable on demand.

package sqlite_test

import (
	"errors"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("Sync", func() {
	It("fsyncs the WAL holding the latest commits and keeps the writer going", func() {
		path := storePath()
		b := openAt(path, sqlite.Options{})
		declare(b, eventsKind())
		mustAppend(b, "s", "events", recordstore.Row{"name": "a"})
		wal, err := os.Stat(b.LivePath() + "-wal")
		Expect(err).NotTo(HaveOccurred())
		Expect(wal.Size()).To(BeNumerically(">", 0), "the commit is in the WAL")
		Expect(b.Sync(ctx)).To(Succeed())
		mustAppend(b, "s", "events", recordstore.Row{"name": "b"})
		Expect(mustScan(b, "s")).To(HaveLen(2))
	})

	It("refuses on a read-only backend and after Close", func() {
		path := storePath()
		w := openAt(path, sqlite.Options{})
		ro := openAt(path, sqlite.Options{ReadOnly: true})
		err := ro.Sync(ctx)
		Expect(errors.Is(err, recordstore.ErrReadOnly)).To(BeTrue(), "%v", err)
		Expect(w.Close()).To(Succeed())
		err = w.Sync(ctx)
		Expect(errors.Is(err, recordstore.ErrClosed)).To(BeTrue(), "%v", err)
	})
})
