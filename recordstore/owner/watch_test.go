// Specs for the watch of incoming/ (Linux): a batch's arrival starts a
// drain with no poke and no polling, and a waiting ingest request still
// drains when the watch misses an arrival, also after waiting for another
// drain that did not see its batch.

package owner_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// heldBackend is the SQLite backend whose AppendBatch, given a batch with
// an entry for stream "gated", says so on entered and waits for gate to
// close.
type heldBackend struct {
	*sqlite.Backend
	entered chan struct{}
	gate    chan struct{}
	once    sync.Once
}

func (g *heldBackend) AppendBatch(ctx context.Context, batches ...recordstore.Batch) ([]recordstore.BatchResult, error) {
	for _, b := range batches {
		for _, e := range b.Entries {
			if e.Stream == "gated" {
				g.once.Do(func() { close(g.entered) })
				<-g.gate
			}
		}
	}
	return g.Backend.AppendBatch(ctx, batches...)
}

// ingestWait asks the owner at socket for the outcome of batch n, waiting
// up to d.
func ingestWait(socket string, n spool.BatchName, d time.Duration) (owner.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return owner.Call(ctx, socket, owner.Request{Action: owner.ActionIngest, IDs: []string{n.ID}, Wait: true})
}

// replaceIncoming puts a new incoming/ in the place of the watched one.
func replaceIncoming(path string) {
	GinkgoHelper()
	incoming := filepath.Join(spool.PathFor(path), string(spool.StateIncoming))
	Expect(os.Rename(incoming, incoming+".old")).To(Succeed())
	Expect(os.Mkdir(incoming, 0o700)).To(Succeed())
}

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
		replaceIncoming(path)
		n := handBatch(path, "s", []recordstore.Row{{"k": "unwatched"}}, nil)
		Consistently(func() recordstore.BatchOutcome { return outcome(s, n) }, 300*time.Millisecond, 20*time.Millisecond).
			Should(BeEmpty(), "the watch follows the old folder, so nothing drains")

		resp, err := ingestWait(s.Paths().Socket, n, wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Results).To(HaveLen(1))
		Expect(resp.Results[0].Done).To(BeTrue(), "the request drained itself")
		Expect(resp.Results[0].Result.Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(streamKeys(s, "s")).To(Equal([]string{"unwatched"}))
	})

	It("drains for a waiting request whose batch the drain it waited for did not see", func() {
		path := storePath()
		gb := &heldBackend{entered: make(chan struct{}), gate: make(chan struct{})}
		s, err := owner.Open(context.Background(), owner.Options[*heldBackend]{
			Path: path, CatalogVersion: sqlite.CatalogVersion, PollMin: time.Hour, PollMax: time.Hour, StartWait: wait,
			Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*heldBackend, error) {
				b, err := sqliteOpener(path)(ctx, readOnly, submit)
				gb.Backend = b
				return gb, err
			},
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(s.Close()).To(Succeed()) })
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		replaceIncoming(path)

		// A drain held inside AppendBatch, started by the request of a
		// first batch (the watch sees nothing).
		first := handBatch(path, "gated", []recordstore.Row{{"k": "first"}}, nil)
		firstDone := make(chan error, 1)
		go func() {
			_, err := ingestWait(s.Paths().Socket, first, wait)
			firstDone <- err
		}()
		Eventually(gb.entered, wait).Should(BeClosed())

		// A second batch arrives after that drain listed incoming/; its
		// request finds the drain running and waits for it to end.
		second := handBatch(path, "s", []recordstore.Row{{"k": "second"}}, nil)
		secondDone := make(chan owner.Response, 1)
		go func() {
			defer GinkgoRecover()
			resp, err := ingestWait(s.Paths().Socket, second, 5*time.Second)
			Expect(err).NotTo(HaveOccurred(), "answered well before the request's deadline")
			secondDone <- resp
		}()
		time.Sleep(200 * time.Millisecond) // let the request reach its wait; no assertion on time
		close(gb.gate)
		Eventually(firstDone, wait).Should(Receive(BeNil()))
		var resp owner.Response
		Eventually(secondDone, wait).Should(Receive(&resp))
		Expect(resp.Results).To(HaveLen(1))
		Expect(resp.Results[0].Done).To(BeTrue())
		Expect(resp.Results[0].Result.Outcome).To(Equal(recordstore.OutcomeCommitted))
	})
})
