// Specs for entries of incoming/ that are not batches: the owner sets them
// aside in failed/ and goes on ingesting the batches beside them.

package owner_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("entries of incoming/ that are not batches", func() {
	It("are moved to failed/ as they are, and the batches beside them are applied", func() {
		path := storePath()
		incoming := filepath.Join(spoolDir(path).Path(spool.StateIncoming, ""))
		Expect(os.WriteFile(filepath.Join(incoming, "notes.txt"), []byte("left by an editor"), 0o600)).To(Succeed())
		Expect(os.Mkdir(filepath.Join(incoming, "not-a-batch"), 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(incoming, "not-a-batch", "x"), []byte("x"), 0o600)).To(Succeed())
		n := handBatch(path, "s", []recordstore.Row{{"k": "beside"}}, nil)

		logs := gbytes.NewBuffer() // safe for the logger's goroutines
		s := openInProcess(path, func(o *owner.Options[*sqlite.Backend]) {
			o.Heartbeat = 20 * time.Millisecond
			o.Logger = slog.New(slog.NewTextHandler(logs, nil))
		})
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		Eventually(func() []string { return entries(path, spool.StateFailed) }, wait, 10*time.Millisecond).
			Should(ConsistOf("notes.txt", "not-a-batch"))
		Expect(entries(path, spool.StateIncoming)).NotTo(ContainElements("notes.txt", "not-a-batch"))
		data, err := os.ReadFile(filepath.Join(spoolDir(path).Path(spool.StateFailed, "not-a-batch"), "x"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(data)).To(Equal("x"), "moved as it was")
		Eventually(func() recordstore.BatchOutcome { return outcome(s, n) }, wait, 5*time.Millisecond).
			Should(Equal(recordstore.OutcomeCommitted))
		Expect(streamKeys(s, "s")).To(Equal([]string{"beside"}))
		// Each move is logged just after it is made: wait for the line.
		Eventually(func() string { return string(logs.Contents()) }, wait, 5*time.Millisecond).
			Should(And(ContainSubstring("entry=notes.txt"), ContainSubstring("entry=not-a-batch")), "each move is logged")
	})
})
