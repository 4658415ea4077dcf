// Specs of Store.Rotate and of stores with caller-named live files: the
// state file follows the live file, non-owners write through the spool
// only, and a batch is applied once across the whole sequence of files —
// while the owner rotates, and when it is killed between a commit and the
// batch's removal from the spool.

package owner_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
	rt "github.com/fb46ecde/records/recordstoretest"
)

// rotating is a store with caller-named live files in a fresh folder.
type rotating struct{ dir, path string }

func newRotating() rotating {
	dir := filepath.Join(GinkgoT().TempDir(), "storage")
	return rotating{dir: dir, path: filepath.Join(dir, "w1.records")}
}

func (r rotating) file(n int) string { return filepath.Join(r.dir, fmt.Sprintf("w1-%03d.db", n)) }

// childOpts are the fast child options of a store of caller-named files
// (the live file matters to the owner only).
func (r rotating) childOpts(live string) *rt.StoreOptions {
	return with(func(o *rt.StoreOptions) { o.LiveFile = live })
}

// openRotatingHere opens the store in this process with live as its live
// file, carrying the ledger of carry; it is closed at the end of the spec.
func openRotatingHere(path, live string, carry ...string) *callerNamedStore {
	GinkgoHelper()
	return openRotatingWith(path, live, carry, owner.Events{})
}

// openRotatingWith is openRotatingHere with event callbacks.
func openRotatingWith(path, live string, carry []string, ev owner.Events) *callerNamedStore {
	GinkgoHelper()
	s, err := owner.Open(context.Background(), owner.Options[callerNamed]{
		Path: path, Open: callerNamedOpener(path, live, carry), CatalogVersion: sqlite.CatalogVersion,
		PollMin: 5 * time.Millisecond, PollMax: 100 * time.Millisecond, NoPromotion: true, StartWait: wait,
		Events: ev,
	})
	Expect(err).NotTo(HaveOccurred(), "open the store in the test process")
	DeferCleanup(func() { Expect(s.Close()).To(Succeed()) })
	return s
}

// keysIn counts the event rows of the file at path by key k (none when the
// file has no event table).
func keysIn(path string) map[string]int {
	GinkgoHelper()
	db, err := sql.Open("sqlite", path)
	Expect(err).NotTo(HaveOccurred())
	defer db.Close()
	out := map[string]int{}
	var n int
	Expect(db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'event'`).Scan(&n)).To(Succeed())
	if n == 0 {
		return out
	}
	rows, err := db.Query(`SELECT k FROM event`)
	Expect(err).NotTo(HaveOccurred())
	defer rows.Close()
	for rows.Next() {
		var k string
		Expect(rows.Scan(&k)).To(Succeed())
		out[k]++
	}
	Expect(rows.Err()).NotTo(HaveOccurred())
	return out
}

// keyedEventBatch is a batch appending rows with keys keys to stream s.
func keyedEventBatch(keys ...string) recordstore.Batch {
	GinkgoHelper()
	k := eventKind()
	e := recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "s", Kind: k.Name}
	for _, key := range keys {
		v, err := k.Normalize(recordstore.Row{"k": key})
		Expect(err).NotTo(HaveOccurred())
		e.Rows = append(e.Rows, v)
	}
	return recordstore.Batch{Schemas: []recordstore.Kind{*k}, Entries: []recordstore.BatchEntry{e}}
}

// publishGenSchema publishes generated rows with the event kind's schema,
// which a submit-only producer cannot read from the store.
func publishGenSchema(prefix string, n int) rt.Step {
	return rt.Step{Op: rt.OpPublish, Stream: "s", Kind: "event", Schema: eventKind(), Gen: &rt.Gen{Prefix: prefix, From: 0, Count: n}}
}

// plainTarget hides the SQLite backend's Rotate.
type plainTarget struct{ owner.Target }

var _ = Describe("Rotate", func() {
	It("switches the owner's live file, names it in the state file, and ingests on into it", func() {
		r := newRotating()
		s := openRotatingHere(r.path, r.file(1))
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		ctx := context.Background()
		id, err := s.Publish(ctx, keyedEventBatch("a"))
		Expect(err).NotTo(HaveOccurred())
		_, err = s.Await(ctx, id)
		Expect(err).NotTo(HaveOccurred())

		old, err := s.Rotate(ctx, r.file(2))
		Expect(err).NotTo(HaveOccurred())
		Expect(old).To(Equal(r.file(1)))
		Expect(s.LiveFile()).To(Equal(r.file(2)))
		st, err := owner.ReadState(s.Paths().State)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Store).To(Equal(r.file(2)))
		Expect(st.Phase).To(Equal(owner.PhaseReady))
		Expect(incoming(r.path)).To(BeEmpty(), "applied batches left incoming/ before the switch")

		id, err = s.Publish(ctx, keyedEventBatch("b"))
		Expect(err).NotTo(HaveOccurred())
		res, err := s.Await(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(keysIn(r.file(1))).To(Equal(map[string]int{"a": 1}))
		Expect(keysIn(r.file(2))).To(Equal(map[string]int{"b": 1}))
	})

	It("is refused with ErrNoRotation when the backend cannot rotate", func() {
		r := newRotating()
		s, err := owner.Open(context.Background(), owner.Options[plainTarget]{
			Path: r.path, CatalogVersion: sqlite.CatalogVersion,
			Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (plainTarget, error) {
				b, err := sqlite.Open(ctx, r.path, sqlite.Options{LiveFile: r.file(1), SweepInterval: -1})
				return plainTarget{b}, err
			},
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(s.Close)
		_, err = s.Rotate(context.Background(), r.file(2))
		Expect(err).To(MatchError(owner.ErrNoRotation))
		Expect(s.LiveFile()).To(Equal(r.file(1)))
	})

	It("is refused with ErrNotOwner in a process that does not own the store", Label("integration"), func() {
		r := newRotating()
		own := startOwner(r.path, r.childOpts(r.file(1)), nil)
		s := openRotatingHere(r.path, r.file(9))
		Expect(s.Role()).To(Equal(owner.RoleNonOwner))
		_, err := s.Rotate(context.Background(), r.file(2))
		Expect(err).To(MatchError(owner.ErrNotOwner))
		Expect(r.file(2)).NotTo(BeAnExistingFile())
		Expect(r.file(9)).NotTo(BeAnExistingFile(), "a non-owner opens no live file")
		Expect(own.Release()).To(Succeed())
		own.MustFinish(wait)
	})

	It("applies every batch of a producer in another process exactly once while the owner rotates", Label("integration"), func() {
		r := newRotating()
		applied := make(chan struct{}, 1)
		s := openRotatingWith(r.path, r.file(0), nil, owner.Events{Batch: func(recordstore.BatchResult) {
			select {
			case applied <- struct{}{}:
			default:
			}
		}})
		_, err := s.Backend().DeclareKind(context.Background(), *eventKind())
		Expect(err).NotTo(HaveOccurred())
		const batches, rows = 30, 20
		steps := []rt.Step{}
		for i := 0; i < batches; i++ {
			steps = append(steps, publishGenSchema(fmt.Sprintf("p%02d-", i), rows))
		}
		steps = append(steps, awaitAll().Named("await"), closeStore())
		p := startProducer(r.path, r.childOpts(r.file(99)), nil, steps...)

		// Rotate after every batch applied (while the next ones wait in
		// incoming/ or are being published) until the producer has every
		// result.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		files := []string{r.file(0)}
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			for n := 1; ; n++ {
				select {
				case <-stop:
					return
				case <-applied:
				}
				old, err := s.Rotate(context.Background(), r.file(n))
				Expect(err).NotTo(HaveOccurred())
				Expect(old).To(Equal(files[len(files)-1]))
				files = append(files, r.file(n))
			}
		}()
		var results []recordstore.BatchResult
		Expect(p.MustStepNamed("await", wait).Decode(&results)).To(Succeed())
		close(stop)
		wg.Wait()
		p.MustFinish(wait)

		Expect(results).To(HaveLen(batches))
		for _, res := range results {
			Expect(res.Outcome).To(Equal(recordstore.OutcomeCommitted))
			Expect(res.Entries[0].Append.Appended).To(BeEquivalentTo(rows))
		}
		Expect(len(files)).To(BeNumerically(">", 1), "the owner rotated")
		total := map[string]int{}
		holding := 0
		for _, f := range files {
			keys := keysIn(f)
			if len(keys) > 0 {
				holding++
			}
			for k, n := range keys {
				total[k] += n
			}
		}
		GinkgoWriter.Printf("%d files, %d of them hold rows\n", len(files), holding)
		want := map[string]int{}
		for i := 0; i < batches; i++ {
			for _, k := range genKeys(fmt.Sprintf("p%02d-", i), 0, rows) {
				want[k] = 1
			}
		}
		Expect(total).To(Equal(want), "every acknowledged row exactly once across the files")
	})

	It("never applies again, in a new live file carrying the old one's ledger, a batch whose owner was killed after its commit", Label("crash"), func() {
		r := newRotating()
		own := startOwner(r.path, r.childOpts(r.file(1)), []rt.FailpointRule{failpoint(owner.FailAfterLedger, rt.ActKill)})
		p := startProducer(r.path, r.childOpts(r.file(99)), nil, publishGenSchema("c", 10), awaitAll().Named("await"), closeStore())
		fp := own.MustEvent(rt.EventFailpoint, wait)
		Expect(fp.Name).To(Equal(owner.FailAfterLedger))
		_, err := own.Wait(wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(own.Killed()).To(BeTrue())
		Expect(incoming(r.path)).To(HaveLen(1), "the committed batch is still in incoming/")
		Expect(keysIn(r.file(1))).To(HaveLen(10))

		s := openRotatingHere(r.path, r.file(2), r.file(1))
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		var results []recordstore.BatchResult
		Expect(p.MustStepNamed("await", wait).Decode(&results)).To(Succeed())
		p.MustFinish(wait)
		Expect(results).To(HaveLen(1))
		Expect(results[0].Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(results[0].Epoch).To(BeNumerically("<", s.Backend().Epoch()), "the result the killed owner recorded")
		Expect(results[0].Entries[0].Append.Appended).To(BeEquivalentTo(10))
		Eventually(func() int { return len(incoming(r.path)) }, wait).Should(BeZero(), "the new owner moved the re-seen batch to trash")
		Expect(keysIn(r.file(2))).To(BeEmpty(), "the new file holds none of its rows")
		counts := keysIn(r.file(1))
		Expect(counts).To(HaveLen(10))
		for _, k := range genKeys("c", 0, 10) {
			Expect(counts).To(HaveKeyWithValue(k, 1))
		}
	})
})
