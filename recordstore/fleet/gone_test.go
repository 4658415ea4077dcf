// A store another process deletes (or deletes and provisions again) while
// this process has it open without owning it: its next write is refused,
// nothing is created for it, and the fleet forgets the open store.

package fleet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/owner"
)

var _ = Describe("A store deleted by another process while this one reads it", func() {
	ctx := context.Background()

	// oneReader opens stores with one reader connection: the one open
	// before the file goes (a connection opened after it would not find
	// the file, or would open the new one).
	oneReader := fleet.Options{Open: fleet.DefaultOpener(fleet.StoreOptions{ReadConns: 1})}

	// inOtherProcess runs verb on the store of k in a child process and
	// expects it to succeed.
	inOtherProcess := func(verb, root string, k fleet.Key) {
		GinkgoHelper()
		out, err := childCmd(verb, root, k.String()).Output()
		Expect(err).NotTo(HaveOccurred(), "child %s: %s", verb, out)
		Expect(strings.TrimSpace(string(out))).To(Equal("ok"))
	}

	// readDeferred has the store of k hold a note written and closed
	// here, then leases it again for reading only (no election).
	readDeferred := func(f *fleet.Fleet, k fleet.Key) *fleet.Lease {
		GinkgoHelper()
		Expect(f.Provision(ctx, k)).To(Succeed())
		appendNote(f, k, "before")
		Expect(f.CloseStore(ctx, k)).To(Succeed())
		l, err := f.Acquire(ctx, k)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(l.Release)
		Expect(l.Store().Role()).To(Equal(owner.RoleDeferred))
		Expect(leaseNotes(l)).To(Equal([]string{"before"}))
		return l
	}

	appendTo := func(st *fleet.Store, id string) error {
		_, err := st.Append(ctx, "s", "notes", []recordstore.Row{{"id": id, "body": "b"}}, owner.AppendOptions{})
		return err
	}

	// listedKeys are the keys List finds, and the paths it skipped.
	listedKeys := func(f *fleet.Fleet) ([]string, []fleet.Skipped) {
		GinkgoHelper()
		l, err := f.List(ctx, fleet.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		var keys []string
		for _, e := range l.Stores {
			keys = append(keys, e.Key)
		}
		return keys, l.Skipped
	}

	DescribeTable("refuses the reader's next write and leaves nothing of the store behind",
		func(neighbour bool) {
			root := newRoot()
			f := openFleet(root, oneReader)
			k := tenant("acme")
			var other fleet.Key
			if neighbour {
				other = sameBucket(k)
				Expect(f.Provision(ctx, other)).To(Succeed())
			}
			l := readDeferred(f, k)
			st, p := l.Store(), l.Store().Paths()

			inOtherProcess("delete", root, k)

			// Reads go on in the file this process opened (unlinked now).
			Expect(leaseNotes(l)).To(Equal([]string{"before"}))
			err := appendTo(st, "after")
			Expect(err).To(MatchError(recordstore.ErrNotFound))
			Expect(err.Error()).To(ContainSubstring("removed or replaced"))
			Expect(st.Gone()).To(MatchError(recordstore.ErrNotFound))
			Expect(appendTo(st, "again")).To(MatchError(recordstore.ErrNotFound), "the store stays gone")
			Expect(st.Role()).To(Equal(owner.RoleDeferred))

			l.Release()
			Expect(f.IsOpen(k)).To(BeFalse(), "the fleet forgets the deleted store")
			for _, gone := range []string{p.Config, p.Lock, p.State, p.Spool, p.Config + "-wal"} {
				Expect(gone).NotTo(BeAnExistingFile())
				Expect(gone).NotTo(BeADirectory())
			}
			keys, skipped := listedKeys(f)
			Expect(skipped).To(BeEmpty())
			if neighbour {
				Expect(keys).To(Equal([]string{other.String()}))
				Expect(filepath.Dir(p.Config)).To(BeADirectory())
			} else {
				Expect(keys).To(BeEmpty())
				Expect(filepath.Dir(p.Config)).NotTo(BeADirectory(), "the emptied bucket folder stays removed")
			}
			_, err = f.Acquire(ctx, k)
			Expect(err).To(MatchError(recordstore.ErrNotFound))
		},
		Entry("when it was alone in its bucket folder", false),
		Entry("when another store shares its bucket folder", true),
	)

	It("refuses the reader's write when the key was provisioned again, and leaves the new store untouched", func() {
		root := newRoot()
		f := openFleet(root, oneReader)
		k := tenant("acme")
		l := readDeferred(f, k)
		st, p := l.Store(), l.Store().Paths()

		inOtherProcess("reprovision", root, k)
		before, err := os.Stat(p.Config)
		Expect(err).NotTo(HaveOccurred())

		Expect(appendTo(st, "after")).To(MatchError(recordstore.ErrNotFound))
		l.Release()
		Expect(f.IsOpen(k)).To(BeFalse())
		after, err := os.Stat(p.Config)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.SameFile(before, after)).To(BeTrue())
		Expect(after.ModTime()).To(Equal(before.ModTime()))
		Expect(after.Size()).To(Equal(before.Size()))
		for _, untouched := range []string{p.Lock, p.State, p.Config + "-wal"} {
			Expect(untouched).NotTo(BeAnExistingFile())
		}

		// The next open is of the new store: empty, and written normally.
		Expect(f.Do(ctx, k, func(ctx context.Context, st *fleet.Store) error {
			Expect(st.Backend().Streams(ctx, "")).To(BeEmpty())
			return nil
		})).To(Succeed())
		appendNote(f, k, "new")
		Expect(notes(f, k)).To(Equal([]string{"new"}))
		keys, skipped := listedKeys(f)
		Expect(keys).To(Equal([]string{k.String()}))
		Expect(skipped).To(BeEmpty())
	})

	It("has the next Acquire of a store open but not leased here see the deletion", func() {
		root := newRoot()
		f := openFleet(root, oneReader)
		k := tenant("acme")
		readDeferred(f, k).Release()
		Expect(f.IsOpen(k)).To(BeTrue())

		inOtherProcess("delete", root, k)

		_, err := f.Acquire(ctx, k)
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		Expect(f.IsOpen(k)).To(BeFalse())
		Expect(listFiles(root)).To(BeEmpty())
	})

	It("does not remember, when it closes the store, a file put at its path by hand after the deletion", func() {
		root := newRoot()
		f := openFleet(root, oneReader)
		k, other := tenant("acme"), tenant("beta")
		Expect(f.Provision(ctx, other)).To(Succeed())
		readDeferred(f, k).Release()

		inOtherProcess("delete", root, k)
		// Someone copies another tenant's store over the empty path.
		otherPath, err := f.Path(other)
		Expect(err).NotTo(HaveOccurred())
		data, err := os.ReadFile(otherPath)
		Expect(err).NotTo(HaveOccurred())
		path, err := f.Path(k)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.MkdirAll(filepath.Dir(path), 0o700)).To(Succeed())
		Expect(os.WriteFile(path, data, 0o600)).To(Succeed())

		// The store is closed without an Acquire having seen the deletion:
		// its close must not vouch for the copy.
		Expect(f.CloseStore(ctx, k)).To(Succeed())
		l, err := f.Acquire(ctx, k)
		if err == nil {
			l.Release()
		}
		Expect(err).To(MatchError(fleet.ErrMisplaced))
	})

	It("has an Acquire, while a lease still holds the deleted store, wait for it and open the store provisioned again, never the deleted one", func() {
		root := newRoot()
		f := openFleet(root, oneReader)
		k := tenant("acme")
		l := readDeferred(f, k)

		inOtherProcess("reprovision", root, k)

		got := make(chan []recordstore.Meta, 1)
		go func() {
			defer GinkgoRecover()
			defer close(got)
			l2, err := f.Acquire(ctx, k)
			Expect(err).NotTo(HaveOccurred())
			defer l2.Release()
			streams, err := l2.Store().Backend().Streams(ctx, "")
			Expect(err).NotTo(HaveOccurred())
			got <- streams
		}()
		// The Acquire finds the store deleted and tells the lease's holder.
		Eventually(l.Gone()).WithTimeout(30 * time.Second).Should(BeClosed())
		Expect(leaseNotes(l)).To(Equal([]string{"before"}), "the holder still reads the file it opened")
		Expect(got).NotTo(Receive(), "the Acquire waits for the deleted store's close")
		l.Release()
		Eventually(got).WithTimeout(30*time.Second).Should(Receive(BeEmpty()), "the new store, empty")
	})

	It("has a Sweep find a leased store deleted, tell its lease (Gone), and close it with its last Release", func() {
		root := newRoot()
		f := openFleet(root, oneReader)
		k := tenant("acme")
		l := readDeferred(f, k)
		Expect(l.Gone()).NotTo(BeClosed())
		f.Sweep(ctx)
		Expect(l.Gone()).NotTo(BeClosed(), "a store still there is not gone")

		inOtherProcess("delete", root, k)

		f.Sweep(ctx)
		Expect(l.Gone()).To(BeClosed())
		Expect(f.IsOpen(k)).To(BeFalse(), "forgotten")
		closes := f.Stats().Closes
		l.Release()
		Expect(f.Stats().Closes).To(Equal(closes+1), "closed with its last lease")
		_, err := f.Acquire(ctx, k)
		Expect(err).To(MatchError(recordstore.ErrNotFound))
	})

	It("has a Sweep close at once a store deleted while open and not leased here", func() {
		root := newRoot()
		f := openFleet(root, oneReader)
		k := tenant("acme")
		readDeferred(f, k).Release()
		inOtherProcess("delete", root, k)
		Expect(f.Sweep(ctx)).To(Equal(1))
		Expect(f.Stats().Open).To(BeZero())
		Expect(listFiles(root)).To(BeEmpty())
	})

	It("creates a fresh store at the next Acquire in a fleet that creates on demand", func() {
		root := newRoot()
		f := openFleet(root, fleet.Options{Mode: fleet.ModeSlot, Open: oneReader.Open})
		other := openFleet(root, fleet.Options{Mode: fleet.ModeSlot}) // stands for another process
		k := fleet.RoutingKey("customer-7")
		appendNote(f, k, "before")
		Expect(f.CloseStore(ctx, k)).To(Succeed())
		l, err := f.Acquire(ctx, k)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(l.Release)
		Expect(leaseNotes(l)).To(Equal([]string{"before"}))

		Expect(other.Delete(ctx, k)).To(Succeed())

		Expect(appendTo(l.Store(), "after")).To(MatchError(recordstore.ErrNotFound))
		l.Release()
		Expect(f.Do(ctx, k, func(ctx context.Context, st *fleet.Store) error {
			Expect(st.Backend().Streams(ctx, "")).To(BeEmpty(), "a new, empty store")
			return nil
		})).To(Succeed())
		appendNote(f, k, "new")
		Expect(notes(f, k)).To(Equal([]string{"new"}))
	})
})

// leaseNotes returns the ids of the notes in stream s of the leased store.
func leaseNotes(l *fleet.Lease) []string {
	GinkgoHelper()
	recs, err := l.Store().Backend().Scan(context.Background(), "s", recordstore.ScanOptions{})
	Expect(err).NotTo(HaveOccurred())
	var ids []string
	for _, r := range recs {
		ids = append(ids, fmt.Sprint(r.Values["id"]))
	}
	return ids
}

// sameBucket returns a tenant key other than k's in k's bucket folder.
func sameBucket(k fleet.Key) fleet.Key {
	GinkgoHelper()
	for i := 0; ; i++ {
		id := fmt.Sprint("n", i)
		if o := tenant(id); o.Bucket() == k.Bucket() && o != k {
			return o
		}
	}
}

var _ = Describe("An identity read of a store file removed before its connection opens", func() {
	It("fails and creates no file in its place", func() {
		root := newRoot()
		f := openFleet(root, fleet.Options{})
		k := tenant("acme")
		Expect(f.Provision(context.Background(), k)).To(Succeed())
		path, err := f.Path(k)
		Expect(err).NotTo(HaveOccurred())
		db, err := fleet.OpenIdentityDB(path) // checks the file; connects lazily
		Expect(err).NotTo(HaveOccurred())
		defer db.Close()
		Expect(os.Remove(path)).To(Succeed()) // a delete by another process, say
		var n int
		Expect(db.QueryRow(`SELECT count(*) FROM sqlite_schema`).Scan(&n)).NotTo(Succeed())
		Expect(path).NotTo(BeAnExistingFile())
	})
})
