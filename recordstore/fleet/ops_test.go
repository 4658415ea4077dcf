// Specs of delete, backup, import and list.

package fleet_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// startChild starts the test binary running verb on root and key and
// waits until it prints want; stop ends it (closing its stdin) and waits.
func startChild(verb, root, key, want string) (stop func() string) {
	cmd := childCmd(verb, root, key)
	in, err := cmd.StdinPipe()
	Expect(err).NotTo(HaveOccurred())
	out, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(cmd.Start()).To(Succeed())
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	Expect(err).NotTo(HaveOccurred())
	Expect(strings.TrimSpace(line)).To(Equal(want))
	return func() string {
		in.Close()
		rest, _ := r.ReadString('\n')
		_ = cmd.Wait()
		return strings.TrimSpace(rest)
	}
}

var _ = Describe("Fleet operations", func() {
	var (
		root string
		f    *fleet.Fleet
		ctx  = context.Background()
	)
	BeforeEach(func() {
		root = newRoot()
		f = openFleet(root, fleet.Options{})
	})
	path := func(k fleet.Key) string {
		p, err := f.Path(k)
		Expect(err).NotTo(HaveOccurred())
		return p
	}

	Describe("delete", func() {
		It("removes the file, its sidecars, its spool and the emptied bucket folder, never the root", func() {
			k := tenant("acme")
			Expect(f.Provision(ctx, k)).To(Succeed())
			appendNote(f, k, "n1")
			Expect(path(k) + ".lock").To(BeAnExistingFile())
			Expect(f.Delete(ctx, k)).To(Succeed())
			Expect(listFiles(root)).To(BeEmpty())
			Expect(root).To(BeADirectory())
			_, err := f.Acquire(ctx, k)
			Expect(err).To(MatchError(recordstore.ErrNotFound))
		})

		It("keeps a bucket folder that holds another store", func() {
			k := tenant("acme")
			Expect(f.Provision(ctx, k)).To(Succeed())
			other := filepath.Join(filepath.Dir(path(k)), "keep.txt")
			Expect(os.WriteFile(other, nil, 0o600)).To(Succeed())
			Expect(f.Delete(ctx, k)).To(Succeed())
			Expect(other).To(BeAnExistingFile())
			Expect(path(k)).NotTo(BeAnExistingFile())
		})

		It("is refused while another process owns the store, and removes nothing", func() {
			k := tenant("acme")
			Expect(f.Provision(ctx, k)).To(Succeed())
			stop := startChild("hold", root, k.String(), "held")
			err := f.Delete(ctx, k)
			Expect(err).To(MatchError(fleet.ErrInUse))
			Expect(recordstore.Code(err)).To(Equal("in_use"))
			Expect(path(k)).To(BeAnExistingFile())
			Expect(stop()).To(Equal("ok"))
			Expect(f.Delete(ctx, k)).To(Succeed())
			Expect(path(k)).NotTo(BeAnExistingFile())
		})

		It("answers not found for a key with no store", func() {
			Expect(f.Delete(ctx, tenant("ghost"))).To(MatchError(recordstore.ErrNotFound))
		})
	})

	Describe("backup and import", func() {
		It("takes a consistent copy while another process appends, and imports it back after a delete", func() {
			k := tenant("acme")
			Expect(f.Provision(ctx, k)).To(Succeed())
			stop := startChild("append", root, k.String(), "appending")
			dest := filepath.Join(GinkgoT().TempDir(), "acme.bak")
			Expect(f.Backup(ctx, k, dest)).To(Succeed())
			Expect(stop()).To(Equal("ok"))
			fi, err := os.Stat(dest)
			Expect(err).NotTo(HaveOccurred())
			Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))

			Expect(f.Delete(ctx, k)).To(Succeed())
			Expect(f.Import(ctx, k, dest)).To(Succeed())
			got := notes(f, k)
			Expect(got).NotTo(BeEmpty())
			for i, id := range got { // a prefix n1..nm: nothing torn
				Expect(id).To(Equal(fmt.Sprint("n", i+1)))
			}
			appendNote(f, k, "after")
		})

		It("never replaces a file at the destination", func() {
			k := tenant("acme")
			Expect(f.Provision(ctx, k)).To(Succeed())
			dest := filepath.Join(GinkgoT().TempDir(), "taken")
			Expect(os.WriteFile(dest, []byte("mine"), 0o600)).To(Succeed())
			Expect(f.Backup(ctx, k, dest)).To(MatchError(fleet.ErrExists))
			Expect(os.ReadFile(dest)).To(Equal([]byte("mine")))
		})

		It("refuses a destination folder others can write", func() {
			k := tenant("acme")
			Expect(f.Provision(ctx, k)).To(Succeed())
			dir := filepath.Join(GinkgoT().TempDir(), "open")
			Expect(os.Mkdir(dir, 0o700)).To(Succeed())
			Expect(os.Chmod(dir, 0o777)).To(Succeed())
			err := f.Backup(ctx, k, filepath.Join(dir, "b.db"))
			Expect(err).To(MatchError(fleet.ErrUnsafeDest))
			Expect(listFiles(dir)).To(BeEmpty())
		})

		DescribeTable("import refuses a source that is no store of the key, publishing nothing",
			func(make func(src string, f *fleet.Fleet)) {
				src := filepath.Join(GinkgoT().TempDir(), "src.db")
				make(src, f)
				before, _ := os.ReadFile(src)
				err := f.Import(ctx, tenant("acme"), src)
				Expect(err).To(MatchError(fleet.ErrInvalidSource))
				Expect(recordstore.Code(err)).To(Equal("invalid_source"))
				Expect(listFiles(root)).NotTo(ContainElement(ContainSubstring("acme")))
				Expect(listFiles(root)).NotTo(ContainElement(ContainSubstring(".staging")))
				Expect(os.ReadFile(src)).To(Equal(before))
			},
			Entry("not a SQLite file", func(src string, _ *fleet.Fleet) {
				Expect(os.WriteFile(src, []byte(strings.Repeat("garbage", 100)), 0o600)).To(Succeed())
			}),
			Entry("the backup of another key", func(src string, f *fleet.Fleet) {
				Expect(f.Provision(ctx, tenant("beta"))).To(Succeed())
				Expect(os.Remove(src)).To(Or(Succeed(), MatchError(os.ErrNotExist)))
				Expect(f.Backup(ctx, tenant("beta"), src)).To(Succeed())
			}),
		)

		It("refuses to import over an existing store", func() {
			k := tenant("acme")
			Expect(f.Provision(ctx, k)).To(Succeed())
			dest := filepath.Join(GinkgoT().TempDir(), "acme.bak")
			Expect(f.Backup(ctx, k, dest)).To(Succeed())
			Expect(f.Import(ctx, k, dest)).To(MatchError(fleet.ErrExists))
		})
	})

	Describe("list", func() {
		It("lists only stores: not symlinks, sidecars, strays, misplaced files, spools or staging folders", func() {
			for _, id := range []string{"alpha", "beta"} {
				Expect(f.Provision(ctx, tenant(id))).To(Succeed())
			}
			appendNote(f, tenant("alpha"), "n1") // lock, state, spool beside it
			pa := path(tenant("alpha"))
			Expect(os.WriteFile(filepath.Join(root, "notes.txt"), nil, 0o600)).To(Succeed())
			Expect(os.Mkdir(filepath.Join(filepath.Dir(pa), ".staging-x"), 0o700)).To(Succeed())
			gamma, _ := f.Template().Path(tenant("gamma"))
			Expect(os.MkdirAll(filepath.Join(root, filepath.Dir(gamma)), 0o700)).To(Succeed())
			data, err := os.ReadFile(pa)
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(filepath.Join(root, gamma), data, 0o600)).To(Succeed())
			delta, _ := f.Template().Path(tenant("delta"))
			Expect(os.MkdirAll(filepath.Join(root, filepath.Dir(delta)), 0o700)).To(Succeed())
			Expect(os.Symlink(pa, filepath.Join(root, delta))).To(Succeed())

			l, err := f.List(ctx, fleet.ListOptions{Open: true})
			Expect(err).NotTo(HaveOccurred())
			var keys []string
			for _, e := range l.Stores {
				keys = append(keys, e.Key)
				Expect(e.Size).To(BeNumerically(">", 0))
			}
			Expect(keys).To(ConsistOf("tenant:alpha", "tenant:beta"))
			Expect(l.Skipped).To(ConsistOf(
				fleet.Skipped{Path: "notes.txt", Reason: "stray"},
				fleet.Skipped{Path: gamma, Reason: "misplaced: records tenant:alpha"},
				fleet.Skipped{Path: delta, Reason: "symlink"},
			))
		})

		It("leaves no -wal or -shm beside stores and misplaced files no process has open", func() {
			Expect(f.Provision(ctx, tenant("alpha"))).To(Succeed())
			pa := path(tenant("alpha"))
			gamma, _ := f.Template().Path(tenant("gamma"))
			Expect(os.MkdirAll(filepath.Join(root, filepath.Dir(gamma)), 0o700)).To(Succeed())
			data, err := os.ReadFile(pa)
			Expect(err).NotTo(HaveOccurred())
			pg := filepath.Join(root, gamma)
			Expect(os.WriteFile(pg, data, 0o600)).To(Succeed())
			before, err := os.ReadFile(pg)
			Expect(err).NotTo(HaveOccurred())
			_, err = f.List(ctx, fleet.ListOptions{Open: true})
			Expect(err).NotTo(HaveOccurred())
			_, err = f.ListPage(ctx, "", 10)
			Expect(err).NotTo(HaveOccurred())
			for _, p := range []string{pa, pg} {
				Expect(p + "-wal").NotTo(BeAnExistingFile())
				Expect(p + "-shm").NotTo(BeAnExistingFile())
			}
			after, err := os.ReadFile(pg)
			Expect(err).NotTo(HaveOccurred())
			Expect(after).To(Equal(before))
		})

		It("fails with --open when a store cannot be read, after listing it", func() {
			k := tenant("acme")
			Expect(f.Provision(ctx, k)).To(Succeed())
			Expect(f.Provision(ctx, tenant("beta"))).To(Succeed())
			p := path(k)
			fi, err := os.Stat(p)
			Expect(err).NotTo(HaveOccurred())
			fh, err := os.OpenFile(p, os.O_WRONLY, 0)
			Expect(err).NotTo(HaveOccurred())
			_, err = fh.WriteAt([]byte(strings.Repeat("\xff", 2048)), fi.Size()-2048)
			Expect(err).NotTo(HaveOccurred())
			Expect(fh.Close()).To(Succeed())
			l, err := f.List(ctx, fleet.ListOptions{Open: true})
			Expect(err).To(MatchError(fleet.ErrUnreadable))
			Expect(l.Stores).To(HaveLen(2))
			_, err = f.List(ctx, fleet.ListOptions{})
			Expect(err).NotTo(HaveOccurred())
		})

		It("sums the stores in DiskStats", func() {
			Expect(f.Provision(ctx, tenant("alpha"))).To(Succeed())
			Expect(f.Provision(ctx, tenant("beta"))).To(Succeed())
			s, err := f.DiskStats(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(s.Stores).To(Equal(2))
			Expect(s.Bytes).To(BeNumerically(">", 0))
		})
	})
})
