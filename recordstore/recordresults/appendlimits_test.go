// The per-append limits of the Store's one-call appends in either role:
// an append one spool batch could not carry is refused by the owner too,
// so that the same rows get the same answer whether or not another process
// owns the store.

package recordresults_test

import (
	"context"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("the limits of one append", func() {
	// limits: three rows, and 48 bytes of NDJSON lines ({"msg":"a"}\n is
	// 12 bytes).
	limits := spool.Limits{MaxRows: 3, MaxBytes: 48}

	open := func(ctx context.Context, role owner.Role) *records.Store {
		return openLimited(ctx, role, limits, eventsKind)
	}
	// buffer holds a row of events per message.
	buffer := func(msgs ...string) *recordstore.RowBuffer {
		var b recordstore.RowBuffer
		for _, m := range msgs {
			Expect(b.Add(recordstore.Values{m})).To(Succeed())
		}
		return &b
	}
	// incoming lists the batches in the spool's incoming folder (applied
	// ones wait there a while too).
	incoming := func(ctx context.Context, st *records.Store) []spool.BatchName {
		names, err := st.Spool().List(ctx, spool.StateIncoming)
		Expect(err).NotTo(HaveOccurred())
		return names
	}
	// nothingWritten checks that stream s does not exist and that no batch
	// was published since the spool held before.
	nothingWritten := func(ctx context.Context, st *records.Store, before []spool.BatchName) {
		GinkgoHelper()
		_, err := st.Backend().Meta(ctx, "s")
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		for _, name := range incoming(ctx, st) {
			Expect(before).To(ContainElement(name), "a batch published since")
		}
	}

	DescribeTable("are the same for the owner and for a process writing through the spool",
		func(role owner.Role) {
			ctx := context.Background()
			st := open(ctx, role)
			before := incoming(ctx, st)

			_, err := st.AppendBuffer(ctx, "s", &eventsKind, buffer("a", "b", "c", "d"), owner.AppendOptions{})
			Expect(err).To(MatchError(spool.ErrTooManyRows))
			Expect(err).To(MatchError(recordstore.ErrCapacity))
			nothingWritten(ctx, st, before)

			_, err = st.Append(ctx, "s", "events", []recordstore.Row{{"msg": "a"}, {"msg": "b"}, {"msg": "c"}, {"msg": "d"}}, owner.AppendOptions{})
			Expect(err).To(MatchError(spool.ErrTooManyRows), "Append counts its rows too")
			nothingWritten(ctx, st, before)

			_, err = st.AppendBuffer(ctx, "s", &eventsKind, buffer("a", "b", "c"+strings.Repeat("x", 13)), owner.AppendOptions{})
			Expect(err).To(MatchError(spool.ErrTooLarge), "49 bytes of lines")
			Expect(err).To(MatchError(ContainSubstring("row 3")))
			nothingWritten(ctx, st, before)

			res, err := st.AppendBuffer(ctx, "s", &eventsKind, buffer("a", "b", "c"+strings.Repeat("x", 12)), owner.AppendOptions{})
			Expect(err).NotTo(HaveOccurred(), "48 bytes of lines, three rows: at the limits")
			Expect(res.Spooled).To(Equal(role == owner.RoleNonOwner))
			Expect(res.AppendResult).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "events", From: 1, To: 3, Appended: 3}))
		},
		Entry("as the owner", owner.RoleOwner),
		Entry("through the spool, a child process owning the store", owner.RoleNonOwner),
	)

	It("declares the kind with the rows when asked to, in either role", func() {
		ctx := context.Background()
		for _, role := range []owner.Role{owner.RoleOwner, owner.RoleNonOwner} {
			st := open(ctx, role)
			res, err := st.AppendBuffer(ctx, "j", &jobsKind, bufferOfJobs(1, 2), owner.AppendOptions{Declare: &jobsKind})
			Expect(err).NotTo(HaveOccurred(), "as %s", role)
			Expect(res.To).To(Equal(int64(2)))
			_, err = st.AppendBuffer(ctx, "j", &jobsKind, bufferOfJobs(3, 3), owner.AppendOptions{})
			Expect(err).To(MatchError(recordstore.ErrInvalid), "a key repeated, as %s", role)
		}
	})
})

// bufferOfJobs holds a row of jobs per id.
// openLimited opens a new store with the spool limits as role (a child
// process owns it for RoleNonOwner) and declares kind.
func openLimited(ctx context.Context, role owner.Role, limits spool.Limits, kind recordstore.Kind) *records.Store {
	GinkgoHelper()
	path := filepath.Join(GinkgoT().TempDir(), "records.sqlite")
	if role == owner.RoleNonOwner {
		startPlainOwner(path)
	}
	opts := mpOptions()
	opts.Owner.Spool.Limits = limits
	st, err := mpOpenAs(ctx, path, opts, role)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(st.Close)
	_, err = st.DeclareKinds(ctx, []recordstore.Kind{kind}, owner.WriteOptions{})
	Expect(err).NotTo(HaveOccurred())
	return st
}

func bufferOfJobs(ids ...int64) *recordstore.RowBuffer {
	var b recordstore.RowBuffer
	for _, id := range ids {
		Expect(b.Add(recordstore.Values{id})).To(Succeed())
	}
	return &b
}

var _ = Describe("the limits of one batch of a Writer and of AppendFrom", func() {
	limits := spool.Limits{MaxRows: 3}

	DescribeTable("are the same for the owner and for a process writing through the spool",
		func(role owner.Role) {
			ctx := context.Background()
			st := openLimited(ctx, role, limits, jobsKind)

			w := st.NewWriter(spool.WriterOptions{})
			err := w.Append(ctx, "j", &jobsKind, jobRows(1, 2, 3, 4))
			Expect(err).To(MatchError(spool.ErrTooManyRows), "one append of four rows")
			Expect(w.Append(ctx, "j", &jobsKind, jobRows(1, 2))).To(Succeed())
			Expect(w.Append(ctx, "j", &jobsKind, jobRows(3, 4))).To(Succeed(), "cut into another batch")
			results, err := w.Close(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(results).To(HaveLen(2))

			fresh := recordstore.Kind{Name: "fresh", Columns: jobsKind.Columns}
			_, err = st.AppendFrom(ctx, "k", &fresh, &rowSlice{rows: jobRows(1)}, owner.BulkOptions{BatchRows: 4, Declare: true})
			Expect(err).To(MatchError(spool.ErrTooManyRows))
			_, err = st.Backend().Meta(ctx, "k")
			Expect(err).To(MatchError(recordstore.ErrNotFound))
			_, err = st.Backend().Kind(ctx, "fresh")
			Expect(err).To(MatchError(recordstore.ErrNotFound), "nothing declared either")
		},
		Entry("as the owner", owner.RoleOwner),
		Entry("through the spool, a child process owning the store", owner.RoleNonOwner),
	)
})
