package fleet_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/fb46ecde/records/recordstoretest/s3test"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("RestoreMissing", func() {
	var (
		ctx    context.Context
		srv    *s3test.Server
		addr   string // the fleets' replica address
		reps   func(sub string) (owner.Replicator, error)
		fences func(sub string) (owner.Fence, error)
		acme   fleet.Key
	)

	// leasedFleet opens a fleet on root whose stores replicate under
	// addr, each fenced by its lease and caught up from its replica.
	leasedFleet := func(root string, opts fleet.Options) *fleet.Fleet {
		if opts.Open == nil {
			opts.Open = fleet.DefaultOpener(fleet.StoreOptions{Replica: reps, Fence: fences, CatchUpFrom: addr, EagerElection: true,
				Logger: slog.New(slog.NewTextHandler(GinkgoWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		}
		return openFleet(root, opts)
	}
	restoringFleet := func(root string, opts fleet.Options) *fleet.Fleet {
		opts.RestoreMissing, opts.Replica = true, addr
		return leasedFleet(root, opts)
	}
	appendNotes := func(f *fleet.Fleet, k fleet.Key, ids ...string) {
		err := f.Do(ctx, k, func(ctx context.Context, st *fleet.Store) error {
			for _, id := range ids {
				_, err := st.Append(ctx, "s", noteKind.Name, []recordstore.Row{{"id": id, "body": "b"}},
					owner.AppendOptions{WriteOptions: owner.WriteOptions{Replicated: true}})
				if err != nil {
					return err
				}
			}
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
	}
	highSeq := func(st *fleet.Store) int64 {
		m, err := st.Backend().Meta(ctx, "s")
		if errors.Is(err, recordstore.ErrNotFound) {
			return 0 // a new store: no stream yet
		}
		Expect(err).NotTo(HaveOccurred())
		return m.HighSeq
	}
	// removeStore removes the store file of k under root and every file
	// beside it that belongs to it (sidecars, lock, state, spool, the
	// replicator's folder), as a lost disk would.
	removeStore := func(f *fleet.Fleet, k fleet.Key) string {
		abs, err := f.Path(k)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Close()).To(Succeed())
		ents, err := os.ReadDir(filepath.Dir(abs))
		Expect(err).NotTo(HaveOccurred())
		base := filepath.Base(abs)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), base) || strings.HasPrefix(e.Name(), "."+base) {
				Expect(os.RemoveAll(filepath.Join(filepath.Dir(abs), e.Name()))).To(Succeed())
			}
		}
		return abs
	}
	// replicated writes five notes to acme through a leased fleet on a
	// fresh root, closes it and removes the store: its replica alone
	// holds them.
	replicated := func() (root, abs string) {
		root = newRoot()
		f := leasedFleet(root, fleet.Options{})
		Expect(f.Provision(ctx, acme)).To(Succeed())
		appendNotes(f, acme, "1", "2", "3", "4", "5")
		return root, removeStore(f, acme)
	}

	BeforeEach(func() {
		ctx = context.Background()
		var err error
		srv, err = s3test.Start("records")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(srv.Kill)
		DeferCleanup(srv.SetEnv())
		addr = srv.URL("fleet")
		reps, err = replica.Factory(addr, replica.Options{})
		Expect(err).NotTo(HaveOccurred())
		fences, err = replica.LeaseFactory(addr, replica.LeaseOptions{TTL: 3 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		acme = tenant("acme")
	})

	It("restores a tenant whose file is missing from its replica, under its lease, before its first open", func() {
		root, abs := replicated()
		Expect(abs).NotTo(BeAnExistingFile())

		f := restoringFleet(root, fleet.Options{})
		l, err := f.Acquire(ctx, acme)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(l.Release)
		Expect(abs).To(BeAnExistingFile())
		Expect(highSeq(l.Store())).To(Equal(int64(5)))
		Expect(l.Store().Role()).To(Equal(owner.RoleOwner))
		Expect(l.Store().CheckFence()).To(Succeed())
		// The restored store is written and replicated as any other.
		_, err = l.Store().Append(ctx, "s", noteKind.Name, []recordstore.Row{{"id": "6"}},
			owner.AppendOptions{WriteOptions: owner.WriteOptions{Replicated: true}})
		Expect(err).NotTo(HaveOccurred())
		Expect(highSeq(l.Store())).To(Equal(int64(6)))
	})

	It("leaves a missing tenant as without the option when the option is off or the replica is empty", func() {
		root, abs := replicated()

		By("without the option: ErrNotFound, or a new empty store when the fleet creates on demand")
		f := leasedFleet(root, fleet.Options{})
		_, err := f.Acquire(ctx, acme)
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		Expect(abs).NotTo(BeAnExistingFile())
		Expect(f.Close()).To(Succeed())

		f = openFleet(root, fleet.Options{CreateOnDemand: fleet.OnDemandCreate,
			Open: fleet.DefaultOpener(fleet.StoreOptions{Replica: reps})})
		l, err := f.Acquire(ctx, acme)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(l.Release)
		Expect(highSeq(l.Store())).To(Equal(int64(0)))
		l.Release()
		removeStore(f, acme)

		By("without the option, a fleet under leases refuses to own a new empty store over a replica that holds rows")
		f = leasedFleet(root, fleet.Options{CreateOnDemand: fleet.OnDemandCreate})
		l, err = f.Acquire(ctx, acme)
		if err == nil {
			DeferCleanup(l.Release)
		}
		Expect(err).To(MatchError(replica.ErrDiverged))
		Expect(recordstore.Code(err)).To(Equal("diverged"))
		removeStore(f, acme)

		By("with the option, a key whose replica is empty")
		beta := tenant("beta")
		f = restoringFleet(root, fleet.Options{})
		_, err = f.Acquire(ctx, beta)
		Expect(err).To(MatchError(recordstore.ErrNotFound))
		betaAbs, err := f.Path(beta)
		Expect(err).NotTo(HaveOccurred())
		Expect(betaAbs).NotTo(BeAnExistingFile())
		Expect(f.Close()).To(Succeed())

		f = restoringFleet(root, fleet.Options{CreateOnDemand: fleet.OnDemandCreate})
		l, err = f.Acquire(ctx, beta)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(l.Release)
		Expect(highSeq(l.Store())).To(Equal(int64(0)))
		Expect(l.Store().Role()).To(Equal(owner.RoleOwner))
	})

	It("refuses a replica that records another key with ErrMisplaced, making no store file", func() {
		// beta's store replicates where acme's replica belongs.
		misplaced := func(string) (owner.Replicator, error) { return reps(acme.ReplicaPrefix()) }
		root := newRoot()
		beta := tenant("beta")
		f := openFleet(root, fleet.Options{Open: fleet.DefaultOpener(fleet.StoreOptions{Replica: misplaced, EagerElection: true})})
		Expect(f.Provision(ctx, beta)).To(Succeed())
		appendNotes(f, beta, "1", "2")
		Expect(f.Close()).To(Succeed())

		f = restoringFleet(root, fleet.Options{CreateOnDemand: fleet.OnDemandCreate})
		_, err := f.Acquire(ctx, acme)
		Expect(err).To(MatchError(fleet.ErrMisplaced))
		Expect(err).To(MatchError(replica.ErrCheckFailed))
		abs, err := f.Path(acme)
		Expect(err).NotTo(HaveOccurred())
		Expect(abs).NotTo(BeAnExistingFile())
		Expect(abs + "-wal").NotTo(BeAnExistingFile())
	})

	It("refuses a RestoreMissing that has no replica address, or no lease to restore under, creating nothing", func() {
		_, err := fleet.Open(newRoot(), fleet.Options{Mode: fleet.ModeTenant, RestoreMissing: true})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		_, err = fleet.Open(newRoot(), fleet.Options{Mode: fleet.ModeTenant, RestoreMissing: true, Replica: "ftp://x/y"})
		Expect(err).To(MatchError(replica.ErrBadURL))

		root, abs := replicated()
		f := openFleet(root, fleet.Options{RestoreMissing: true, Replica: addr,
			Open: fleet.DefaultOpener(fleet.StoreOptions{Replica: reps})})
		_, err = f.Acquire(ctx, acme)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(abs).NotTo(BeAnExistingFile())
	})

	It("lets one of two hosts opening a missing tenant at once own it; the other waits as a non-owner on a restored copy", func() {
		_, _ = replicated()
		// Two roots: two hosts' disks, sharing the bucket.
		fa := restoringFleet(newRoot(), fleet.Options{})
		fb := restoringFleet(newRoot(), fleet.Options{})
		leases := make([]*fleet.Lease, 2)
		var wg sync.WaitGroup
		for i, f := range []*fleet.Fleet{fa, fb} {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				l, err := f.Acquire(ctx, acme)
				Expect(err).NotTo(HaveOccurred())
				leases[i] = l
			}()
		}
		wg.Wait()
		for _, l := range leases {
			if l != nil {
				DeferCleanup(l.Release)
			}
		}
		owners := 0
		for _, l := range leases {
			Expect(highSeq(l.Store())).To(Equal(int64(5)))
			if l.Store().Role() == owner.RoleOwner {
				owners++
			} else {
				Expect(l.Store().Role()).To(Equal(owner.RoleNonOwner))
			}
		}
		Expect(owners).To(Equal(1))
		own, other := leases[0].Store(), leases[1].Store()
		ownFleet, otherFleet := fa, fb
		if own.Role() != owner.RoleOwner {
			own, other = other, own
			ownFleet, otherFleet = fb, fa
		}

		// While both are open, one owns the store at every moment.
		var both atomic.Bool
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
				if own.Role() == owner.RoleOwner && other.Role() == owner.RoleOwner {
					both.Store(true)
				}
			}
		}()
		_, err := own.Append(ctx, "s", noteKind.Name, []recordstore.Row{{"id": "6"}},
			owner.AppendOptions{WriteOptions: owner.WriteOptions{Replicated: true}})
		Expect(err).NotTo(HaveOccurred())
		Consistently(other.Role, 2*time.Second, 50*time.Millisecond).Should(Equal(owner.RoleNonOwner))
		close(stop)
		<-sampled
		Expect(both.Load()).To(BeFalse())

		By("the owner's host closes the store: the other takes the lease and the replica's newest state")
		for _, l := range leases {
			l.Release()
		}
		Expect(ownFleet.Close()).To(Succeed())
		Eventually(func(g Gomega) {
			l, err := otherFleet.Acquire(ctx, acme)
			g.Expect(err).NotTo(HaveOccurred())
			defer l.Release()
			g.Expect(l.Store().Role()).To(Equal(owner.RoleOwner))
			m, err := l.Store().Backend().Meta(ctx, "s")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(m.HighSeq).To(Equal(int64(6)))
		}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	})
})
