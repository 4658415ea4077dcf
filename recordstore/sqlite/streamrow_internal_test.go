// Specs for loadStream when its context ends: the read fails with the
// context's error, not with database/sql's "statement is closed".

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"

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
