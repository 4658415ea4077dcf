// Specs for Options.BeforeCommit: the last check of a write transaction.

package sqlite_test

import (
	"errors"
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
