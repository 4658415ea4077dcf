// Specs of the identity index: a list of an unchanged fleet opens no store
// file, a file changed in any way its stat shows is read again, and a
// corrupt index is ignored and rebuilt.

//go:build linux

package fleet_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fb46ecde/records/recordstore/fleet"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// ctimeOf is the change time of the file at p.
func ctimeOf(p string) time.Time {
	fi, err := os.Lstat(p)
	Expect(err).NotTo(HaveOccurred())
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		Skip("no change time on this platform")
	}
	return time.Unix(st.Ctim.Unix())
}

// waitClockPast waits until a file written now gets a change time later
// than the file at p's: the kernel stamps files from a coarse clock, so a
// file changed right after another may get the very same time.
func waitClockPast(p string) {
	was := ctimeOf(p)
	probe := filepath.Join(GinkgoT().TempDir(), "probe")
	Eventually(func() bool {
		Expect(os.WriteFile(probe, []byte("x"), 0o600)).To(Succeed())
		return ctimeOf(probe).After(was)
	}).WithTimeout(30 * time.Second).WithPolling(time.Millisecond).Should(BeTrue())
}

var _ = Describe("The identity index of List and ListPage", func() {
	var (
		root   string
		f      *fleet.Fleet
		ctx    = context.Background()
		opened []string // files whose identity List or ListPage read
		logs   *bytes.Buffer
	)
	BeforeEach(func() {
		root = newRoot()
		logs = &bytes.Buffer{}
		f = openFleet(root, fleet.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
		for _, id := range []string{"alpha", "bravo", "delta"} {
			Expect(f.Provision(ctx, tenant(id))).To(Succeed())
		}
		opened = nil
		f.SetInspected(func(rel string) { opened = append(opened, rel) })
	})
	rel := func(id string) string { return must(f.Template().Path(tenant(id))) }
	abs := func(id string) string { return filepath.Join(root, rel(id)) }
	list := func() fleet.Listing {
		opened = nil
		l, err := f.List(ctx, fleet.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		return l
	}
	keys := func(l fleet.Listing) []string {
		var ks []string
		for _, e := range l.Stores {
			ks = append(ks, e.Key)
		}
		return ks
	}

	It("lists an unchanged fleet again without opening any store file, and is no stray itself", func() {
		first := list()
		Expect(opened).To(ConsistOf(rel("alpha"), rel("bravo"), rel("delta")))
		fi, err := os.Lstat(filepath.Join(root, fleet.IndexName))
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))

		second := list()
		Expect(opened).To(BeEmpty())
		Expect(second).To(Equal(first))
		Expect(second.Skipped).To(BeEmpty())
		s, err := f.DiskStats(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Stores).To(Equal(3))
		Expect(s.Skipped).To(BeZero())
		Expect(opened).To(BeEmpty())
		p, err := f.ListPage(ctx, "", 2)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Stores).To(HaveLen(2))
		Expect(opened).To(BeEmpty())
	})

	It("keeps what a page read for the next list, which reads only the others", func() {
		p, err := f.ListPage(ctx, "", 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Stores).To(HaveLen(1))
		Expect(opened).To(ConsistOf(p.Stores[0].Path))
		l := list()
		Expect(keys(l)).To(ConsistOf("tenant:alpha", "tenant:bravo", "tenant:delta"))
		Expect(opened).To(HaveLen(2))
		Expect(opened).NotTo(ContainElement(p.Stores[0].Path))
	})

	DescribeTable("reads again a store file replaced at its path by another store's file of the same size",
		func(replace func(src, dst string)) {
			list()
			before, err := os.Lstat(abs("alpha"))
			Expect(err).NotTo(HaveOccurred())
			other, err := os.Lstat(abs("bravo"))
			Expect(err).NotTo(HaveOccurred())
			Expect(other.Size()).To(Equal(before.Size()))

			waitClockPast(abs("alpha"))
			replace(abs("bravo"), abs("alpha"))
			after, err := os.Lstat(abs("alpha"))
			Expect(err).NotTo(HaveOccurred())
			Expect(after.Size()).To(Equal(before.Size()))
			Expect(after.ModTime()).To(Equal(before.ModTime()))

			l := list()
			Expect(opened).To(Equal([]string{rel("alpha")}))
			Expect(keys(l)).To(ConsistOf("tenant:bravo", "tenant:delta"))
			Expect(l.Skipped).To(ConsistOf(fleet.Skipped{Path: rel("alpha"), Reason: "misplaced: records tenant:bravo"}))
			p, err := f.ListPage(ctx, "", 10)
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Stores).To(HaveLen(2))
			Expect(opened).To(Equal([]string{rel("alpha")}), "the misplaced file is remembered as such")
		},
		Entry("renamed over it (another inode), its mtime set to the old file's", func(src, dst string) {
			fi, err := os.Lstat(dst)
			Expect(err).NotTo(HaveOccurred())
			tmp := dst + ".new"
			Expect(os.WriteFile(tmp, must(os.ReadFile(src)), 0o600)).To(Succeed())
			Expect(os.Chtimes(tmp, fi.ModTime(), fi.ModTime())).To(Succeed())
			Expect(os.Rename(tmp, dst)).To(Succeed())
		}),
		Entry("copied into it (the same inode), its mtime set back: only the change time tells", func(src, dst string) {
			fi, err := os.Lstat(dst)
			Expect(err).NotTo(HaveOccurred())
			ino := fi.Sys().(*syscall.Stat_t).Ino
			Expect(os.WriteFile(dst, must(os.ReadFile(src)), 0o600)).To(Succeed())
			Expect(os.Chtimes(dst, fi.ModTime(), fi.ModTime())).To(Succeed())
			now, err := os.Lstat(dst)
			Expect(err).NotTo(HaveOccurred())
			Expect(now.Sys().(*syscall.Stat_t).Ino).To(Equal(ino))
		}),
	)

	It("forgets a deleted store and reads the store provisioned again at its path", func() {
		list()
		waitClockPast(abs("alpha")) // the new file's times differ from the old's even if its inode is the old one's
		Expect(f.Delete(ctx, tenant("alpha"))).To(Succeed())
		Expect(keys(list())).To(ConsistOf("tenant:bravo", "tenant:delta"))
		Expect(opened).To(BeEmpty())
		Expect(f.Provision(ctx, tenant("alpha"))).To(Succeed())
		Expect(keys(list())).To(ConsistOf("tenant:alpha", "tenant:bravo", "tenant:delta"))
		Expect(opened).To(Equal([]string{rel("alpha")}))
	})

	DescribeTable("ignores a corrupt index, says so, lists right and rebuilds it",
		func(damage func(data []byte) []byte) {
			want := list()
			ip := filepath.Join(root, fleet.IndexName)
			data, err := os.ReadFile(ip)
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(ip, damage(data), 0o600)).To(Succeed())

			Expect(list()).To(Equal(want))
			Expect(opened).To(HaveLen(3))
			Expect(logs.String()).To(ContainSubstring("fleet index ignored"))
			Expect(list()).To(Equal(want))
			Expect(opened).To(BeEmpty())
		},
		Entry("a byte flipped", func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }),
		Entry("cut short", func(b []byte) []byte { return b[:len(b)-7] }),
		Entry("empty", func([]byte) []byte { return nil }),
		Entry("another file", func([]byte) []byte { return []byte("SQLite format 3\x00") }),
	)

	It("lists the same when the index cannot be read or written, and leaves what is in its place", func() {
		ip := filepath.Join(root, fleet.IndexName)
		Expect(os.Mkdir(ip, 0o700)).To(Succeed()) // a folder: neither read nor replaced
		want := list()
		Expect(keys(want)).To(ConsistOf("tenant:alpha", "tenant:bravo", "tenant:delta"))
		Expect(want.Skipped).To(BeEmpty())
		Expect(list()).To(Equal(want))
		Expect(opened).To(HaveLen(3))
		Expect(ip).To(BeADirectory())
		Expect(logs.String()).To(ContainSubstring("fleet index ignored"))
		Expect(logs.String()).To(ContainSubstring("fleet index not written"))
		Expect(listFiles(root)).NotTo(ContainElement(ContainSubstring(".tmp-")))
	})
})
