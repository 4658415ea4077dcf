// Specs for appends of stored values read from a RowSource: the owner's
// AppendSource, and a read-only backend's check and submission of one.

package sqlite_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// bufferOf holds rows in a RowBuffer.
func bufferOf(rows ...recordstore.Values) *recordstore.RowBuffer {
	var b recordstore.RowBuffer
	for _, r := range rows {
		Expect(b.Add(r)).To(Succeed())
	}
	return &b
}

var _ = Describe("appending rows from a source", func() {
	var (
		w    *sqlite.Backend
		jobs recordstore.Kind
		// swapped is jobs' declaration with its columns in another order,
		// as a caller may hold it.
		swapped recordstore.Kind
	)
	BeforeEach(func() {
		w = openAt(storePath(), sqlite.Options{})
		jobs = keyedKind("jobs", recordstore.ConflictSkip)
		declare(w, jobs)
		swapped = jobs
		swapped.Columns = []recordstore.Column{jobs.Columns[1], jobs.Columns[0], jobs.Columns[3], jobs.Columns[2]}
	})

	It("stores the rows in the catalog's column order, many of them as one append", func() {
		var rows []recordstore.Values
		for i := range 1000 {
			rows = append(rows, recordstore.Values{fmt.Sprint("v", i), fmt.Sprint("k", i), nil, int64(i)})
		}
		res, err := w.AppendSource(ctx, "j", swapped, bufferOf(rows...).Source())
		Expect(err).NotTo(HaveOccurred())
		Expect(res.From).To(Equal(int64(1)))
		Expect(res.To).To(Equal(int64(1000)))
		Expect(res.Appended).To(Equal(int64(1000)))
		recs := mustScan(w, "j")
		Expect(recs).To(HaveLen(1000))
		Expect(recs[999].Values).To(Equal(recordstore.Row{"id": "k999", "v": "v999", "ver": int64(999), "tie": nil}))
	})

	DescribeTable("refuses, storing nothing",
		func(kind func() recordstore.Kind, rows []recordstore.Values, sentinel error, says string) {
			_, err := w.AppendSource(ctx, "j", kind(), bufferOf(rows...).Source())
			Expect(err).To(MatchError(sentinel))
			Expect(err).To(MatchError(ContainSubstring(says)))
			_, err = w.Meta(ctx, "j")
			Expect(err).To(MatchError(recordstore.ErrNotFound))
		},
		Entry("a key repeated among the rows", func() recordstore.Kind { return jobs },
			[]recordstore.Values{{"a", nil, nil, nil}, {"b", nil, nil, nil}, {"a", nil, nil, nil}}, recordstore.ErrInvalid, "rows 1 and 3 have the same key"),
		Entry("a row without its key", func() recordstore.Kind { return jobs },
			[]recordstore.Values{{"a", nil, nil, nil}, {nil, "x", nil, nil}}, recordstore.ErrInvalid, "row 2: "),
		Entry("a column the catalog does not have", func() recordstore.Kind {
			k := jobs
			k.Columns = append(append([]recordstore.Column{}, jobs.Columns...), recordstore.Column{Name: "extra", Type: recordstore.TypeString})
			return k
		}, []recordstore.Values{{"a", nil, nil, nil, "x"}}, recordstore.ErrSchemaConflict, "append to j"),
		Entry("no rows", func() recordstore.Kind { return jobs }, nil, recordstore.ErrInvalid, "no rows"),
	)

	// Rows far more than the feed holds at a time (it lets go of each row
	// once inserted and reads ahead a bounded window): a bad row or a
	// repeated key near the end still refuses the whole append.
	DescribeTable("refuses a long append at a row far past its start, storing nothing",
		func(bad func(rows []recordstore.Values), says string) {
			rows := make([]recordstore.Values, 60_000)
			for i := range rows {
				rows[i] = recordstore.Values{fmt.Sprint("k", i), fmt.Sprint("v", i), int64(i), nil}
			}
			bad(rows)
			_, err := w.AppendSource(ctx, "j", jobs, bufferOf(rows...).Source())
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err).To(MatchError(ContainSubstring(says)))
			_, err = w.Meta(ctx, "j")
			Expect(err).To(MatchError(recordstore.ErrNotFound))
		},
		Entry("a row without its key", func(rows []recordstore.Values) { rows[54_321][0] = nil }, "row 54322: "),
		Entry("the first row's key again", func(rows []recordstore.Values) { rows[59_999][0] = "k0" }, "rows 1 and 60000 have the same key"),
	)

	// Rows whose keys take more than the key set holds in memory
	// (recordstore.KeySet): past it they go to sorted runs in a file,
	// checked once every row is in, with the same answer.
	Describe("with more keys than the key set holds in memory", func() {
		const n = 200_000
		longRows := func() []recordstore.Values {
			rows := make([]recordstore.Values, n)
			for i := range rows {
				rows[i] = recordstore.Values{fmt.Sprint("key-", i), nil, int64(i), nil}
			}
			return rows
		}

		It("appends them all when no key is repeated", func() {
			res, err := w.AppendSource(ctx, "j", jobs, bufferOf(longRows()...).Source())
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Appended).To(Equal(int64(n)))
			m, err := w.Meta(ctx, "j")
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Total).To(Equal(int64(n)))
		})

		DescribeTable("refuses the append, storing nothing, naming the rows a check in row order names",
			func(bad func(rows []recordstore.Values), sentinel error, says string) {
				rows := longRows()
				bad(rows)
				_, err := w.AppendSource(ctx, "j", jobs, bufferOf(rows...).Source())
				Expect(err).To(MatchError(sentinel))
				Expect(err).To(MatchError(ContainSubstring(says)))
				_, err = w.Meta(ctx, "j")
				Expect(err).To(MatchError(recordstore.ErrNotFound))

				By("through PrepareAppendStream, as a process that does not own the store checks it")
				ro := openAt(w.Path(), sqlite.Options{ReadOnly: true, Submit: (&owner{b: w}).submit})
				_, err = ro.PrepareAppendStream(ctx, "j", jobs, false, bufferOf(rows...))
				Expect(err).To(MatchError(sentinel))
				Expect(err).To(MatchError(ContainSubstring(says)))
			},
			Entry("a key repeated far past the memory's bound", func(rows []recordstore.Values) { rows[199_999][0] = "key-150000" },
				recordstore.ErrInvalid, "rows 150001 and 200000 have the same key"),
			Entry("a key of the first rows repeated late, and another repeated later", func(rows []recordstore.Values) {
				rows[180_000][0] = "key-7"
				rows[190_000][0] = "key-100000"
			}, recordstore.ErrInvalid, "rows 8 and 180001 have the same key"),
			Entry("a bad row after a repeated key: the key, which comes first", func(rows []recordstore.Values) {
				rows[170_000][0] = "key-160000"
				rows[190_000][0] = nil
			}, recordstore.ErrInvalid, "rows 160001 and 170001 have the same key"),
			Entry("a bad row before a repeated key: the row", func(rows []recordstore.Values) {
				rows[170_000][0] = nil
				rows[190_000][0] = "key-160000"
			}, recordstore.ErrInvalid, "row 170001: "),
		)
	})

	Describe("in a read-only backend", func() {
		var (
			ro  *sqlite.Backend
			own *owner
		)
		BeforeEach(func() {
			own = &owner{b: w}
			ro = openAt(w.Path(), sqlite.Options{ReadOnly: true, Submit: own.submit, ChangeInterval: 5 * time.Millisecond})
		})

		It("checks the rows, submits one batch in the catalog's column order and returns the owner's window", func() {
			batch, err := ro.PrepareAppendSource(ctx, "j", swapped, false, bufferOf(recordstore.Values{"v", "k", nil, int64(7)}).Source())
			Expect(err).NotTo(HaveOccurred())
			Expect(batch.Schemas).To(Equal([]recordstore.Kind{jobs}))
			Expect(batch.Entries).To(HaveLen(1))
			Expect(batch.Entries[0].Rows).To(Equal([]recordstore.Values{{"k", "v", int64(7), nil}}))
			Expect(own.submitted()).To(BeZero(), "preparing submits nothing")

			res, err := ro.AppendSource(ctx, "j", swapped, bufferOf(recordstore.Values{"v", "k", nil, int64(7)}).Source())
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Appended).To(Equal(int64(1)))
			Expect(own.submitted()).To(Equal(1))
			Expect(mustScan(w, "j")[0].Values).To(HaveKeyWithValue("ver", int64(7)))
		})

		It("leads the batch with the kind's declaration when asked to declare it", func() {
			fresh := keyedKind("fresh", recordstore.ConflictSkip)
			batch, err := ro.PrepareAppendSource(ctx, "f", fresh, true, bufferOf(recordstore.Values{"a", nil, nil, nil}).Source())
			Expect(err).NotTo(HaveOccurred())
			Expect(batch.Entries).To(HaveLen(2))
			Expect(batch.Entries[0]).To(Equal(recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: "fresh"}))
			_, err = w.Kind(ctx, "fresh")
			Expect(err).To(MatchError(recordstore.ErrNotFound), "nothing declared")
		})

		It("refuses an append to a sealed stream, submitting nothing", func() {
			mustAppend(w, "j", "jobs", recordstore.Row{"id": "a"})
			_, err := w.Seal(ctx, "j")
			Expect(err).NotTo(HaveOccurred())
			_, err = ro.AppendSource(ctx, "j", jobs, bufferOf(recordstore.Values{"b", nil, nil, nil}).Source())
			Expect(err).To(MatchError(recordstore.ErrSealed))
			Expect(own.submitted()).To(BeZero())
		})
	})
})
