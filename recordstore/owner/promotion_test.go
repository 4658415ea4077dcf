// Promotion in this process: a promoter that meets a lock error keeps
// trying, and a promotion completing while Close waits for it is closed as
// an owner.

package owner_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("Close during a promotion", Label("crash"), func() {
	It("stops the socket, removes the state and releases the lock when the promotion completes during Close", func(ctx SpecContext) {
		path := storePath()
		own := startOwner(path, fast(), nil)
		reached, proceed := make(chan struct{}), make(chan struct{})
		var once sync.Once
		s, err := owner.Open(ctx, owner.Options[*sqlite.Backend]{
			Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion,
			Failpoint: func(name string) {
				if name == owner.FailBeforeStateReady {
					once.Do(func() { close(reached); <-proceed })
				}
			},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Role()).To(Equal(owner.RoleNonOwner))
		Expect(own.Kill()).To(Succeed())
		Eventually(reached, wait).Should(BeClosed(), "the promoter took the lock")

		closed := make(chan error, 1)
		go func() { closed <- s.Close() }()
		Consistently(closed, 200*time.Millisecond).ShouldNot(Receive(), "Close waits for the promoter")
		close(proceed)
		var cerr error
		Eventually(closed, wait).Should(Receive(&cerr))
		Expect(cerr).NotTo(HaveOccurred())
		Expect(s.Role()).To(Equal(owner.RoleClosed))

		paths := owner.PathsFor(path)
		release, err := owner.Exclusive(paths.Lock, "")
		Expect(err).NotTo(HaveOccurred(), "Close released the lock")
		Expect(release()).To(Succeed())
		_, err = owner.ReadState(paths.State)
		Expect(err).To(MatchError(owner.ErrNoState))
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err = owner.Call(cctx, paths.Socket, owner.Request{Action: owner.ActionStatus})
		Expect(err).To(HaveOccurred(), "the socket is no longer served")
	})
})

var _ = Describe("the promoter", Label("crash"), func() {
	It("keeps trying after the lock file could not be opened, and promotes once the owner dies", func(ctx SpecContext) {
		path := storePath()
		own := startOwner(path, fast(), nil)
		s, logs := openLogged(ctx, path)
		Expect(s.Role()).To(Equal(owner.RoleNonOwner))

		// The promoter re-opens the lock file on every try: make that fail
		// by swapping a dangling symlink in. Every swap is one rename, so
		// the lock path never goes missing (the promoter would recreate it
		// and win a lock on a new file); the owner's lock file is kept by a
		// hard link and renamed back.
		lock := owner.PathsFor(path).Lock
		Expect(os.Link(lock, lock+".away")).To(Succeed())
		Expect(os.Symlink(filepath.Join(GinkgoT().TempDir(), "missing", "x.lock"), lock+".link")).To(Succeed())
		Expect(os.Rename(lock+".link", lock)).To(Succeed())
		Eventually(logs, wait).Should(gbytes.Say("promotion failed"))
		Expect(os.Rename(lock+".away", lock)).To(Succeed())

		Expect(own.Kill()).To(Succeed())
		Eventually(s.Role, wait, 20*time.Millisecond).Should(Equal(owner.RoleOwner))
	})

	It("keeps the lock while a promotion that made the backend writable cannot serve, and serves once it can", func(ctx SpecContext) {
		path := storePath()
		s, logs, squatter := promoteIntoSquattedSocket(ctx, path)
		paths := s.Paths()
		Consistently(func() bool { return lockFree(paths.Lock) }, 1500*time.Millisecond, 20*time.Millisecond).Should(BeFalse(),
			"its backend is writable: no other process may take the store, also between retries")
		Expect(strings.Count(string(logs.Contents()), "promoted but not serving")).To(Equal(1),
			"the same failure, retried every second, is logged once a minute")
		st, err := owner.ReadState(paths.State)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.PID).To(Equal(os.Getpid()))
		Expect(st.Phase).To(Equal(owner.PhaseStarting))

		Expect(squatter.Close()).To(Succeed())
		Eventually(s.Role, wait, 20*time.Millisecond).Should(Equal(owner.RoleOwner))
		Eventually(logs, wait).Should(gbytes.Say(`msg=promoted .*failedTries=([2-9]|\d\d)\n`))
		n := handBatch(path, "s", []recordstore.Row{{"k": "served"}}, nil)
		resp, err := ingestWait(paths.Socket, n, wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Results[0].Done).To(BeTrue())
		Expect(resp.Results[0].Result.Outcome).To(Equal(recordstore.OutcomeCommitted))
	})

	It("drains the spool, lets the lock go and removes its state file when it is closed while it retries serving", func(ctx SpecContext) {
		path := storePath()
		s, _, squatter := promoteIntoSquattedSocket(ctx, path)
		DeferCleanup(func() { _ = squatter.Close() }) // closed in the spec unless it fails first
		paths := s.Paths()
		Expect(lockFree(paths.Lock)).To(BeFalse())
		n := handBatch(path, "s", []recordstore.Row{{"k": "waiting"}}, nil)
		Expect(s.Close()).To(Succeed())
		Expect(lockFree(paths.Lock)).To(BeTrue())
		_, err := os.Lstat(paths.State)
		Expect(os.IsNotExist(err)).To(BeTrue(), "%v", err)

		Expect(squatter.Close()).To(Succeed())
		next := openInProcess(path, func(o *owner.Options[*sqlite.Backend]) { o.PollMin, o.PollMax = time.Hour, time.Hour })
		Expect(outcome(next, n)).To(Equal(recordstore.OutcomeCommitted), "applied by the closing process's drain")
		Expect(streamKeys(next, "s")).To(Equal([]string{"waiting"}))
	})
})

// promoteIntoSquattedSocket opens the store here beside an owner child,
// has another program take the socket's path (the child goes on serving on
// its own descriptor), and kills the child: this process's promotion makes
// its backend writable, then fails to serve. It returns the store, once it
// said so in its log, the log, and the squatting listener.
func promoteIntoSquattedSocket(ctx context.Context, path string) (*sqliteStore, *gbytes.Buffer, net.Listener) {
	GinkgoHelper()
	own := startOwner(path, fast(), nil)
	s, logs := openLogged(ctx, path)
	Expect(s.Role()).To(Equal(owner.RoleNonOwner))
	paths := s.Paths()
	Expect(os.Remove(paths.Socket)).To(Succeed())
	squatter, err := net.Listen("unix", paths.Socket)
	Expect(err).NotTo(HaveOccurred())
	Expect(own.Kill()).To(Succeed())
	Eventually(logs, wait).Should(gbytes.Say("promoted but not serving"))
	Expect(s.Role()).To(Equal(owner.RoleNonOwner))
	return s, logs, squatter
}

// lockFree reports whether the lock file at path can be taken (and lets
// it go again at once).
func lockFree(path string) bool {
	GinkgoHelper()
	l := flock.New(path)
	got, err := l.TryLock()
	Expect(err).NotTo(HaveOccurred())
	if got {
		Expect(l.Unlock()).To(Succeed())
	}
	return got
}

// openLogged opens the store in this process with default options, its
// log going to the buffer it returns.
func openLogged(ctx context.Context, path string) (*sqliteStore, *gbytes.Buffer) {
	GinkgoHelper()
	logs := gbytes.NewBuffer() // safe for the logger's goroutines
	s, err := owner.Open(ctx, owner.Options[*sqlite.Backend]{
		Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion,
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(s.Close)
	return s, logs
}
