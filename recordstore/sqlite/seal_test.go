// Specs of Seal: a sealed file holds exactly the caller's tables in
// journal_mode=DELETE with no -wal or -shm; a Seal that failed, was killed
// or found the file busy leaves a file a later Seal seals.

package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// sealChildEnv, in the environment of this test binary, makes it a child
// that seals the file it names and SIGKILLs itself at the step named by
// sealChildStepEnv.
const (
	sealChildEnv     = "RECORDS_SQLITE_SEAL_CHILD"
	sealChildStepEnv = "RECORDS_SQLITE_SEAL_CHILD_STEP"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(sealChildEnv); path != "" {
		step := os.Getenv(sealChildStepEnv)
		sqlite.SetSealStep(func(s string) error {
			if s == step {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
			return nil
		})
		_, err := sqlite.Seal(context.Background(), path, nil)
		if err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// liveWithRows makes a closed live file holding the events kind with n rows
// and a ledger, and returns its path.
func liveWithRows(n int) string {
	w := newWorker()
	live := w.file("1")
	b, err := sqlite.Open(ctx, w.path, sqlite.Options{LiveFile: live, SweepInterval: -1})
	Expect(err).NotTo(HaveOccurred())
	k := eventsKind()
	entry := appendEntry("s", k)
	for i := 0; i < n; i++ {
		entry.Rows = append(entry.Rows, normalized(k, recordstore.Row{"name": "r"})...)
	}
	mustBatch(b, newBatch([]recordstore.Kind{k}, entry))
	Expect(b.Close()).To(Succeed())
	return live
}

// expectSealed checks a sealed file: exactly the caller's table, journal
// mode DELETE in the header (bytes 18 and 19 are 1) and by PRAGMA, no
// -wal or -shm.
func expectSealed(path string) {
	Expect(tablesOf(path)).To(Equal([]string{"events"}))
	head := make([]byte, 20)
	f, err := os.Open(path)
	Expect(err).NotTo(HaveOccurred())
	_, err = f.ReadAt(head, 0)
	Expect(f.Close()).To(Succeed())
	Expect(err).NotTo(HaveOccurred())
	Expect(head[18:20]).To(Equal([]byte{1, 1}), "file format read/write versions: legacy journal, not WAL")
	db, err := sql.Open("sqlite", path)
	Expect(err).NotTo(HaveOccurred())
	var mode string
	Expect(db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)).To(Succeed())
	Expect(db.Close()).To(Succeed())
	Expect(mode).To(Equal("delete"))
	for _, s := range []string{"-wal", "-shm", "-journal"} {
		_, err := os.Stat(path + s)
		Expect(os.IsNotExist(err)).To(BeTrue(), path+s)
	}
}

var _ = Describe("Seal", func() {
	It("leaves exactly the caller's tables in journal mode DELETE, no sidecars, and returns their rows and size", func() {
		live := liveWithRows(3)
		var inspected int64
		stats, err := sqlite.Seal(ctx, live, func(ctx context.Context, conn *sql.Conn) error {
			return conn.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&inspected)
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(inspected).To(Equal(int64(3)), "inspect runs on the sealed file's connection")
		Expect(stats.Tables).To(Equal(map[string]int64{"events": 3}))
		fi, err := os.Stat(live)
		Expect(err).NotTo(HaveOccurred())
		Expect(stats.SizeBytes).To(Equal(fi.Size()))
		expectSealed(live)
	})

	It("succeeds again on a sealed file with the same statistics", func() {
		live := liveWithRows(2)
		first, err := sqlite.Seal(ctx, live, nil)
		Expect(err).NotTo(HaveOccurred())
		second, err := sqlite.Seal(ctx, live, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(second).To(Equal(first))
		expectSealed(live)
	})

	It("fails with ErrNotFound on a missing file and creates nothing", func() {
		path := newWorker().file("none")
		_, err := sqlite.Seal(ctx, path, nil)
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		_, err = os.Stat(path)
		Expect(os.IsNotExist(err)).To(BeTrue())
	})

	It("fails with ErrSealBusy while another connection holds the file, and seals once it is free", func() {
		live := liveWithRows(1)
		other, err := sql.Open("sqlite", live)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(other.Close)
		conn, err := other.Conn(ctx)
		Expect(err).NotTo(HaveOccurred())
		var mode string
		Expect(conn.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode)).To(Succeed())
		Expect(mode).To(Equal("wal"))
		_, err = sqlite.Seal(ctx, live, nil)
		Expect(err).To(MatchError(sqlite.ErrSealBusy))
		Expect(conn.Close()).To(Succeed())
		Expect(other.Close()).To(Succeed())
		stats, err := sqlite.Seal(ctx, live, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(stats.Tables).To(Equal(map[string]int64{"events": 1}))
		expectSealed(live)
	})

	DescribeTable("a Seal that fails at a step leaves a file a later Seal seals",
		func(step string) {
			live := liveWithRows(2)
			boom := errors.New("injected")
			restore := sqlite.SetSealStep(func(s string) error {
				if s == step {
					return boom
				}
				return nil
			})
			_, err := sqlite.Seal(ctx, live, nil)
			restore()
			Expect(err).To(MatchError(boom))
			stats, err := sqlite.Seal(ctx, live, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(stats.Tables).To(Equal(map[string]int64{"events": 2}))
			expectSealed(live)
		},
		Entry("after the drop, before the journal switch", "dropped"),
		Entry("after the journal switch", "journal"),
		Entry("after the close", "closed"),
	)

	DescribeTable("a Seal killed by SIGKILL at a step leaves a file a later Seal seals", Label("crash"),
		func(step string) {
			live := liveWithRows(2)
			exe, err := os.Executable()
			Expect(err).NotTo(HaveOccurred())
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), sealChildEnv+"="+live, sealChildStepEnv+"="+step)
			err = cmd.Run()
			var exit *exec.ExitError
			Expect(errors.As(err, &exit)).To(BeTrue(), "the child was killed")
			Expect(exit.Sys().(syscall.WaitStatus).Signal()).To(Equal(syscall.SIGKILL))
			stats, err := sqlite.Seal(ctx, live, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(stats.Tables).To(Equal(map[string]int64{"events": 2}))
			expectSealed(live)
		},
		Entry("between the drop and the journal switch", "dropped"),
		Entry("after the journal switch", "journal"),
	)
})
