// Specs for Append: windows, generations, conflict policies, refusals that
// write nothing, and concurrent appenders.

package sqlite_test

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

func kv(id, v string, ver int64, tie string) recordstore.Row {
	return recordstore.Row{"id": id, "v": v, "ver": ver, "tie": tie}
}

func values(recs []recordstore.Record, col string) []any {
	out := make([]any, len(recs))
	for i, r := range recs {
		out[i] = r.Values[col]
	}
	return out
}

var _ = Describe("Append", func() {
	var (
		b   *sqlite.Backend
		clk *clock
	)

	BeforeEach(func() {
		clk = newClock()
		b = openStore(clk)
		declare(b, eventsKind())
		for _, p := range []recordstore.OnConflict{recordstore.ConflictSkip, recordstore.ConflictReplace, recordstore.ConflictLWW} {
			declare(b, keyedKind(string(p), p))
		}
	})

	It("returns contiguous windows and keeps the stream's meta", func() {
		r1, err := b.Append(ctx, "s", "events", []recordstore.Row{{"name": "a"}, {"name": "b"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(r1).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "events", From: 1, To: 2, Appended: 2}))
		r2, err := b.Append(ctx, "s", "events", []recordstore.Row{{"name": "c"}})
		Expect(err).NotTo(HaveOccurred())
		Expect([]int64{r2.From, r2.To}).To(Equal([]int64{3, 3}))
		m, err := b.Meta(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect([]int64{m.Generation, m.LowSeq, m.HighSeq, m.Total}).To(Equal([]int64{1, 1, 3, 3}))
		Expect(m.CreatedAt).To(Equal(clk.Now()))
		recs, err := b.Scan(ctx, "s", recordstore.ScanOptions{After: 1, Limit: 1})
		Expect(err).NotTo(HaveOccurred())
		Expect(seqs(recs)).To(Equal([]int64{2}))
	})

	DescribeTable("refuses bad input and writes nothing",
		func(stream, kind string, rows []recordstore.Row, want error) {
			mustAppend(b, "s", "skip", kv("k", "v", 1, ""))
			_, err := b.Append(ctx, stream, kind, rows)
			Expect(errors.Is(err, want)).To(BeTrue(), "%v", err)
			m, err := b.Meta(ctx, "s")
			Expect(err).NotTo(HaveOccurred())
			Expect(m.HighSeq).To(BeEquivalentTo(1))
		},
		Entry("bad stream id", "a/b", "skip", []recordstore.Row{kv("x", "", 1, "")}, recordstore.ErrInvalid),
		Entry("bad kind name", "s", "1x", []recordstore.Row{kv("x", "", 1, "")}, recordstore.ErrInvalid),
		Entry("undeclared kind", "s", "nope", []recordstore.Row{kv("x", "", 1, "")}, recordstore.ErrNotFound),
		Entry("no rows", "s", "skip", []recordstore.Row{}, recordstore.ErrInvalid),
		Entry("a row that does not fit", "s", "skip", []recordstore.Row{kv("x", "", 1, ""), {"id": 5}}, recordstore.ErrInvalid),
		Entry("a key repeated in the append", "s", "skip", []recordstore.Row{kv("x", "", 1, ""), kv("x", "", 2, "")}, recordstore.ErrInvalid),
		Entry("another kind than the stream's", "s", "events", []recordstore.Row{{"name": "a"}}, recordstore.ErrSchemaConflict),
	)

	Describe("a large append, normalized while it is inserted", func() {
		many := func(n int, bad int) []recordstore.Row {
			rows := make([]recordstore.Row, n)
			for i := range rows {
				rows[i] = kv(fmt.Sprintf("k%04d", i), "v", int64(i), "")
			}
			if bad >= 0 {
				rows[bad] = recordstore.Row{"id": "x", "ver": "not a number"}
			}
			return rows
		}
		It("stores every row in one window", func() {
			mustAppend(b, "s", "skip", kv("k0001", "stored", 1, ""))
			res, err := b.Append(ctx, "s", "skip", many(1000, -1))
			Expect(err).NotTo(HaveOccurred())
			Expect(res).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "skip", From: 2, To: 1000, Appended: 999, Skipped: 1}))
			res, err = b.Append(ctx, "e", "events", make([]recordstore.Row, 1000))
			Expect(err).NotTo(HaveOccurred())
			Expect([]int64{res.From, res.To, mustMeta(b, "e").Total}).To(Equal([]int64{1, 1000, 1000}))
		})
		DescribeTable("refuses bad input found late and writes nothing",
			func(stream string, rows []recordstore.Row, want error) {
				mustAppend(b, "sealed", "skip", kv("a", "v", 1, ""))
				_, err := b.Seal(ctx, "sealed")
				Expect(err).NotTo(HaveOccurred())
				_, err = b.Append(ctx, stream, "skip", rows)
				Expect(errors.Is(err, want)).To(BeTrue(), "%v", err)
				_, err = b.Meta(ctx, "new")
				Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
				Expect(mustMeta(b, "sealed").Total).To(BeEquivalentTo(1))
			},
			Entry("a bad last row", "new", many(500, 499), recordstore.ErrInvalid),
			Entry("a repeated key at the end", "new", append(many(500, -1), kv("k0003", "", 1, "")), recordstore.ErrInvalid),
			Entry("a bad row for a sealed stream: bad input wins", "sealed", many(500, 300), recordstore.ErrInvalid),
			Entry("good rows for a sealed stream", "sealed", many(500, -1), recordstore.ErrSealed),
		)
	})

	// The kind tables' INSERTs run without a statement journal (OR FAIL):
	// a statement that fails half-way keeps what it wrote, and the
	// append's savepoint or transaction must undo it. 100 rows go through
	// database/sql's multi-row statements, 3000 through the driver's
	// (insertBulk).
	DescribeTable("leaves nothing of an append whose multi-row INSERT fails half-way",
		func(rows int, planted int64) {
			mustAppend(b, "s", "events", make([]recordstore.Row, 10)...)
			db := rawDB(b)
			// Plant a row at a seq the next append takes.
			_, err := db.Exec(`INSERT INTO events (_seq_stream, _seq, name)
				SELECT no, ?, 'planted' FROM record_streams WHERE id = 's'`, planted)
			Expect(err).NotTo(HaveOccurred())

			_, err = b.Append(ctx, "s", "events", make([]recordstore.Row, rows))
			Expect(err).To(HaveOccurred())
			Expect(rawCount(db, `SELECT count(*) FROM events`)).To(BeEquivalentTo(11))
			Expect(mustMeta(b, "s").HighSeq).To(BeEquivalentTo(10))

			// The same rows as a batch among others: nothing of the group stays.
			events := eventsKind()
			batches := []recordstore.Batch{
				newBatch([]recordstore.Kind{events}, appendEntry("other", events, recordstore.Row{"name": "a"})),
				newBatch([]recordstore.Kind{events}, appendEntry("s", events, make([]recordstore.Row, rows)...)),
			}
			_, err = b.AppendBatch(ctx, batches...)
			Expect(err).To(HaveOccurred())
			Expect(rawCount(db, `SELECT count(*) FROM events`)).To(BeEquivalentTo(11))
			Expect(rawCount(db, `SELECT count(*) FROM record_spool_batches`)).To(BeZero())

			_, err = db.Exec(`DELETE FROM events WHERE name = 'planted'`)
			Expect(err).NotTo(HaveOccurred())
			res, err := b.Append(ctx, "s", "events", make([]recordstore.Row, rows))
			Expect(err).NotTo(HaveOccurred())
			Expect([]int64{res.From, res.To}).To(Equal([]int64{11, int64(10 + rows)}))
			Expect(rawCount(db, `SELECT count(*) FROM events`)).To(BeEquivalentTo(10 + rows))
		},
		Entry("through database/sql", 100, int64(60)),
		Entry("through the driver", 3000, int64(2000)),
	)

	It("stores a bulk append's values as a small one does, and refuses a bad row late in it", func() {
		rows := make([]recordstore.Row, 3000)
		for i := range rows {
			rows[i] = recordstore.Row{"name": fmt.Sprintf("r%d", i), "n": int64(i), "x": float64(i) / 4,
				"ok": i%2 == 0, "at": "2030-01-02T03:04:05.000006Z", "doc": `{"i":` + fmt.Sprint(i) + `}`}
		}
		rows[5]["name"] = nil
		mustAppend(b, "bulk", "events", rows...)
		mustAppend(b, "small", "events", rows[:10]...)
		db := rawDB(b)
		q := `SELECT e._seq, quote(name), quote(n), quote(x), quote(ok), quote(at), quote(doc)
			FROM events e JOIN record_streams s ON s.no = e._seq_stream WHERE s.id = ? AND e._seq > ? ORDER BY e._seq`
		dump := func(stream string, after int) []string {
			rs, err := db.Query(q, stream, after)
			Expect(err).NotTo(HaveOccurred())
			defer rs.Close()
			var out []string
			for rs.Next() {
				var seq int64
				var c [6]string
				Expect(rs.Scan(&seq, &c[0], &c[1], &c[2], &c[3], &c[4], &c[5])).To(Succeed())
				out = append(out, strings.Join(c[:], "|"))
			}
			Expect(rs.Err()).NotTo(HaveOccurred())
			return out
		}
		all := dump("bulk", 0)
		Expect(all).To(HaveLen(3000))
		Expect(all[:10]).To(Equal(dump("small", 0)))
		Expect(all[5]).To(HavePrefix("NULL|5|1.25|"))

		rows[2500]["n"] = "not a number"
		_, err := b.Append(ctx, "bulk", "events", rows)
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
		Expect(mustMeta(b, "bulk").Total).To(BeEquivalentTo(3000))
		Expect(rawCount(db, `SELECT count(*) FROM events`)).To(BeEquivalentTo(3010))
	})

	It("skips rows whose key is stored, consuming no seq", func() {
		mustAppend(b, "s", "skip", kv("a", "1", 1, ""), kv("b", "1", 1, ""))
		res, err := b.Append(ctx, "s", "skip", []recordstore.Row{kv("b", "2", 2, ""), kv("c", "2", 2, "")})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "skip", From: 3, To: 3, Appended: 1, Skipped: 1}))
		Expect(values(mustScan(b, "s"), "v")).To(Equal([]any{"1", "1", "2"}))
		res, err = b.Append(ctx, "s", "skip", []recordstore.Row{kv("a", "3", 3, "")})
		Expect(err).NotTo(HaveOccurred())
		Expect([]int64{res.From, res.To, res.Appended, res.Skipped}).To(Equal([]int64{4, 3, 0, 1}))
		Expect(mustMeta(b, "s").HighSeq).To(BeEquivalentTo(3))
	})

	It("replaces stored rows at the next seq, moving LowSeq past a replaced first row", func() {
		mustAppend(b, "s", "replace", kv("a", "1", 1, ""), kv("b", "1", 1, ""))
		res, err := b.Append(ctx, "s", "replace", []recordstore.Row{kv("a", "2", 2, ""), kv("c", "2", 2, "")})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "replace", From: 3, To: 4, Appended: 2, Replaced: 1}))
		recs := mustScan(b, "s")
		Expect(seqs(recs)).To(Equal([]int64{2, 3, 4}))
		Expect(values(recs, "id")).To(Equal([]any{"b", "a", "c"}))
		m := mustMeta(b, "s")
		Expect([]int64{m.LowSeq, m.HighSeq, m.Total}).To(Equal([]int64{2, 4, 3}))
	})

	It("lets the last writer win by version, then by the smaller tiebreak", func() {
		mustAppend(b, "s", "lww", kv("a", "first", 5, "m"), kv("b", "first", 5, "m"),
			kv("c", "first", 5, "m"), kv("d", "first", 5, "m"))
		res, err := b.Append(ctx, "s", "lww", []recordstore.Row{
			kv("a", "older", 4, "a"),  // lower version: kept
			kv("b", "newer", 6, "z"),  // higher version: wins
			kv("c", "tie-lo", 5, "a"), // equal version, smaller tiebreak: wins
			kv("d", "tie-hi", 5, "z"), // equal version, larger tiebreak: kept
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "lww", From: 5, To: 6, Appended: 2, Skipped: 2, Replaced: 2}))
		recs := mustScan(b, "s")
		Expect(values(recs, "v")).To(Equal([]any{"first", "first", "newer", "tie-lo"}))
		Expect(seqs(recs)).To(Equal([]int64{1, 4, 5, 6}))
		Expect(mustMeta(b, "s").Total).To(BeEquivalentTo(4))
	})

	It("refuses appends to a sealed stream until it is reopened", func() {
		mustAppend(b, "s", "events", recordstore.Row{"name": "a"})
		m, err := b.Seal(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Sealed).To(BeTrue())
		_, err = b.Append(ctx, "s", "events", []recordstore.Row{{"name": "b"}})
		Expect(errors.Is(err, recordstore.ErrSealed)).To(BeTrue())
		_, err = b.Reopen(ctx, "s", m.Generation+1)
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
		_, err = b.Reopen(ctx, "s", m.Generation)
		Expect(err).NotTo(HaveOccurred())
		Expect(mustAppend(b, "s", "events", recordstore.Row{"name": "b"}).From).To(BeEquivalentTo(2))
	})

	It("gives concurrent appenders to one stream contiguous, non-overlapping windows", func() {
		const workers, each = 8, 20
		var mu sync.Mutex
		var windows [][2]int64
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for i := 0; i < each; i++ {
					res, err := b.Append(ctx, "c", "events", []recordstore.Row{{"name": "x"}, {"name": "y"}, {"name": "z"}})
					Expect(err).NotTo(HaveOccurred())
					Expect(res.To - res.From).To(BeEquivalentTo(2))
					mu.Lock()
					windows = append(windows, [2]int64{res.From, res.To})
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		sort.Slice(windows, func(i, j int) bool { return windows[i][0] < windows[j][0] })
		for i, w := range windows {
			Expect(w[0]).To(BeEquivalentTo(3*i + 1))
		}
		Expect(mustMeta(b, "c").Total).To(BeEquivalentTo(3 * workers * each))
	})
})
