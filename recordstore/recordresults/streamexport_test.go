// An export through a RowStreamer (the SQLite backend's StreamRows) must
// write the bytes the page-by-page export through QueryRows writes, for
// every format, query and value type.

package recordresults_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/sqlite"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ recordresults.RowStreamer = (*sqlite.Backend)(nil)

// queryRowsOnly hides every capability of a backend but the Backend
// methods and QueryRows: a Reader over it exports page by page through
// QueryRows, as before RowStreamer.
type queryRowsOnly struct {
	recordstore.Backend
	qr recordstore.RowQuerier
}

func (b queryRowsOnly) QueryRows(ctx context.Context, stream string, q recordstore.RowQuery) ([]recordstore.Record, recordstore.Meta, error) {
	return b.qr.QueryRows(ctx, stream, q)
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

var errWriteFailed = errors.New("write failed")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errWriteFailed
	}
	w.n -= len(p)
	return len(p), nil
}

// stallingWriter takes writes once release is closed; its first write
// closes stalled first.
type stallingWriter struct {
	out     bytes.Buffer
	stalled chan struct{}
	release chan struct{}
	once    bool
}

func (w *stallingWriter) Write(p []byte) (int, error) {
	if !w.once {
		w.once = true
		close(w.stalled)
	}
	<-w.release
	return w.out.Write(p)
}

var _ = Describe("An export through StreamRows", func() {
	var (
		ctx      context.Context
		path     string
		st       *records.Store
		streamed *recordresults.Reader
		paged    *recordresults.Reader
	)
	BeforeEach(func() {
		ctx = context.Background()
		var err error
		path = filepath.Join(GinkgoT().TempDir(), "records.sqlite")
		st, err = records.Open(ctx, path, records.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		b := st.Backend()
		_, ok := b.(recordresults.RowStreamer)
		Expect(ok).To(BeTrue(), "the store's backend streams its rows")
		streamed = recordresults.NewReader(b)
		paged = recordresults.NewReader(queryRowsOnly{Backend: b, qr: b.(recordstore.RowQuerier)})
		_, err = b.DeclareKind(ctx, queryJobs)
		Expect(err).NotTo(HaveOccurred())
		odd := []recordstore.Row{
			{"id": 1, "host": `<script>"x"&</script>`, "state": "naïve\u2028é\n\x00", "score": 1e21, "detail": json.RawMessage(`{"a":"<","b":[1,2.5e300]}`)},
			{"id": 2, "host": "tab\there", "score": 0.1, "ok": true, "at": jobEpoch},
			{"id": 3, "attempts": int64(math.MaxInt64), "score": 1e-7, "ok": false, "at": jobEpoch.Add(time.Microsecond)},
			{"id": 4, "attempts": int64(math.MinInt64), "score": math.Copysign(0, -1), "host": "日本語 \U0001F600", "state": "=1+2"},
			{"id": 5, "score": math.MaxFloat64, "detail": json.RawMessage(`"text"`)},
			{"id": 6, "score": math.SmallestNonzeroFloat64, "detail": json.RawMessage(`null`)},
			{"id": 7}, // every other column null
		}
		_, err = b.Append(ctx, "s", "jobs", odd)
		Expect(err).NotTo(HaveOccurred())
		// Enough rows for the page ramp and the chunks handed to a second
		// goroutine, nulls here and there.
		rows := make([]recordstore.Row, 0, 7000)
		for i := range 7000 {
			r := recordstore.Row{"id": int64(100 + i), "host": jobHosts[i%len(jobHosts)], "attempts": int64(i % 7),
				"score": float64(i) / 3, "ok": i%3 == 0, "at": jobEpoch.Add(time.Duration(i) * time.Second),
				"detail": json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
			if i%11 == 0 {
				r["host"], r["score"] = nil, nil
			}
			rows = append(rows, r)
		}
		_, err = b.Append(ctx, "s", "jobs", rows)
		Expect(err).NotTo(HaveOccurred())
	})

	export := func(rd *recordresults.Reader, q recordresults.Query, o recordresults.ExportOptions) ([]byte, int64, []int64) {
		var out bytes.Buffer
		var progress []int64
		o.Progress = func(n int64) { progress = append(progress, n) }
		n, err := rd.ExportWith(ctx, &out, q, o)
		Expect(err).NotTo(HaveOccurred(), "%+v %+v", q, o)
		return out.Bytes(), n, progress
	}

	It("writes the bytes of the paged export, in every format, for every kind of query", func() {
		queries := []recordresults.Query{
			{Stream: "s"},
			{Stream: "s", After: 3},
			{Stream: "s", After: 2, To: 4000},
			{Stream: "s", Limit: 1},
			{Stream: "s", Limit: 1000},
			{Stream: "s", Limit: 2500},
			{Stream: "s", After: 6000},
			{Stream: "s", After: 7007},
			{Stream: "s", Sort: "score"},
			{Stream: "s", Sort: "-attempts", Limit: 3001},
			{Stream: "s", Sort: "host"},
			{Stream: "s", Text: "web"},
			{Stream: "s", Where: []recordresults.Filter{{Column: "attempts", Op: ">=", Value: "3"}}},
			{Stream: "s", From: jobEpoch, Until: jobEpoch.Add(time.Hour)},
		}
		formats := []recordresults.ExportOptions{
			{Format: recordresults.FormatNDJSON},
			{Format: recordresults.FormatCSV},
			{Format: recordresults.FormatCSV, CSVGuard: true},
			{Format: recordresults.FormatParquet},
		}
		for _, q := range queries {
			for _, o := range formats {
				want, wantN, _ := export(paged, q, o)
				got, gotN, progress := export(streamed, q, o)
				Expect(gotN).To(Equal(wantN), "%+v %+v", q, o)
				Expect(got).To(Equal(want), "%+v %+v", q, o)
				if gotN > 0 {
					Expect(progress).NotTo(BeEmpty())
					Expect(progress[len(progress)-1]).To(Equal(gotN))
				}
			}
		}
		all, n, _ := export(streamed, recordresults.Query{Stream: "s"}, recordresults.ExportOptions{})
		Expect(n).To(BeEquivalentTo(7007))
		Expect(bytes.Count(all, []byte("\n"))).To(Equal(7007))
		Expect(string(all[:bytes.IndexByte(all, '\n')])).To(Equal(`{"_seq":1,"at":null,"attempts":null,"detail":{"a":"<","b":[1,2.5e300]},"host":"\u003cscript\u003e\"x\"\u0026\u003c/script\u003e","id":1,"ok":null,"score":1e+21,"state":"naïve\u2028é\n\u0000"}`))
	})

	It("stops at the first failed write, with the writer's error", func() {
		_, err := streamed.ExportWith(ctx, &failingWriter{n: 200 << 10}, recordresults.Query{Stream: "s"}, recordresults.ExportOptions{})
		Expect(errors.Is(err, errWriteFailed)).To(BeTrue(), "%v", err)
	})

	It("refuses a stream recreated between its pages", func() {
		// A limit of pages: the first page pins the generation, then the
		// stream is deleted and appended again before the next.
		var out bytes.Buffer
		o := recordresults.ExportOptions{Progress: func(n int64) {
			if n == recordresults.MaxPageSize {
				Expect(st.Backend().Delete(ctx, "s")).To(Succeed())
				_, err := st.Backend().Append(ctx, "s", "jobs", []recordstore.Row{{"id": 1}})
				Expect(err).NotTo(HaveOccurred())
			}
		}}
		_, err := streamed.ExportWith(ctx, &out, recordresults.Query{Stream: "s"}, o)
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("recreated"))
	})

	It("holds no read transaction while its output waits: a stalled reader of the output never keeps the WAL from being reset", func() {
		w := &stallingWriter{stalled: make(chan struct{}), release: make(chan struct{})}
		var released sync.Once
		release := func() { released.Do(func() { close(w.release) }) }
		DeferCleanup(release) // before the store's close, which waits for the export
		done := make(chan error, 1)
		go func() {
			_, err := streamed.ExportWith(ctx, w, recordresults.Query{Stream: "s"}, recordresults.ExportOptions{})
			done <- err
		}()
		Eventually(w.stalled).Should(BeClosed())
		// A truncating checkpoint completes only when no reader holds a
		// snapshot of the WAL.
		db, err := sql.Open("sqlite", sqlite.LivePath(path))
		Expect(err).NotTo(HaveOccurred())
		defer db.Close()
		// The next page may still be being read (into memory) as the
		// first one waits to be written; once read, nothing is held.
		Eventually(func(g Gomega) {
			var busy, logFrames, moved int
			g.Expect(db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &moved)).To(Succeed())
			g.Expect(busy).To(Equal(0), "the export holds a read transaction while its writer waits")
		}, 5*time.Second, 20*time.Millisecond).Should(Succeed())
		release()
		Expect(<-done).To(Succeed())
		want, _, _ := export(paged, recordresults.Query{Stream: "s"}, recordresults.ExportOptions{})
		Expect(w.out.Bytes()).To(Equal(want))
	})

	It("ends at a canceled context", func() {
		c, cancel := context.WithCancel(ctx)
		cancel()
		var out bytes.Buffer
		_, err := streamed.ExportWith(c, &out, recordresults.Query{Stream: "s"}, recordresults.ExportOptions{})
		Expect(errors.Is(err, context.Canceled)).To(BeTrue(), "%v", err)
	})
})
