// Specs for preparing a write on a read-only backend: the checks the owner
// would make, run here, and the batch that carries the write; nothing is
// written or submitted.

package sqlite_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("preparing a write", func() {
	var (
		w, ro  *sqlite.Backend
		own    *owner
		events recordstore.Kind
	)
	BeforeEach(func() {
		path := storePath()
		w = openAt(path, sqlite.Options{})
		events = eventsKind()
		declare(w, events)
		mustAppend(w, "sealed", "events", recordstore.Row{"name": "a"})
		_, err := w.Seal(ctx, "sealed")
		Expect(err).NotTo(HaveOccurred())
		own = &owner{b: w}
		ro = openAt(path, sqlite.Options{ReadOnly: true, Submit: own.submit, ChangeInterval: 5 * time.Millisecond})
	})

	It("builds an append's batch, led by its kind's declaration when one is given", func() {
		jobs := keyedKind("jobs", recordstore.ConflictSkip)
		batch, err := ro.PrepareAppend(ctx, "j", "jobs", &jobs, []recordstore.Row{{"id": "a", "v": "1"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(batch.Schemas).To(Equal([]recordstore.Kind{jobs}))
		Expect(batch.Entries).To(HaveLen(2))
		Expect(batch.Entries[0]).To(Equal(recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: "jobs"}))
		Expect(batch.Entries[1].Op).To(Equal(recordstore.OpAppend))
		Expect(batch.Entries[1].Rows).To(HaveLen(1))

		batch, err = ro.PrepareAppend(ctx, "s", "events", nil, []recordstore.Row{{"name": "b"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(batch.Entries).To(HaveLen(1), "no declaration")
		Expect(own.submitted()).To(Equal(0), "nothing submitted")
		_, err = w.Kind(ctx, "jobs")
		Expect(err).To(MatchError(recordstore.ErrNotFound), "nothing declared")
	})

	DescribeTable("refuses what the owner would refuse",
		func(prepare func() error, sentinel error, says string) {
			err := prepare()
			Expect(err).To(MatchError(sentinel))
			Expect(err).To(MatchError(ContainSubstring(says)))
			Expect(own.submitted()).To(Equal(0))
		},
		Entry("a key repeated among the rows", func() error {
			jobs := keyedKind("jobs", recordstore.ConflictSkip)
			_, err := ro.PrepareAppend(ctx, "j", "jobs", &jobs, []recordstore.Row{{"id": "a"}, {"id": "a"}})
			return err
		}, recordstore.ErrInvalid, "rows 1 and 2 have the same key"),
		Entry("a declaration that conflicts with the catalog", func() error {
			changed := eventsKind()
			changed.Columns[1].Type = recordstore.TypeString
			_, err := ro.PrepareAppend(ctx, "s", "events", &changed, []recordstore.Row{{"name": "b"}})
			return err
		}, recordstore.ErrSchemaConflict, "declare kind events"),
		Entry("an append to a sealed stream", func() error {
			_, err := ro.PrepareAppend(ctx, "sealed", "events", nil, []recordstore.Row{{"name": "b"}})
			return err
		}, recordstore.ErrSealed, "append to sealed"),
		Entry("an operation on a stream that is not live", func() error {
			_, err := ro.PrepareEntry(ctx, recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "nope"})
			return err
		}, recordstore.ErrNotFound, "seal nope"),
		Entry("a set of kinds one of which conflicts", func() error {
			changed := eventsKind()
			changed.Columns[1].Type = recordstore.TypeString
			_, err := ro.PrepareDeclare(ctx, []recordstore.Kind{keyedKind("jobs", recordstore.ConflictSkip), changed})
			return err
		}, recordstore.ErrSchemaConflict, "declare kind events"),
	)
})
