// Helpers of the multi-process specs: the kinds they write, scripts for
// owners and producers, reading the store and the spool from the parent,
// and hand-made batches.

package owner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
	rt "github.com/fb46ecde/records/recordstoretest"
)

// wait bounds every wait for a child: liveness, not speed. It is generous
// because children of a -race binary on two cores start and run slowly.
const wait = 90 * time.Second

// eventKind has no key, so a batch applied twice shows as duplicate rows.
func eventKind() *recordstore.Kind {
	return &recordstore.Kind{Name: "event", Columns: []recordstore.Column{
		{Name: "k", Type: recordstore.TypeString, Required: true},
		{Name: "n", Type: recordstore.TypeInteger},
		{Name: "msg", Type: recordstore.TypeString},
	}}
}

// storePath returns a fresh store path for the running spec.
func storePath() string {
	return filepath.Join(GinkgoT().TempDir(), "records.sqlite")
}

// fast are the store options of most children: quick polling so that specs
// do not wait on the ingest loop's backoff.
func fast() *rt.StoreOptions {
	return &rt.StoreOptions{PollMin: 5 * time.Millisecond, PollMax: 100 * time.Millisecond,
		StartWait: wait, DrainOnClose: 30 * time.Second}
}

// with returns fast options changed by set.
func with(set func(o *rt.StoreOptions)) *rt.StoreOptions {
	o := fast()
	set(o)
	return o
}

// Step shorthands.
func open(o *rt.StoreOptions) rt.Step { return rt.Step{Op: rt.OpOpen, Options: o} }
func declare(k *recordstore.Kind) rt.Step {
	return rt.Step{Op: rt.OpDeclare, Schema: k}
}
func waitRole(r owner.Role) rt.Step {
	return rt.Step{Op: rt.OpWaitRole, Role: string(r), Timeout: wait}
}
func hold() rt.Step       { return rt.Step{Op: rt.OpHold} }
func closeStore() rt.Step { return rt.Step{Op: rt.OpClose} }
func appendGen(stream, prefix string, from, n int) rt.Step {
	return rt.Step{Op: rt.OpAppend, Stream: stream, Kind: "event", Gen: &rt.Gen{Prefix: prefix, From: from, Count: n}, Timeout: wait}
}

// writeGen buffers n generated rows in the child's bulk Writer, whose
// batches hold n rows: the write is delivered as one batch at once.
func writeGen(stream, prefix string, from, n int) rt.Step {
	return rt.Step{Op: rt.OpWrite, Stream: stream, Kind: "event", Gen: &rt.Gen{Prefix: prefix, From: from, Count: n}, BatchRows: int64(n)}
}
func publishGen(stream, prefix string, from, n int) rt.Step {
	return rt.Step{Op: rt.OpPublish, Stream: stream, Kind: "event", Gen: &rt.Gen{Prefix: prefix, From: from, Count: n}}
}
func awaitAll() rt.Step          { return rt.Step{Op: rt.OpAwait, Timeout: wait} }
func scan(stream string) rt.Step { return rt.Step{Op: rt.OpScan, Stream: stream} }
func exitNow() rt.Step           { return rt.Step{Op: rt.OpExit} }
func failpoint(name, action string) rt.FailpointRule {
	return rt.FailpointRule{Name: name, Action: action}
}

// startOwner starts a child that becomes the owner of the store at path:
// its steps are named "open", "become-owner", "declare" (the event kind) and
// "hold"; once released it runs then (which must not reuse those names) and
// closes ("close"). It returns once the kind is declared.
func startOwner(path string, opts *rt.StoreOptions, fps []rt.FailpointRule, then ...rt.Step) *rt.Child {
	GinkgoHelper()
	steps := []rt.Step{open(opts).Named("open"), waitRole(owner.RoleOwner).Named("become-owner"),
		declare(eventKind()).Named("declare"), hold().Named("hold")}
	steps = append(append(steps, then...), closeStore().Named("close"))
	c := rt.MustStartChild(rt.Script{Path: path, Failpoints: fps, Steps: steps})
	c.MustStepNamed("declare", wait)
	return c
}

// startProducer starts a child that opens the store with opts (as a
// non-owner when an owner runs) and runs steps; its open is the step named
// "open".
func startProducer(path string, opts *rt.StoreOptions, fps []rt.FailpointRule, steps ...rt.Step) *rt.Child {
	GinkgoHelper()
	return rt.MustStartChild(rt.Script{Path: path, Failpoints: fps, Steps: append([]rt.Step{open(opts).Named("open")}, steps...)})
}

// appendResult decodes an append step's result.
func appendResult(l rt.Line) recordstore.AppendResult {
	GinkgoHelper()
	var res recordstore.AppendResult
	Expect(l.Decode(&res)).To(Succeed())
	return res
}

// batchResult decodes an await step's result for one batch.
func batchResult(l rt.Line) recordstore.BatchResult {
	GinkgoHelper()
	var res recordstore.BatchResult
	Expect(l.Decode(&res)).To(Succeed())
	return res
}

// openHere opens the store in this process, once no child holds it: this
// process becomes the owner (and drains what is left in incoming). It is
// closed at the end of the spec.
func openHere(path string) *sqliteStore {
	GinkgoHelper()
	s, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
		Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion,
		PollMin: 5 * time.Millisecond, PollMax: 100 * time.Millisecond,
	})
	Expect(err).NotTo(HaveOccurred(), "open the store in the test process")
	DeferCleanup(func() { Expect(s.Close()).To(Succeed()) })
	return s
}

// finalRows opens the store here (see openHere), waits until incoming is
// empty, and returns the rows of stream.
func finalRows(path, stream string) []recordstore.Record {
	GinkgoHelper()
	s := openHere(path)
	Expect(s.Role()).To(Equal(owner.RoleOwner))
	Eventually(func() []spool.BatchName { return incoming(path) }, wait, 20*time.Millisecond).Should(BeEmpty())
	recs, err := s.Backend().Scan(context.Background(), stream, recordstore.ScanOptions{})
	if errors.Is(err, recordstore.ErrNotFound) {
		return nil // the stream was never created
	}
	Expect(err).NotTo(HaveOccurred())
	return recs
}

// keyCounts counts the records per value of column k.
func keyCounts(recs []recordstore.Record) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		k, _ := r.Values["k"].(string)
		out[k]++
	}
	return out
}

// lineKeyCounts counts the records of a scan line per value of column k.
func lineKeyCounts(recs []map[string]any) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		k, _ := r["k"].(string)
		out[k]++
	}
	return out
}

// genKeys returns the keys Gen gives rows from..from+n-1 of prefix.
func genKeys(prefix string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = rt.GenKey(prefix, from+i)
	}
	return out
}

// spoolDir opens the spool of the store at path from this process (only
// to look at it; the owner is another process).
func spoolDir(path string) *spool.Dir {
	GinkgoHelper()
	d, err := spool.Open(context.Background(), path, spool.Options{})
	Expect(err).NotTo(HaveOccurred())
	return d
}

// incoming lists the batches waiting in the store's incoming folder.
func incoming(path string) []spool.BatchName {
	GinkgoHelper()
	names, err := spoolDir(path).List(context.Background(), spool.StateIncoming)
	Expect(err).NotTo(HaveOccurred())
	return names
}

// entries lists the names in one spool folder (tmp included).
func entries(path string, s spool.State) []string {
	GinkgoHelper()
	des, err := os.ReadDir(filepath.Join(spool.PathFor(path), string(s)))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	out := make([]string, len(des))
	for i, de := range des {
		out[i] = de.Name()
	}
	return out
}

// handBatch publishes one batch of rows of the event kind into a scratch
// spool, lets damage change its folder, and moves it into the store's
// incoming folder, as a foreign producer would. It returns the batch's
// name.
func handBatch(path, stream string, rows []recordstore.Row, damage func(dir string)) spool.BatchName {
	GinkgoHelper()
	return handBatchAs(path, spool.NewIdentity("hand"), 1, spool.StateIncoming, stream, rows, damage)
}

// handBatchAs is handBatch for producer id's batch number seq, moved into
// the store's folder state (incoming or failed).
func handBatchAs(path string, id *spool.Identity, seq int64, state spool.State, stream string, rows []recordstore.Row, damage func(dir string)) spool.BatchName {
	GinkgoHelper()
	ctx := context.Background()
	scratch, err := spool.OpenRoot(ctx, filepath.Join(GinkgoT().TempDir(), "scratch.spool"), spool.Options{})
	Expect(err).NotTo(HaveOccurred())
	k := eventKind()
	Expect(k.Validate()).To(Succeed())
	vals := make([]recordstore.Values, len(rows))
	for i, r := range rows {
		vals[i], err = k.Normalize(r)
		Expect(err).NotTo(HaveOccurred())
	}
	d := &recordstore.Batch{ID: spool.NewID(), Created: time.Now(), Schemas: []recordstore.Kind{*k},
		Producer: id.Producer(seq),
		Entries:  []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: stream, Kind: k.Name, Rows: vals}}}
	name, err := scratch.Publish(ctx, d, spool.FormatNDJSON)
	Expect(err).NotTo(HaveOccurred())
	src := scratch.Path(spool.StateIncoming, name.String())
	if damage != nil {
		damage(src)
	}
	spoolDir(path) // make sure the folders exist
	Expect(os.Rename(src, filepath.Join(spool.PathFor(path), string(state), name.String()))).To(Succeed())
	return name
}

// readFailure reads failed/<name>/error.json.
func readFailure(path string, name spool.BatchName) (*spool.Failure, error) {
	return spoolDir(path).ReadFailure(context.Background(), name.String())
}
