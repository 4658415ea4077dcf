// Specs for loadStream when its context ends: the read fails with the
// context's error, not with database/sql's "statement is closed".

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"runtime"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("loadStream", func() {
	ctx := context.Background()

	It("fails with the context's error when the context ended the transaction its statement belongs to", func() {
		b, err := Open(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(b.Close)
		_, err = b.DeclareKind(ctx, recordstore.Kind{Name: "ev", Columns: []recordstore.Column{{Name: "v", Type: recordstore.TypeString}}})
		Expect(err).NotTo(HaveOccurred())
		_, err = b.Append(ctx, "s", "ev", []recordstore.Row{{"v": "a"}})
		Expect(err).NotTo(HaveOccurred())

		conn, err := b.r.Conn(ctx)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(conn.Close)
		c, cancel := context.WithCancelCause(ctx)
		tx, err := conn.BeginTx(c, &sql.TxOptions{ReadOnly: true})
		Expect(err).NotTo(HaveOccurred())
		st := tx.StmtContext(c, b.rs.getStream)
		_, found, err := loadStream(c, st, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue())

		// database/sql rolls the transaction back on its own once c ends,
		// closing st: the state a read is in when its caller stops it
		// between preparing and running it.
		stop := errors.New("the caller stopped")
		cancel(stop)
		Eventually(func() error {
			var one int
			return tx.QueryRowContext(ctx, "SELECT 1").Scan(&one)
		}).Should(MatchError(sql.ErrTxDone))
		_, _, err = loadStream(c, st, "s")
		Expect(err).To(MatchError(stop))
		Expect(err).To(MatchError(ContainSubstring("read stream s")))
		Expect(err).NotTo(MatchError(ContainSubstring("statement is closed")))
	})
})

var _ = Describe("A read whose context ends while it runs", func() {
	ctx := context.Background()

	It("fails with the context's error, never with database/sql's, in Scan, QueryRows and StreamRows", func() {
		b, err := Open(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(b.Close)
		_, err = b.DeclareKind(ctx, recordstore.Kind{Name: "ev", Columns: []recordstore.Column{{Name: "v", Type: recordstore.TypeString}}})
		Expect(err).NotTo(HaveOccurred())
		rows := make([]recordstore.Row, 50)
		for i := range rows {
			rows[i] = recordstore.Row{"v": "a"}
		}
		_, err = b.Append(ctx, "s", "ev", rows)
		Expect(err).NotTo(HaveOccurred())

		reads := map[string]func(context.Context) error{
			"Scan": func(c context.Context) error {
				_, err := b.Scan(c, "s", recordstore.ScanOptions{Limit: 20})
				return err
			},
			"QueryRows": func(c context.Context) error {
				_, _, err := b.QueryRows(c, "s", recordstore.RowQuery{Limit: 20})
				return err
			},
			"StreamRows": func(c context.Context) error {
				return b.StreamRows(c, "s", recordstore.RowQuery{Limit: 20},
					func(recordstore.Meta, *recordstore.Kind) error { return nil },
					func(int64, []any) error { return nil })
			},
		}
		stopped := errors.New("the caller stopped")
		for name, read := range reads {
			cancelled := 0
			for i := range 3000 {
				c, cancel := context.WithCancelCause(ctx)
				go cancel(stopped) // at some moment of the read, or before it
				if i%2 == 0 {
					runtime.Gosched()
				}
				err := read(c)
				cancel(nil)
				if err == nil {
					continue
				}
				cancelled++
				Expect(err).To(Or(MatchError(stopped), MatchError(context.Canceled)), "%s, read %d", name, i)
				Expect(err.Error()).NotTo(ContainSubstring("sql: "), "%s, read %d", name, i)
			}
			Expect(cancelled).To(BeNumerically(">", 0), "%s: no read was cut short", name)
		}
	})
})

var _ = Describe("An append whose context ends while it runs", func() {
	ctx := context.Background()

	It("is stored whole or not at all, fails with the context's error, and the writer goes on", func() {
		b, err := Open(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(b.Close)
		_, err = b.DeclareKind(ctx, recordstore.Kind{Name: "ev", Columns: []recordstore.Column{{Name: "v", Type: recordstore.TypeString}}})
		Expect(err).NotTo(HaveOccurred())
		rows := make([]recordstore.Row, 20)
		for i := range rows {
			rows[i] = recordstore.Row{"v": "a"}
		}
		stopped := errors.New("the caller stopped")
		var stored, cut int64
		for i := range 1500 {
			c, cancel := context.WithCancelCause(ctx)
			go cancel(stopped)
			if i%2 == 0 {
				runtime.Gosched()
			}
			_, err := b.Append(c, "s", "ev", rows)
			cancel(nil)
			if err == nil {
				stored++
				continue
			}
			cut++
			Expect(err).To(Or(MatchError(stopped), MatchError(context.Canceled)), "append %d", i)
			Expect(err).NotTo(MatchError(ErrWriterFailed), "append %d", i)
		}
		Expect(cut).To(BeNumerically(">", 0), "no append was cut short")
		_, err = b.Append(ctx, "s", "ev", rows)
		Expect(err).NotTo(HaveOccurred(), "the writer goes on")
		m, err := b.Meta(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect(m.HighSeq).To(Equal((stored + 1) * int64(len(rows))))
	})
})
