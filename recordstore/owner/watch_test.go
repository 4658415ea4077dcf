// Specs for the watch of incoming/ (Linux): a batch's arrival starts a
// drain with no poke and no polling, and a waiting ingest request still
// drains when the watch misses an arrival.

package owner_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("the watch of incoming/", func() {
	BeforeEach(func() {
		if runtime.GOOS != "linux" {
			Skip("incoming/ is watched on Linux only")
		}
	})
	// An hour between polls: only the watch, or a request, can start a
	// drain while a spec runs.
	noPolling := func(o *owner.Options[*sqlite.Backend]) { o.PollMin, o.PollMax = time.Hour, time.Hour }

	It("applies a batch as soon as it is moved into incoming/, with no poke and no polling", func() {
		path := storePath()
		s := openInProcess(path, noPolling)
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		n := handBatch(path, "s", []recordstore.Row{{"k": "watched"}}, nil)
		Eventually(func() recordstore.BatchOutcome { return outcome(s, n) }, wait, 5*time.Millisecond).
			Should(Equal(recordstore.OutcomeCommitted))
		Expect(streamKeys(s, "s")).To(Equal([]string{"watched"}))
	})

	It("answers a waiting ingest request when incoming/ was replaced under the watch", func() {
		path := storePath()
		s := openInProcess(path, noPolling)
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		incoming := filepath.Join(spool.PathFor(path), string(spool.StateIncoming))
		Expect(os.Rename(incoming, incoming+".old")).To(Succeed())
		Expect(os.Mkdir(incoming, 0o700)).To(Succeed())
		n := handBatch(path, "s", []recordstore.Row{{"k": "unwatched"}}, nil)
		Consistently(func() recordstore.BatchOutcome { return outcome(s, n) }, 300*time.Millisecond, 20*time.Millisecond).
			Should(BeEmpty(), "the watch follows the old folder, so nothing drains")

		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		resp, err := owner.Call(ctx, s.Paths().Socket, owner.Request{Action: owner.ActionIngest, IDs: []string{n.ID}, Wait: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Results).To(HaveLen(1))
		Expect(resp.Results[0].Done).To(BeTrue(), "the request drained itself")
		Expect(resp.Results[0].Result.Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(streamKeys(s, "s")).To(Equal([]string{"unwatched"}))
	})
})
