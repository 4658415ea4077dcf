// Specs for the stream check a non-owner skips (noticeFilter.knowsTakes):
// after its own fast-path appends to a stream, with every commit announced
// since its own, a producer does not read the stream from the file before
// the next append; a commit of another writer makes it read it again, and
// an append to a stream another process sealed is refused either way.

package owner_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// hintedBackend is a *sqlite.Backend whose takes hint (owner.TakesHinted)
// counts its answers: known when the stream check was skipped.
type hintedBackend struct {
	*sqlite.Backend
	known, unknown atomic.Int64
}

// SetTakesHint installs known, counting its answers.
func (b *hintedBackend) SetTakesHint(known func(stream, kind string) bool) {
	b.Backend.SetTakesHint(func(stream, kind string) bool {
		ok := known(stream, kind)
		if ok {
			b.known.Add(1)
		} else {
			b.unknown.Add(1)
		}
		return ok
	})
}

var _ owner.TakesHinted = (*hintedBackend)(nil)

// openHinted opens the store at path in this process as a non-owner that
// never promotes, on a hintedBackend.
func openHinted(path string) *owner.Store[*hintedBackend] {
	GinkgoHelper()
	s, err := owner.Open(context.Background(), owner.Options[*hintedBackend]{
		Path: path, CatalogVersion: sqlite.CatalogVersion, NoPromotion: true, StartWait: wait,
		Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*hintedBackend, error) {
			b, err := sqlite.Open(ctx, path, sqlite.Options{ReadOnly: readOnly, Submit: submit, SweepInterval: -1})
			if err != nil {
				return nil, err
			}
			return &hintedBackend{Backend: b}, nil
		},
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(s.Close)
	Expect(s.Role()).To(Equal(owner.RoleNonOwner))
	return s
}

var _ = Describe("a non-owner's stream check", func() {
	It("is skipped after its own appends, made again after another writer's commit, and a sealed stream refused either way", func() {
		path := storePath()
		own := startOwner(path, fast(), nil, hold())
		DeferCleanup(own.Kill)
		Expect(own.Release()).To(Succeed())

		s := openHinted(path)
		Eventually(func() string {
			st, err := s.Status(context.Background())
			Expect(err).NotTo(HaveOccurred())
			return st.Wake
		}).WithTimeout(wait).Should(Equal(owner.WakePush))
		other := openHinted(path) // another writer: a store of its own

		ctx := context.Background()
		b := s.Backend()
		appendOne := func(i int) error {
			_, err := b.Append(ctx, "mine", "event", []recordstore.Row{{"k": fmt.Sprintf("m%d", i), "n": int64(i)}})
			return err
		}
		const n = 20
		for i := range n {
			Expect(appendOne(i)).To(Succeed())
		}
		// The first appends read the stream: the subscription's first
		// notice counts the commits made before it (the declaration).
		Expect(b.known.Load()).To(BeNumerically(">=", n-5), "unknown %d", b.unknown.Load())
		Expect(b.known.Load() + b.unknown.Load()).To(Equal(int64(n)))

		// Another writer seals the stream. The next append is refused
		// with the seal's error whether its check ran or the owner
		// refused it (the seal's notice still on its way).
		_, err := other.Backend().Seal(ctx, "mine")
		Expect(err).NotTo(HaveOccurred())
		Expect(appendOne(n)).To(MatchError(recordstore.ErrSealed))
		// Once the notice is in, the check reads the file again.
		Eventually(func() int64 {
			before := b.unknown.Load()
			Expect(appendOne(n)).To(MatchError(recordstore.ErrSealed))
			return b.unknown.Load() - before
		}).WithTimeout(wait).WithPolling(10 * time.Millisecond).Should(Equal(int64(1)))

		// Each of the n appends is in the stream once.
		m, err := b.Meta(ctx, "mine")
		Expect(err).NotTo(HaveOccurred())
		Expect(m.HighSeq).To(Equal(int64(n)))
		Expect(m.Sealed).To(BeTrue())
	})
})
