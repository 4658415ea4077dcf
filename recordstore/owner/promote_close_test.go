// Close racing a promotion: a non-owner whose promoter becomes the owner
// while Close waits for it must leave as an owner does.

package owner_test

import (
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

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
