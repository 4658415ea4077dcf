// Specs for RefusedEntries: the ledger's entries refused in committed
// batches, listed for query spool ls --refused.

package sqlite_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("RefusedEntries", func() {
	It("lists the refused entries of committed batches, oldest first, and neither applied entries nor failed batches", func() {
		path := storePath()
		b := openAt(path, sqlite.Options{})
		events := eventsKind()
		declare(b, events)
		mustAppend(b, "closed", "events", recordstore.Row{"name": "before the seal"})
		_, err := b.Seal(ctx, "closed")
		Expect(err).NotTo(HaveOccurred())

		ok := newBatch([]recordstore.Kind{events}, appendEntry("open", events, recordstore.Row{"name": "a"}))
		mixed := newBatch([]recordstore.Kind{events},
			appendEntry("open", events, recordstore.Row{"name": "b"}),
			appendEntry("closed", events, recordstore.Row{"name": "c"}))
		failed := newBatch(nil)
		failed.Failure = &recordstore.BatchError{Code: "invalid", Message: "bad file"}
		res := mustBatch(b, ok, mixed, failed)
		Expect(codes(res[1])).To(Equal([]string{"", "sealed"}))

		ro := openAt(path, sqlite.Options{ReadOnly: true})
		for _, backend := range []*sqlite.Backend{b, ro} {
			refused, err := backend.RefusedEntries(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(refused).To(HaveLen(1))
			r := refused[0]
			Expect([]any{r.Batch, r.Producer, r.Seq, r.Entry, r.Op, r.Stream, r.Error.Code}).To(Equal(
				[]any{mixed.ID, "p1", mixed.Producer.Seq, 1, recordstore.OpAppend, "closed", "sealed"}))
			Expect(r.Error.Message).To(ContainSubstring("closed"))
			Expect(r.IngestedAt).NotTo(BeZero())
		}
	})

	It("lists nothing for a file without a ledger", func() {
		b := openAt(storePath(), sqlite.Options{})
		refused, err := b.RefusedEntries(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(refused).To(BeEmpty())
	})
})
