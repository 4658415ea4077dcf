// Specs for Options.BeforeCommit: the last check of a write transaction.

package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("Options.BeforeCommit", func() {
	It("refuses a commit with its error, storing nothing of it, and does not stop the writer", func() {
		refused := errors.New("lease lost")
		var refuse atomic.Bool
		b := openAt(storePath(), sqlite.Options{BeforeCommit: func() error {
			if refuse.Load() {
				return refused
			}
			return nil
		}})
		declare(b, eventsKind())
		mustAppend(b, "s", "events", recordstore.Row{"name": "a"})

		refuse.Store(true)
		_, err := b.Append(ctx, "s", "events", []recordstore.Row{{"name": "b"}})
		Expect(errors.Is(err, refused)).To(BeTrue(), "%v", err)
		_, err = b.Seal(ctx, "s")
		Expect(errors.Is(err, refused)).To(BeTrue(), "%v", err)
		recs, err := b.Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(1))
		m, err := b.Meta(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Sealed).To(BeFalse())

		refuse.Store(false)
		mustAppend(b, "s", "events", recordstore.Row{"name": "c"})
		recs, err = b.Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(2))
	})
})

// Every other transaction that writes a file of the store checks it too:
// the schema's at a writable open and at a promotion, Rotate's seeding of
// the next file, and Seal's drop of the bookkeeping tables.
var _ = Describe("Options.BeforeCommit on the other write paths", func() {
	refused := errors.New("lease lost")
	refuseAll := func() error { return refused }

	It("refuses Rotate's seeding of the new file: the old file stays live and unchanged, no new file is left", func() {
		var refuse atomic.Bool
		path := storePath()
		b := openAt(path, sqlite.Options{BeforeCommit: func() error {
			if refuse.Load() {
				return refused
			}
			return nil
		}})
		declare(b, eventsKind())
		mustAppend(b, "s", "events", recordstore.Row{"name": "a"})
		live := b.LivePath()
		next := filepath.Join(filepath.Dir(live), "next.sqlite")

		refuse.Store(true)
		_, err := b.Rotate(ctx, next)
		Expect(errors.Is(err, refused)).To(BeTrue(), "%v", err)
		Expect(b.LivePath()).To(Equal(live))
		_, err = os.Stat(next)
		Expect(err).To(MatchError(os.ErrNotExist))

		refuse.Store(false)
		mustAppend(b, "s", "events", recordstore.Row{"name": "b"})
		Expect(mustScan(b, "s")).To(HaveLen(2))
	})

	It("refuses the schema transaction of a writable open and of a promotion: the epoch stays", func() {
		path := storePath()
		b, err := sqlite.Open(ctx, path, sqlite.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		epoch := b.Epoch()
		Expect(b.Close()).To(Succeed())

		_, err = sqlite.Open(ctx, path, sqlite.Options{SweepInterval: -1, BeforeCommit: refuseAll})
		Expect(errors.Is(err, refused)).To(BeTrue(), "%v", err)

		ro, err := sqlite.Open(ctx, path, sqlite.Options{SweepInterval: -1, ReadOnly: true, BeforeCommit: refuseAll})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(ro.Close)
		Expect(ro.Promote(ctx)).To(MatchError(refused))
		Expect(ro.ReadOnly()).To(BeTrue())

		again := openAt(path, sqlite.Options{ReadOnly: true})
		Expect(again.Epoch()).To(Equal(epoch))
	})

	It("refuses SealWith's drop of the bookkeeping tables: the file stays a live file", func() {
		path := storePath()
		b, err := sqlite.Open(ctx, path, sqlite.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		declare(b, eventsKind())
		mustAppend(b, "s", "events", recordstore.Row{"name": "a"})
		live := b.LivePath()
		Expect(b.Close()).To(Succeed())

		_, err = sqlite.SealWith(ctx, live, sqlite.SealOptions{BeforeCommit: refuseAll})
		Expect(errors.Is(err, refused)).To(BeTrue(), "%v", err)
		again := openAt(path, sqlite.Options{ReadOnly: true})
		Expect(mustScan(again, "s")).To(HaveLen(1))
	})
})
