// Promotion in this process: a promoter that meets a lock error keeps
// trying, and a promotion completing while Close waits for it is closed as
// an owner.

package owner_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

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
		logs := gbytes.NewBuffer() // safe for the logger's goroutines
		s, err := owner.Open(ctx, owner.Options[*sqlite.Backend]{
			Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion,
			Logger: slog.New(slog.NewTextHandler(logs, nil)),
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(s.Close)
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
})
