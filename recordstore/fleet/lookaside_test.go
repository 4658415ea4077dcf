// The configuration the fleet's specs and benchmarks run in: SQLite's
// lookaside off (see TestMain).

package fleet_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"

	msqlite "modernc.org/sqlite"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("this test binary", func() {
	It("runs with SQLite's lookaside off, so a connection's small allocations use none", func() {
		if os.Getenv(defaultsEnv) == "1" {
			Skip(defaultsEnv + "=1 keeps SQLite's defaults")
		}
		db, err := sql.Open("sqlite", filepath.Join(GinkgoT().TempDir(), "x.db"))
		Expect(err).NotTo(HaveOccurred())
		defer db.Close()
		_, err = db.Exec(`CREATE TABLE t (a TEXT PRIMARY KEY, b INTEGER); CREATE INDEX t_b ON t(b); INSERT INTO t VALUES ('x', 1)`)
		Expect(err).NotTo(HaveOccurred())
		c, err := db.Conn(context.Background())
		Expect(err).NotTo(HaveOccurred())
		defer c.Close()
		var n int
		Expect(c.QueryRowContext(context.Background(), `SELECT count(*) FROM t WHERE b = 1`).Scan(&n)).To(Succeed())
		var high int
		Expect(c.Raw(func(dc any) error {
			_, high, err = dc.(msqlite.DBStatus).Status(msqlite.DBStatusLookasideUsed, false)
			return err
		})).To(Succeed())
		Expect(high).To(BeZero(), "lookaside slots used")
	})
})
