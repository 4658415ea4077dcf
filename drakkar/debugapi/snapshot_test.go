// Specs of debugapi.Snapshot on its own: a WAL database whose last rows
// are still in its -wal, held open by a writer.

package debugapi_test

import (
	"database/sql"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/debugapi"
)

// walSource creates a WAL database in dir with rows rows, the last half
// of them committed to its -wal only (checkpoints off); its writer stays
// open until cleanup.
func walSource(dir string, rows int) string {
	src := filepath.Join(dir, "live.db")
	w, err := sql.Open("sqlite", "file:"+src+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	Expect(err).NotTo(HaveOccurred())
	w.SetMaxOpenConns(1)
	DeferCleanup(w.Close)
	_, err = w.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	Expect(err).NotTo(HaveOccurred())
	for i := range rows {
		_, err = w.Exec("INSERT INTO t (v) VALUES (?)", string(rune('a'+i%26)))
		Expect(err).NotTo(HaveOccurred())
		if i == rows/2 {
			_, err = w.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
			Expect(err).NotTo(HaveOccurred())
		}
	}
	fi, err := os.Stat(src + "-wal")
	Expect(err).NotTo(HaveOccurred())
	Expect(fi.Size()).To(BeNumerically(">", 0), "rows are in the -wal")
	return src
}

var _ = Describe("Snapshot", func() {
	It("copies the rows still in the -wal into one 0600 rollback-journal file with nothing beside it", func() {
		dir := GinkgoT().TempDir()
		src := walSource(dir, 40)
		out := GinkgoT().TempDir()
		dst := filepath.Join(out, "snap.db")
		Expect(debugapi.Snapshot(ctx, src, dst)).To(Succeed())
		Expect(dirNames(out)).To(Equal([]string{"snap.db"}), "no -journal, -wal or -shm left")
		fi, err := os.Stat(dst)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		head := make([]byte, 20)
		f, err := os.Open(dst)
		Expect(err).NotTo(HaveOccurred())
		_, err = f.ReadAt(head, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Close()).To(Succeed())
		Expect(head[18:20]).To(Equal([]byte{1, 1}), "the header says rollback journal")
		db, err := sql.Open("sqlite", "file:"+dst+"?mode=ro")
		Expect(err).NotTo(HaveOccurred())
		defer db.Close()
		var ok string
		Expect(db.QueryRow("PRAGMA integrity_check").Scan(&ok)).To(Succeed())
		Expect(ok).To(Equal("ok"))
		var n, maxID int
		Expect(db.QueryRow("SELECT count(*), max(id) FROM t").Scan(&n, &maxID)).To(Succeed())
		Expect([]int{n, maxID}).To(Equal([]int{40, 40}))
	})

	It("refuses a dst that exists and leaves it as it was", func() {
		dir := GinkgoT().TempDir()
		src := walSource(dir, 4)
		dst := filepath.Join(GinkgoT().TempDir(), "snap.db")
		Expect(os.WriteFile(dst, []byte("mine"), 0o600)).To(Succeed())
		Expect(debugapi.Snapshot(ctx, src, dst)).To(MatchError(os.ErrExist))
		Expect(os.ReadFile(dst)).To(Equal([]byte("mine")))
	})

	It("removes dst when the source cannot be copied", func() {
		out := GinkgoT().TempDir()
		dst := filepath.Join(out, "snap.db")
		Expect(debugapi.Snapshot(ctx, filepath.Join(out, "missing.db"), dst)).NotTo(Succeed())
		Expect(dirNames(out)).To(BeEmpty())
	})
})
