// Specs that look inside the backend: the pragmas of each pool, and reads
// proceeding while the writer holds a transaction open.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("connection pools", func() {
	var b *Backend
	ctx := context.Background()
	BeforeEach(func() {
		var err error
		b, err = Open(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), Options{SweepInterval: -1, ReadConns: 2})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(b.Close)
		_, err = b.DeclareKind(ctx, recordstore.Kind{Name: "ev", Columns: []recordstore.Column{{Name: "v", Type: recordstore.TypeString}}})
		Expect(err).NotTo(HaveOccurred())
	})

	pragma := func(db *sql.DB, name string) int64 {
		var v int64
		Expect(db.QueryRow("PRAGMA " + name).Scan(&v)).To(Succeed())
		return v
	}

	It("sets synchronous=NORMAL and busy_timeout on both pools, query_only on readers", func() {
		Expect(pragma(b.w, "synchronous")).To(BeEquivalentTo(1))
		Expect(pragma(b.r, "synchronous")).To(BeEquivalentTo(1))
		Expect(pragma(b.w, "busy_timeout")).To(BeEquivalentTo(5000))
		Expect(pragma(b.r, "busy_timeout")).To(BeEquivalentTo(5000))
		Expect(pragma(b.w, "query_only")).To(BeZero())
		Expect(pragma(b.r, "query_only")).To(BeEquivalentTo(1))
		_, err := b.r.Exec(`DELETE FROM record_meta`)
		Expect(err).To(HaveOccurred())
	})

	It("serves reads while a write transaction is open, and shows it once committed", func() {
		_, err := b.Append(ctx, "s", "ev", []recordstore.Row{{"v": "committed"}})
		Expect(err).NotTo(HaveOccurred())

		inTx := make(chan struct{})
		release := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- b.writeTx(ctx, func(tx *sql.Tx, now time.Time) error {
				t := b.tables.get("ev")
				_, err := b.appendTx(ctx, tx, t, "s", readyFeed([]recordstore.Values{{"pending"}}), now)
				close(inTx)
				<-release
				return err
			})
		}()
		<-inTx
		m, err := b.Meta(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect(m.HighSeq).To(BeEquivalentTo(1))
		recs, err := b.Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(1))
		_, err = b.Streams(ctx, "")
		Expect(err).NotTo(HaveOccurred())
		_, err = b.Kinds(ctx)
		Expect(err).NotTo(HaveOccurred())

		close(release)
		Expect(<-done).To(Succeed())
		recs, err = b.Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(2))
		Expect(recs[1].Values["v"]).To(Equal("pending"))
	})

	It("makes a waiting writer give up when its context ends", func() {
		Expect(b.lockWrite(ctx)).To(Succeed())
		defer b.unlockWrite()
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := b.Append(cctx, "s", "ev", []recordstore.Row{{"v": "x"}})
		Expect(err).To(MatchError(context.Canceled))
	})

	It("stops writing for good after an I/O error, while reads go on", func() {
		_, err := b.Append(ctx, "s", "ev", []recordstore.Row{{"v": "before"}})
		Expect(err).NotTo(HaveOccurred())
		b.failed = errors.New("disk I/O error (fsync)")
		_, err = b.Append(ctx, "s", "ev", []recordstore.Row{{"v": "after"}})
		Expect(errors.Is(err, ErrWriterFailed)).To(BeTrue(), "%v", err)
		_, err = b.Seal(ctx, "s")
		Expect(errors.Is(err, ErrWriterFailed)).To(BeTrue(), "%v", err)
		_, err = b.AppendBatch(ctx, recordstore.Batch{ID: "b1", Entries: []recordstore.BatchEntry{
			{Op: recordstore.OpAppend, Stream: "s", Kind: "ev", Rows: []recordstore.Values{{"after"}}}}})
		Expect(errors.Is(err, ErrWriterFailed)).To(BeTrue(), "%v", err)
		recs, err := b.Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(1))
	})
})
