package owner

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("watchFolder (inotify)", func() {
	It("shares one instance between watches, tells each only of its own folder, and closes it after the last", func() {
		root := GinkgoT().TempDir()
		a, b, elsewhere := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "src")
		for _, d := range []string{a, b, elsewhere} {
			Expect(os.Mkdir(d, 0o700)).To(Succeed())
		}
		var inA, inB atomic.Int32
		stopA, err := watchFolder(a, func() { inA.Add(1) })
		Expect(err).NotTo(HaveOccurred())
		hub.mu.Lock()
		first := hub.f
		hub.mu.Unlock()
		stopB, err := watchFolder(b, func() { inB.Add(1) })
		Expect(err).NotTo(HaveOccurred())
		hub.mu.Lock()
		Expect(hub.f).To(BeIdenticalTo(first), "one instance for both")
		hub.mu.Unlock()

		move := func(name, into string) {
			src := filepath.Join(elsewhere, name)
			Expect(os.Mkdir(src, 0o700)).To(Succeed())
			Expect(os.Rename(src, filepath.Join(into, name))).To(Succeed())
		}
		move("one", a)
		Eventually(inA.Load).Should(BeNumerically(">=", 1))
		Consistently(inB.Load, 100*time.Millisecond).Should(BeZero(), "b hears nothing of a")
		// Moves out of a watched folder and writes inside it wake nothing.
		seen := inA.Load()
		Expect(os.WriteFile(filepath.Join(a, "one", "file"), []byte("x"), 0o600)).To(Succeed())
		Expect(os.Rename(filepath.Join(a, "one"), filepath.Join(elsewhere, "one"))).To(Succeed())
		Consistently(inA.Load, 100*time.Millisecond).Should(Equal(seen))
		move("two", b)
		Eventually(inB.Load).Should(BeNumerically(">=", 1))

		stopA()
		move("three", a)
		Consistently(inA.Load, 100*time.Millisecond).Should(Equal(seen), "a stopped watch hears nothing")
		hub.mu.Lock()
		Expect(hub.f).To(BeIdenticalTo(first), "b still watches")
		hub.mu.Unlock()
		stopB()
		hub.mu.Lock()
		Expect(hub.f).To(BeNil(), "closed after the last watch")
		hub.mu.Unlock()
		hub.closing.Wait()
		Expect(first.Close()).To(MatchError(os.ErrClosed))
	})

	It("closes an idle instance in the background: stopping the last watch does not wait for it", func() {
		release := make(chan struct{})
		closed := make(chan *os.File, 1)
		hub.mu.Lock()
		hub.closeFile = func(f *os.File) error {
			<-release
			closed <- f
			return f.Close()
		}
		hub.mu.Unlock()
		DeferCleanup(func() {
			hub.mu.Lock()
			hub.closeFile = (*os.File).Close
			hub.mu.Unlock()
		})
		dir := GinkgoT().TempDir()
		stop, err := watchFolder(dir, func() {})
		Expect(err).NotTo(HaveOccurred())
		hub.mu.Lock()
		first := hub.f
		hub.mu.Unlock()
		stop() // returns while the close is held
		Expect(closed).To(BeEmpty())

		// A watch meanwhile gets an instance of its own.
		again, err := watchFolder(dir, func() {})
		Expect(err).NotTo(HaveOccurred())
		hub.mu.Lock()
		Expect(hub.f).NotTo(BeNil())
		Expect(hub.f).NotTo(BeIdenticalTo(first))
		hub.mu.Unlock()

		close(release)
		Expect(<-closed).To(BeIdenticalTo(first))
		again()
		hub.closing.Wait()
		Expect(first.Close()).To(MatchError(os.ErrClosed))
		hub.mu.Lock()
		Expect(hub.f).To(BeNil())
		hub.mu.Unlock()
	})
})
