// Specs for followers sharing one handle: several Opens of one path in a
// process, each following a stream with recordstore.Tail on a store another
// handle owns, stopped and closed one after another while rows arrive.

package records_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
)

var _ = Describe("Tails on shared non-owner handles", func() {
	const (
		handles = 8
		rounds  = 6
		// shortTails is how many Tails each handle runs, and stops, in
		// each round.
		shortTails = 300
	)

	It("end with nil or their context's error as the handles close one by one, and a closed handle's Tail fails with ErrClosed", func() {
		ctx := context.Background()
		dir := GinkgoT().TempDir()
		path := filepath.Join(dir, "store", "records.sqlite")
		Expect(os.MkdirAll(filepath.Dir(path), 0o700)).To(Succeed())
		// The owner opens the store through a link to its folder: another
		// path, so another handle, which takes the lock; the Opens of path
		// then share one non-owner handle.
		link := filepath.Join(dir, "link")
		Expect(os.Symlink(filepath.Dir(path), link)).To(Succeed())
		own, err := records.Open(ctx, filepath.Join(link, "records.sqlite"), records.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(own.Close)
		Expect(own.Role()).To(Equal(owner.RoleOwner))
		_, err = own.Backend().DeclareKind(ctx, events)
		Expect(err).NotTo(HaveOccurred())

		// The owner appends all along, so that the Tails are reading when
		// they are stopped.
		writing, stopWriting := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			for i := 0; writing.Err() == nil; i++ {
				_, err := own.Backend().Append(ctx, "tail", "events", []recordstore.Row{{"msg": fmt.Sprint(i)}})
				Expect(err).NotTo(HaveOccurred())
				time.Sleep(time.Millisecond)
			}
		}()
		DeferCleanup(func() { stopWriting(); wg.Wait() })

		for round := range rounds {
			type following struct {
				st     *records.Store
				cancel context.CancelFunc
				tailed chan error
			}
			fs := make([]following, handles)
			for i := range fs {
				st, err := records.Open(ctx, path, records.Options{SweepInterval: -1})
				Expect(err).NotTo(HaveOccurred())
				Expect(st.Role()).To(Equal(owner.RoleNonOwner))
				if i > 0 {
					Expect(st).To(BeIdenticalTo(fs[0].st), "one handle per path in a process")
				}
				c, cancel := context.WithCancel(ctx)
				f := following{st: st, cancel: cancel, tailed: make(chan error, 1)}
				go func() {
					f.tailed <- recordstore.Tail(c, st.Backend(), "tail", 0, func(recordstore.Record) error { return nil })
				}()
				fs[i] = f
			}
			b := fs[0].st.Backend()
			Eventually(func() (int64, error) {
				m, err := b.Meta(ctx, "tail")
				return m.HighSeq, err
			}).WithTimeout(waitLong).Should(BeNumerically(">", 0))
			// Meanwhile more Tails on each handle, each stopped after a
			// moment, most of them while they read.
			var short sync.WaitGroup
			for i, f := range fs {
				short.Add(1)
				go func() {
					defer GinkgoRecover()
					defer short.Done()
					r := rand.New(rand.NewPCG(uint64(round), uint64(i)))
					for range shortTails {
						m, err := f.st.Backend().Meta(ctx, "tail")
						Expect(err).NotTo(HaveOccurred())
						c, cancel := context.WithTimeout(ctx, time.Duration(r.IntN(400))*time.Microsecond)
						err = recordstore.Tail(c, f.st.Backend(), "tail", max(0, m.HighSeq-2), func(recordstore.Record) error { return nil })
						cancel()
						if err != nil {
							Expect(err).To(MatchError(context.DeadlineExceeded), "round %d, handle %d", round, i)
						}
					}
				}()
			}
			short.Wait()
			// Stop them one by one: odd ones have their Tail cancelled
			// before their Close, even ones just after it (their Tail
			// goes on on the shared handle until then).
			for i, f := range fs {
				if i%2 == 1 {
					f.cancel()
					Expect(f.st.Close()).To(Succeed())
				} else {
					Expect(f.st.Close()).To(Succeed())
					f.cancel()
				}
				var err error
				Eventually(f.tailed).WithTimeout(waitLong).Should(Receive(&err))
				if err != nil && !errors.Is(err, context.Canceled) {
					Expect(errors.Is(err, recordstore.ErrClosed)).To(BeTrue(), "round %d, handle %d: %v", round, i, err)
					Expect(i).To(Equal(handles-1), "round %d: only the last Close closes the handle: %v", round, err)
				}
			}
			err := recordstore.Tail(ctx, b, "tail", 0, func(recordstore.Record) error { return nil })
			Expect(errors.Is(err, recordstore.ErrClosed)).To(BeTrue(), "Tail on a closed handle: %v", err)
			_, err = b.Scan(ctx, "tail", recordstore.ScanOptions{})
			Expect(errors.Is(err, recordstore.ErrClosed)).To(BeTrue(), "Scan on a closed handle: %v", err)
		}
	})
})
