// Specs for commit notices (push.go): a non-owner's followers woken by the
// owner's commit with the change feed's polling out of the way, the wake
// mode in status, notices that arrive while a probe of the file runs
// answered by one more probe, and a subscriber that reads nothing dropped
// without holding the writer up.

package owner_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
	rt "github.com/fb46ecde/records/recordstoretest"
)

// openFollower opens the store at path in this process as a non-owner
// that never promotes and whose change feed polls once an hour: only a
// push wakes its followers in a spec's time.
func openFollower(path string) *sqliteStore {
	GinkgoHelper()
	s, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
		Path: path, CatalogVersion: sqlite.CatalogVersion, NoPromotion: true, StartWait: wait,
		Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*sqlite.Backend, error) {
			return sqlite.Open(ctx, path, sqlite.Options{ReadOnly: readOnly, Submit: submit, SweepInterval: -1,
				ChangeInterval: time.Hour})
		},
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(s.Close)
	Expect(s.Role()).To(Equal(owner.RoleNonOwner))
	return s
}

// wakeOf returns the wake mode s reports in its status.
func wakeOf(s *sqliteStore) func() string {
	return func() string {
		st, err := s.Status(context.Background())
		if err != nil {
			return err.Error()
		}
		return st.Wake
	}
}

var _ = Describe("commit notices", func() {
	It("wake a follower in another process at the owner's commit, and say push or polling in status", func() {
		recheck := recordstore.FollowRecheck
		recordstore.FollowRecheck = time.Hour // Wait's own safety net out of the way
		DeferCleanup(func() { recordstore.FollowRecheck = recheck })
		path := storePath()
		own := startOwner(path, fast(), nil, appendGen("s", "a", 0, 1).Named("append"), hold().Named("after"))
		DeferCleanup(own.Kill)
		s := openFollower(path)
		Eventually(wakeOf(s)).WithTimeout(wait).Should(Equal(owner.WakePush))
		st, err := owner.ReadStatus(context.Background(), path, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Wake).To(Equal(owner.WakePush))
		Expect(st.Subscribers).To(BeNumerically(">=", 1))

		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		woken := make(chan recordstore.Meta, 1)
		go func() {
			defer GinkgoRecover()
			m, err := recordstore.Wait(ctx, s.Backend(), "s", 0)
			Expect(err).NotTo(HaveOccurred(), "no wake: the change feed polls once an hour")
			woken <- m
		}()
		Expect(own.Release()).To(Succeed())
		own.MustStepNamed("append", wait)
		var m recordstore.Meta
		Eventually(woken).WithTimeout(wait).Should(Receive(&m))
		Expect(m.HighSeq).To(Equal(int64(1)))

		Expect(own.Kill()).To(Succeed())
		Eventually(wakeOf(s)).WithTimeout(wait).Should(Equal(owner.WakePolling), "the owner is gone: polling")
	})

	It("wake a follower with one more probe of the file however many notices arrive while a probe runs", func() {
		const n = 5
		path := storePath()
		var then []rt.Step
		for i := range n {
			then = append(then, appendGen("s", "a", i, 1).Named(fmt.Sprintf("append-%d", i)), hold())
		}
		own := startOwner(path, fast(), nil, then...)
		DeferCleanup(own.Kill)

		var probes atomic.Int64
		var block atomic.Bool
		entered, release := make(chan struct{}, 1), make(chan struct{})
		s, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
			Path: path, CatalogVersion: sqlite.CatalogVersion, NoPromotion: true, StartWait: wait,
			Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*sqlite.Backend, error) {
				return sqlite.Open(ctx, path, sqlite.Options{ReadOnly: readOnly, Submit: submit, SweepInterval: -1,
					ChangeInterval: time.Hour, BeforeChangeProbe: func() {
						probes.Add(1)
						if block.CompareAndSwap(true, false) {
							entered <- struct{}{}
							<-release
						}
					}})
			},
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(s.Close)
		Expect(s.Role()).To(Equal(owner.RoleNonOwner))
		Eventually(wakeOf(s)).WithTimeout(wait).Should(Equal(owner.WakePush))
		notices := func() uint64 {
			st, err := s.Status(context.Background())
			Expect(err).NotTo(HaveOccurred())
			return st.Notices
		}
		// The poll a new subscription runs at once has ended: one probe
		// per poll from here on.
		Eventually(probes.Load).WithTimeout(wait).Should(BeNumerically(">=", 1))
		Consistently(probes.Load, 200*time.Millisecond).Should(Equal(probes.Load()))
		before, seen := probes.Load(), notices()

		// The first commit's notice starts a probe, held; the next n-1
		// commits' notices arrive while it is held.
		block.Store(true)
		Expect(own.Release()).To(Succeed())
		own.MustStepNamed("append-0", wait)
		Eventually(entered).WithTimeout(wait).Should(Receive())
		for i := 1; i < n; i++ {
			Expect(own.Release()).To(Succeed())
			own.MustStepNamed(fmt.Sprintf("append-%d", i), wait)
			Eventually(notices).WithTimeout(wait).Should(BeNumerically(">=", seen+uint64(i+1)),
				"each commit its own notice: the next one is sent after this one was taken")
		}
		close(release)

		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		m, err := recordstore.Wait(ctx, s.Backend(), "s", n-1)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.HighSeq).To(Equal(int64(n)), "the held probe, released, saw every commit")
		// The notices taken while it was held ask for one more probe, which
		// follows it (it finds nothing new), and no other.
		Eventually(probes.Load).WithTimeout(wait).Should(Equal(before + 2))
		Consistently(probes.Load, 300*time.Millisecond).Should(Equal(before+2),
			"the held probe and one more, not one per notice")
	})

	It("start no probe of the file for a follower's own fast-path appends, and still wake it for every other commit", func() {
		recheck := recordstore.FollowRecheck
		recordstore.FollowRecheck = time.Hour // Wait's own safety net out of the way
		DeferCleanup(func() { recordstore.FollowRecheck = recheck })
		// A notice that arrives before its append's answer is held for
		// it; on a loaded machine (or under -race) the answer may come
		// later than the default 5 ms, and the probe that then starts is
		// not the one this spec looks for.
		DeferCleanup(owner.SetNoticeHold(wait))
		const foreign = 20
		path := storePath()
		own := startOwner(path, fast(), nil, appendGen("theirs", "t", 0, 1).Named("first"), hold().Named("go"),
			appendGen("theirs", "t", 1, foreign-1).Named("rest"), hold())
		DeferCleanup(own.Kill)
		Expect(own.Release()).To(Succeed())
		own.MustStepNamed("first", wait)

		var probes atomic.Int64
		s, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
			Path: path, CatalogVersion: sqlite.CatalogVersion, NoPromotion: true, StartWait: wait,
			Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*sqlite.Backend, error) {
				return sqlite.Open(ctx, path, sqlite.Options{ReadOnly: readOnly, Submit: submit, SweepInterval: -1,
					ChangeInterval: time.Hour, BeforeChangeProbe: func() { probes.Add(1) }})
			},
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(s.Close)
		Eventually(wakeOf(s)).WithTimeout(wait).Should(Equal(owner.WakePush))
		notices := func() uint64 {
			st, err := s.Status(context.Background())
			Expect(err).NotTo(HaveOccurred())
			return st.Notices
		}
		ctx := context.Background()
		appendOwn := func(i int) {
			_, err := s.Backend().Append(ctx, "mine", "event", []recordstore.Row{{"k": fmt.Sprintf("m%d", i), "n": int64(i)}})
			Expect(err).NotTo(HaveOccurred())
		}
		// The stream's first append (its statements prepared), and the
		// first notice of the subscription, which probes: it also counts
		// the commits made before.
		appendOwn(0)
		Eventually(notices).WithTimeout(wait).Should(BeNumerically(">=", 1))
		Eventually(func() bool {
			n := probes.Load()
			time.Sleep(200 * time.Millisecond)
			return n >= 1 && probes.Load() == n
		}).WithTimeout(wait).Should(BeTrue(), "the probes settle")

		// Appends of this process alone: each commit is announced, none
		// makes it probe the file, and a follower of the stream here is
		// woken by the answer.
		before, seen := probes.Load(), notices()
		woken := make(chan recordstore.Meta, 1)
		go func() {
			defer GinkgoRecover()
			wctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			m, err := recordstore.Wait(wctx, s.Backend(), "mine", 10)
			Expect(err).NotTo(HaveOccurred())
			woken <- m
		}()
		for i := 1; i <= 10; i++ {
			appendOwn(i)
		}
		Eventually(woken).WithTimeout(wait).Should(Receive())
		Eventually(notices).WithTimeout(wait).Should(BeNumerically(">=", seen+10))
		Consistently(probes.Load, 300*time.Millisecond).Should(Equal(before),
			"no probe for notices of this process's own commits")

		// Another process's commits, while this one keeps appending: each
		// reaches a follower here (the feed polls once an hour).
		got := make(chan recordstore.Meta, 1)
		go func() {
			defer GinkgoRecover()
			wctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			var m recordstore.Meta
			for m.HighSeq < foreign {
				var err error
				m, err = recordstore.Wait(wctx, s.Backend(), "theirs", m.HighSeq)
				Expect(err).NotTo(HaveOccurred(), "a commit of the owner's never woke the follower")
			}
			got <- m
		}()
		Expect(own.Release()).To(Succeed())
		for i := 11; ; i++ {
			appendOwn(i)
			select {
			case m := <-got:
				Expect(m.HighSeq).To(Equal(int64(foreign)))
				Expect(probes.Load()).To(BeNumerically(">", before))
				return
			default:
			}
			Expect(i).To(BeNumerically("<", 100000), "the follower was not woken")
		}
	})

	It("drop a subscriber that reads nothing, and never hold the writer up for it", func() {
		path := storePath()
		s, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
			Path: path, CatalogVersion: sqlite.CatalogVersion, Open: sqliteOpener(path)})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(s.Close)
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		ctx := context.Background()
		_, err = s.Backend().DeclareKind(ctx, *eventKind())
		Expect(err).NotTo(HaveOccurred())

		c, err := net.Dial("unix", owner.PathsFor(path).Socket)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		Expect(json.NewEncoder(c).Encode(owner.Request{Protocol: owner.Protocol, Action: owner.ActionSubscribe})).To(Succeed())
		r := bufio.NewReader(c)
		line, err := r.ReadBytes('\n')
		Expect(err).NotTo(HaveOccurred())
		var resp owner.Response
		Expect(json.Unmarshal(line, &resp)).To(Succeed())
		Expect(resp.OK).To(BeTrue(), "%s", line)
		Expect(s.Status(ctx)).To(HaveField("Subscribers", int64(1)))

		appendOne := func() {
			_, err := s.Backend().Append(ctx, "s", "event", []recordstore.Row{{"k": "x"}})
			Expect(err).NotTo(HaveOccurred())
		}
		appendOne()
		line, err = r.ReadBytes('\n')
		Expect(err).NotTo(HaveOccurred())
		n, err := owner.DecodeNotice(line)
		Expect(err).NotTo(HaveOccurred())
		Expect(n.Commit).To(BeNumerically(">=", 1))

		// From now on nothing is read: the socket's buffer fills, the
		// owner's write to it times out and the subscriber is dropped,
		// while every append returns.
		Eventually(func() int64 {
			for range 100 {
				appendOne()
			}
			st, err := s.Status(ctx)
			Expect(err).NotTo(HaveOccurred())
			return st.Subscribers
		}).WithTimeout(wait).WithPolling(10 * time.Millisecond).Should(BeZero())
	})
})
