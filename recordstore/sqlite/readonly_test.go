// Specs for read-only mode, Promote, the epoch and the change feed: a
// writable backend plays the owner and a read-only one on the same file
// submits to it through a Submit function, in one process.

package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// owner applies what a read-only backend submits, as the store's owner
// would: a fresh id and producer seq per batch, then AppendBatch.
type owner struct {
	b       *sqlite.Backend
	mu      sync.Mutex
	batches []recordstore.Batch // what was submitted, in order
	before  func()              // runs before each batch is applied, when set
	fail    error               // returned instead of applying, when set
}

func (o *owner) submit(ctx context.Context, batch recordstore.Batch) (recordstore.BatchResult, error) {
	o.mu.Lock()
	batch.ID = fmt.Sprintf("ro-%04d", len(o.batches)+1)
	batch.Producer = recordstore.Producer{Instance: "ro", Seq: int64(len(o.batches) + 1)}
	o.batches = append(o.batches, batch)
	before, fail := o.before, o.fail
	o.mu.Unlock()
	if fail != nil {
		return recordstore.BatchResult{}, fail
	}
	if before != nil {
		before()
	}
	res, err := o.b.AppendBatch(ctx, batch)
	if err != nil {
		return recordstore.BatchResult{}, err
	}
	return res[0], nil
}

func (o *owner) submitted() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.batches)
}

// pendingError stands for the owner package's PendingError: an error of
// Submit itself that must reach the caller unchanged.
type pendingError struct{ id string }

func (e *pendingError) Error() string { return "batch " + e.id + " is pending" }

var _ = Describe("read-only mode", func() {
	var (
		path   string
		w      *sqlite.Backend
		ro     *sqlite.Backend
		own    *owner
		events recordstore.Kind
	)
	BeforeEach(func() {
		path = storePath()
		w = openAt(path, sqlite.Options{})
		events = eventsKind()
		declare(w, events)
		own = &owner{b: w}
		ro = openAt(path, sqlite.Options{ReadOnly: true, Submit: own.submit, ChangeInterval: 5 * time.Millisecond})
	})

	It("refuses a store whose live file does not exist, creating nothing", func() {
		dir := filepath.Join(GinkgoT().TempDir(), "nothing")
		_, err := sqlite.Open(ctx, filepath.Join(dir, "records.sqlite"), sqlite.Options{ReadOnly: true})
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		_, err = os.Stat(dir)
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue())
	})

	It("reads what the owner wrote, and writes nothing itself", func() {
		mustAppend(w, "s", "events", recordstore.Row{"name": "a"})
		Expect(ro.ReadOnly()).To(BeTrue())
		Expect(ro.Epoch()).To(Equal(w.Epoch()))
		Expect(values(mustScan(ro, "s"), "name")).To(Equal([]any{"a"}))
		Expect(mustMeta(ro, "s").HighSeq).To(BeEquivalentTo(1))
		streams, err := ro.Streams(ctx, "events")
		Expect(err).NotTo(HaveOccurred())
		Expect(streams).To(HaveLen(1))
		kinds, err := ro.Kinds(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(kinds).To(HaveLen(1))

		Expect(errors.Is(ro.Sweep(ctx), recordstore.ErrReadOnly)).To(BeTrue())
		_, err = ro.AppendBatch(ctx, newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "b"})))
		Expect(errors.Is(err, recordstore.ErrReadOnly)).To(BeTrue())
		_, err = ro.SweepBatches(ctx, time.Now())
		Expect(errors.Is(err, recordstore.ErrReadOnly)).To(BeTrue())
		// No ledger yet: outcomes are simply not found.
		_, err = ro.BatchOutcome(ctx, "x")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		Expect(rawCount(rawDB(w), `SELECT value FROM record_meta WHERE key = 'epoch'`)).To(Equal(w.Epoch()))
	})

	It("submits an append, normalized in the catalog's column order, and returns the owner's exact result", func() {
		res, err := ro.Append(ctx, "s", "events", []recordstore.Row{{"name": "a", "ok": true}, {"n": 7}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "events", From: 1, To: 2, Appended: 2}))
		Expect(own.batches).To(HaveLen(1))
		sent := own.batches[0]
		Expect(sent.Schemas).To(HaveLen(1))
		Expect(sent.Schemas[0].Columns).To(Equal(events.Columns))
		Expect(sent.Entries).To(Equal([]recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "s", Kind: "events",
			Rows: normalized(events, recordstore.Row{"name": "a", "ok": true}, recordstore.Row{"n": 7})}}))
		out, err := ro.BatchOutcome(ctx, sent.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(*out.Entries[0].Append).To(Equal(res))
		Expect(values(mustScan(w, "s"), "n")).To(Equal([]any{nil, int64(7)}))

		m, err := ro.Seal(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect(m).To(Equal(mustMeta(w, "s")))
		Expect(m.Sealed).To(BeTrue())
		m, err = ro.Reopen(ctx, "s", 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Sealed).To(BeFalse())
		m, err = ro.Expire(ctx, "s", time.Hour)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.ExpiresAt).NotTo(BeNil())
		m, err = ro.Trim(ctx, "s", time.Now().Add(time.Hour))
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Total).To(BeZero())
		Expect(ro.Delete(ctx, "s")).To(Succeed())
		_, err = w.Meta(ctx, "s")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
		Expect(own.submitted()).To(Equal(6))
	})

	It("passes the owner's errors on with their sentinels", func() {
		mustAppend(w, "s", "events", recordstore.Row{"name": "a"})
		own.before = func() { _, _ = w.Seal(ctx, "s") } // sealed after the local check passed
		_, err := ro.Append(ctx, "s", "events", []recordstore.Row{{"name": "b"}})
		Expect(errors.Is(err, recordstore.ErrSealed)).To(BeTrue(), "%v", err)
		var be *recordstore.BatchError
		Expect(errors.As(err, &be)).To(BeTrue())
		Expect(be.Code).To(Equal("sealed"))

		own.before = func() { _ = w.Delete(ctx, "s") }
		_, err = ro.Expire(ctx, "s", time.Hour)
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
		Expect(recordstore.Code(err)).To(Equal("not_found"))
	})

	It("reads the stream before an append unless the takes hint knows it, and then leaves its refusal to the owner", func() {
		mustAppend(w, "s", "events", recordstore.Row{"name": "a"})
		_, err := w.Seal(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		var asked []string
		ro.SetTakesHint(func(stream, kind string) bool {
			asked = append(asked, stream+"/"+kind)
			return stream == "s" && kind == "events"
		})
		_, err = ro.Append(ctx, "t", "events", []recordstore.Row{{"name": "b"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(own.submitted()).To(Equal(1))
		// The hint says s takes events: the sealed stream is not read
		// here, and the owner refuses the append with the same error.
		_, err = ro.Append(ctx, "s", "events", []recordstore.Row{{"name": "c"}})
		Expect(errors.Is(err, recordstore.ErrSealed)).To(BeTrue(), "%v", err)
		Expect(own.submitted()).To(Equal(2), "submitted: the hint stood for the check")
		Expect(asked).To(Equal([]string{"t/events", "s/events"}))

		// Without the hint the check reads the file and refuses it here.
		ro.SetTakesHint(nil)
		_, err = ro.Append(ctx, "s", "events", []recordstore.Row{{"name": "d"}})
		Expect(errors.Is(err, recordstore.ErrSealed)).To(BeTrue(), "%v", err)
		Expect(own.submitted()).To(Equal(2), "refused before the submit")
		Expect(asked).To(HaveLen(2))
		Expect(mustMeta(w, "s").HighSeq).To(BeEquivalentTo(1))
	})

	It("returns an error of Submit itself unchanged", func() {
		pending := &pendingError{id: "b1"}
		own.fail = pending
		_, err := ro.Append(ctx, "s", "events", []recordstore.Row{{"name": "a"}})
		Expect(err).To(BeIdenticalTo(pending))
		_, err = ro.DeclareKind(ctx, keyedKind("kv", recordstore.ConflictSkip))
		Expect(err).To(BeIdenticalTo(pending))
	})

	DescribeTable("refuses an obviously bad write locally, without submitting it",
		func(call func(b *sqlite.Backend) error, want error) {
			mustAppend(w, "s", "events", recordstore.Row{"name": "a"})
			declare(w, keyedKind("kv", recordstore.ConflictSkip))
			mustAppend(w, "closed", "events", recordstore.Row{"name": "a"})
			_, err := w.Seal(ctx, "closed")
			Expect(err).NotTo(HaveOccurred())
			err = call(ro)
			Expect(errors.Is(err, want)).To(BeTrue(), "%v", err)
			Expect(own.submitted()).To(BeZero())
		},
		Entry("append to a sealed stream", func(b *sqlite.Backend) error {
			_, err := b.Append(ctx, "closed", "events", []recordstore.Row{{"name": "b"}})
			return err
		}, recordstore.ErrSealed),
		Entry("append of an undeclared kind", func(b *sqlite.Backend) error {
			_, err := b.Append(ctx, "s", "nokind", []recordstore.Row{{"name": "b"}})
			return err
		}, recordstore.ErrNotFound),
		Entry("append of a row that does not fit", func(b *sqlite.Backend) error {
			_, err := b.Append(ctx, "s", "events", []recordstore.Row{{"name": 5}})
			return err
		}, recordstore.ErrInvalid),
		Entry("append with a key repeated", func(b *sqlite.Backend) error {
			_, err := b.Append(ctx, "k", "kv", []recordstore.Row{kv("a", "", 1, ""), kv("a", "", 2, "")})
			return err
		}, recordstore.ErrInvalid),
		Entry("append to a stream of another kind", func(b *sqlite.Backend) error {
			_, err := b.Append(ctx, "s", "kv", []recordstore.Row{kv("a", "", 1, "")})
			return err
		}, recordstore.ErrSchemaConflict),
		Entry("append of no rows", func(b *sqlite.Backend) error {
			_, err := b.Append(ctx, "s", "events", nil)
			return err
		}, recordstore.ErrInvalid),
		Entry("seal of an unknown stream", func(b *sqlite.Backend) error {
			_, err := b.Seal(ctx, "nope")
			return err
		}, recordstore.ErrNotFound),
		Entry("expire with a ttl that is not positive", func(b *sqlite.Backend) error {
			_, err := b.Expire(ctx, "s", 0)
			return err
		}, recordstore.ErrInvalid),
		Entry("reopen of another generation", func(b *sqlite.Backend) error {
			_, err := b.Reopen(ctx, "closed", 2)
			return err
		}, recordstore.ErrNotFound),
		Entry("delete of an unknown stream", func(b *sqlite.Backend) error { return b.Delete(ctx, "nope") }, recordstore.ErrNotFound),
		Entry("a kind declared differently", func(b *sqlite.Backend) error {
			k := keyedKind("kv", recordstore.ConflictReplace)
			_, err := b.DeclareKind(ctx, k)
			return err
		}, recordstore.ErrSchemaConflict),
	)

	It("refuses every mutation with ErrReadOnly without a Submit function", func() {
		mustAppend(w, "s", "events", recordstore.Row{"name": "a"})
		bare := openAt(path, sqlite.Options{ReadOnly: true})
		calls := map[string]func() error{
			"DeclareKind": func() error { _, err := bare.DeclareKind(ctx, keyedKind("kv", recordstore.ConflictSkip)); return err },
			"Append": func() error {
				_, err := bare.Append(ctx, "s", "events", []recordstore.Row{{"name": "b"}})
				return err
			},
			"Seal":   func() error { _, err := bare.Seal(ctx, "s"); return err },
			"Reopen": func() error { _, err := bare.Reopen(ctx, "s", 1); return err },
			"Expire": func() error { _, err := bare.Expire(ctx, "s", time.Hour); return err },
			"Trim":   func() error { _, err := bare.Trim(ctx, "s", time.Now()); return err },
			"Delete": func() error { return bare.Delete(ctx, "s") },
		}
		for name, call := range calls {
			err := call()
			Expect(errors.Is(err, recordstore.ErrReadOnly)).To(BeTrue(), "%s: %v", name, err)
			Expect(recordstore.Code(err)).To(Equal("read_only"), name)
		}
		Expect(mustMeta(w, "s").HighSeq).To(BeEquivalentTo(1))
	})

	It("declares a kind through a declare-only batch and adopts it", func() {
		jobs := keyedKind("jobs", recordstore.ConflictReplace)
		st, err := ro.DeclareKind(ctx, jobs)
		Expect(err).NotTo(HaveOccurred())
		Expect(st).To(Equal(recordstore.KindCreated))
		Expect(own.batches).To(HaveLen(1))
		Expect(own.batches[0].Entries).To(Equal([]recordstore.BatchEntry{{Op: recordstore.OpDeclare, Kind: "jobs"}}))
		k, err := w.Kind(ctx, "jobs")
		Expect(err).NotTo(HaveOccurred())
		Expect(k.Policy()).To(Equal(recordstore.ConflictReplace))

		// Already declared as is: nothing to submit.
		st, err = ro.DeclareKind(ctx, jobs)
		Expect(err).NotTo(HaveOccurred())
		Expect(st).To(Equal(recordstore.KindUnchanged))
		Expect(own.submitted()).To(Equal(1))
		res, err := ro.Append(ctx, "j", "jobs", []recordstore.Row{kv("a", "1", 1, "")})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Appended).To(BeEquivalentTo(1))
	})

	It("sees the kinds and columns another process adds", func() {
		mustAppend(w, "s", "events", recordstore.Row{"name": "a"})
		Expect(mustScan(ro, "s")[0].Values).NotTo(HaveKey("extra"))
		wider := eventsKind()
		wider.Columns = append(wider.Columns, recordstore.Column{Name: "extra", Type: recordstore.TypeString})
		Expect(declare(w, wider)).To(Equal(recordstore.KindUpdated))
		mustAppend(w, "s", "events", recordstore.Row{"name": "b", "extra": "x"})
		Eventually(func() []recordstore.Record { return mustScan(ro, "s") }).
			Should(ContainElement(HaveField("Values", HaveKeyWithValue("extra", "x"))))
		// An append naming the new column is checked against the new kind.
		_, err := ro.Append(ctx, "s", "events", []recordstore.Row{{"extra": "y"}})
		Expect(err).NotTo(HaveOccurred())
	})

	It("wakes its followers when the owner commits", func() {
		changed := ro.Notifier().Changed("s")
		Consistently(changed).WithTimeout(50 * time.Millisecond).ShouldNot(BeClosed())
		mustAppend(w, "s", "events", recordstore.Row{"name": "a"})
		Eventually(changed).WithTimeout(5 * time.Second).Should(BeClosed())

		got := make(chan string, 4)
		tctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			defer GinkgoRecover()
			_ = recordstore.Tail(tctx, ro, "s", 1, func(r recordstore.Record) error {
				got <- r.Values["name"].(string)
				return nil
			})
		}()
		mustAppend(w, "s", "events", recordstore.Row{"name": "b"})
		Eventually(got).WithTimeout(5 * time.Second).Should(Receive(Equal("b")))
	})

	It("stays read-only after a failed promotion, followers still woken and writes still submitted, and promotes later", func() {
		mustAppend(w, "s", "events", recordstore.Row{"name": "a"})
		before := ro.Epoch()
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		Expect(ro.Promote(cancelled)).To(MatchError(context.Canceled))
		Expect(ro.ReadOnly()).To(BeTrue())

		changed := ro.Notifier().Changed("s")
		mustAppend(w, "s", "events", recordstore.Row{"name": "b"})
		Eventually(changed).WithTimeout(5*time.Second).Should(BeClosed(), "the change feed runs again")
		res, err := ro.Append(ctx, "s", "events", []recordstore.Row{{"name": "c"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.From).To(BeEquivalentTo(3))
		Expect(own.submitted()).To(Equal(1), "the write went to the owner")

		Expect(w.Close()).To(Succeed())
		Expect(ro.Promote(ctx)).To(Succeed())
		Expect(ro.ReadOnly()).To(BeFalse())
		Expect(ro.Epoch()).To(BeNumerically(">", before))
		mustAppend(ro, "s", "events", recordstore.Row{"name": "d"})
		Expect(own.submitted()).To(Equal(1), "written directly once promoted")
		Expect(values(mustScan(ro, "s"), "name")).To(Equal([]any{"a", "b", "c", "d"}))
	})

	It("promotes in place: the same value becomes the writer, with a new epoch", func() {
		mustAppend(w, "s", "events", recordstore.Row{"name": "a"})
		before := ro.Epoch()
		same := ro
		Expect(w.Close()).To(Succeed())

		// Readers keep working while the promotion runs.
		stop := make(chan struct{})
		var reads, readErrs atomic.Int64
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := same.Meta(ctx, "s"); err != nil {
					readErrs.Add(1)
				}
				reads.Add(1)
			}
		}()
		Expect(ro.Promote(ctx)).To(Succeed())
		Eventually(reads.Load).Should(BeNumerically(">", 10))
		close(stop)
		wg.Wait()
		Expect(readErrs.Load()).To(BeZero())

		Expect(same.ReadOnly()).To(BeFalse())
		Expect(same.Epoch()).To(Equal(before + 1))
		res := mustAppend(same, "s", "events", recordstore.Row{"name": "b"})
		Expect(res.From).To(BeEquivalentTo(2))
		Expect(own.submitted()).To(BeZero())
		out := mustBatch(same, newBatch(nil, appendEntry("s", events, recordstore.Row{"name": "c"})))
		Expect(out[0].Epoch).To(Equal(before + 1))
		Expect(same.Promote(ctx)).To(Succeed())
		Expect(same.Epoch()).To(Equal(before + 1))
		Expect(same.Sweep(ctx)).To(Succeed())
		Expect(values(mustScan(same, "s"), "name")).To(Equal([]any{"a", "b", "c"}))
	})
})

var _ = Describe("the epoch", func() {
	It("grows with every writable open and promotion, and a read-only open only reads it", func() {
		path := storePath()
		a := openAt(path, sqlite.Options{})
		Expect(a.Epoch()).To(BeEquivalentTo(1))
		Expect(a.Close()).To(Succeed())
		a = openAt(path, sqlite.Options{})
		Expect(a.Epoch()).To(BeEquivalentTo(2))
		ro := openAt(path, sqlite.Options{ReadOnly: true})
		Expect(ro.Epoch()).To(BeEquivalentTo(2))
		Expect(a.Close()).To(Succeed())
		Expect(ro.Promote(ctx)).To(Succeed())
		Expect(ro.Epoch()).To(BeEquivalentTo(3))
		Expect(rawCount(rawDB(ro), `SELECT value FROM record_meta WHERE key = 'epoch'`)).To(BeEquivalentTo(3))
	})

	It("fences an older writer: its batches fail and it stops writing, the newer one goes on", func() {
		path := storePath()
		old := openAt(path, sqlite.Options{})
		declare(old, eventsKind())
		mustBatch(old, newBatch(nil, appendEntry("s", eventsKind(), recordstore.Row{"name": "a"})))
		newer := openAt(path, sqlite.Options{})
		_, err := old.AppendBatch(ctx, newBatch(nil, appendEntry("s", eventsKind(), recordstore.Row{"name": "b"})))
		Expect(errors.Is(err, sqlite.ErrFenced)).To(BeTrue(), "%v", err)
		_, err = old.Append(ctx, "s", "events", []recordstore.Row{{"name": "c"}})
		Expect(errors.Is(err, sqlite.ErrFenced)).To(BeTrue(), "%v", err)
		Expect(values(mustScan(old, "s"), "name")).To(Equal([]any{"a"}))
		mustBatch(newer, newBatch(nil, appendEntry("s", eventsKind(), recordstore.Row{"name": "d"})))
		Expect(values(mustScan(newer, "s"), "name")).To(Equal([]any{"a", "d"}))
	})
})

var _ = Describe("WatchChanges", func() {
	It("reports commits of other connections until its context ends or the store closes", func() {
		b := openAt(storePath(), sqlite.Options{ChangeInterval: 5 * time.Millisecond})
		declare(b, eventsKind())
		var calls atomic.Int64
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- b.WatchChanges(wctx, func() { calls.Add(1) }) }()
		Consistently(calls.Load).WithTimeout(30 * time.Millisecond).Should(BeZero())
		mustAppend(b, "s", "events", recordstore.Row{"name": "a"})
		Eventually(calls.Load).Should(BeNumerically(">=", 1))
		cancel()
		Eventually(done).Should(Receive(MatchError(context.Canceled)))

		go func() { done <- b.WatchChanges(ctx, func() {}) }()
		Expect(b.Close()).To(Succeed())
		Eventually(done).Should(Receive(MatchError(recordstore.ErrClosed)))
	})
})
