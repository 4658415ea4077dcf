// Specs for Open's refusals (what it refuses creates nothing), for a read
// of a path with no store, and for the read-only open.

package records_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// listTree lists the paths under dir, relative to it, sorted.
func listTree(dir string) []string {
	var names []string
	Expect(filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		names = append(names, rel)
		return err
	})).To(Succeed())
	sort.Strings(names)
	return names
}

// withoutSidecars leaves out the -wal and -shm files SQLite itself may
// keep beside a database file it opened (a read-only open too, in a folder
// it can write).
func withoutSidecars(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, "-wal") || strings.HasSuffix(n, "-shm") {
			continue
		}
		out = append(out, n)
	}
	return out
}

// backupOf makes a store with stream s (two rows) and returns the path of
// a copy of it made the way a backup is: its live file alone, copied into
// a fresh folder as <dir>/v1/records.sqlite.
func backupOf() string {
	ctx := context.Background()
	src := filepath.Join(GinkgoT().TempDir(), "records.sqlite")
	st, err := records.Open(ctx, src, records.Options{SweepInterval: -1})
	Expect(err).NotTo(HaveOccurred())
	_, err = st.Backend().DeclareKind(ctx, events)
	Expect(err).NotTo(HaveOccurred())
	_, err = st.Backend().Append(ctx, "s", "events", []recordstore.Row{{"msg": "a"}, {"msg": "b"}})
	Expect(err).NotTo(HaveOccurred())
	Expect(st.Close()).To(Succeed())
	data, err := os.ReadFile(sqlite.LivePath(src))
	Expect(err).NotTo(HaveOccurred())
	dst := filepath.Join(GinkgoT().TempDir(), "records.sqlite")
	Expect(os.MkdirAll(filepath.Dir(sqlite.LivePath(dst)), 0o700)).To(Succeed())
	Expect(os.WriteFile(sqlite.LivePath(dst), data, 0o600)).To(Succeed())
	return dst
}

// nameLive is a NameLive that is never called: the options it is given
// with are refused first.
func nameLive() (string, []string, error) {
	Fail("NameLive called")
	return "", nil, nil
}

// subdir makes the folder dir/store and returns its path.
func subdir(dir string) string {
	p := filepath.Join(dir, "store")
	Expect(os.Mkdir(p, 0o700)).To(Succeed())
	return p
}

var _ = Describe("records.Open", func() {
	DescribeTable("refuses, creating nothing,",
		func(name string, opts records.Options, sentinel error, says string) {
			dir := GinkgoT().TempDir()
			st, err := records.Open(context.Background(), filepath.Join(dir, name), opts)
			if st != nil {
				DeferCleanup(st.Close)
			}
			Expect(err).To(MatchError(sentinel))
			Expect(err).To(MatchError(ContainSubstring(says)))
			left, rerr := os.ReadDir(dir)
			Expect(rerr).NotTo(HaveOccurred())
			Expect(left).To(BeEmpty(), "no lock, spool or live file")
		},
		Entry("a path named like SQLite's own files", "x.sqlite-wal", records.Options{}, recordstore.ErrInvalid, "SQLite's own"),
		Entry("a spool format no codec is registered for", "records.sqlite", records.Options{Owner: records.OwnerOptions{Format: "csv"}}, recordstore.ErrInvalid, `unknown codec "csv"`),
		Entry("with MustExist, a path with no store", "records.sqlite", records.Options{MustExist: true}, recordstore.ErrNotFound, "no store at "),
		Entry("with MustExist, a path in a folder that does not exist", "typo/records.sqlite", records.Options{MustExist: true}, recordstore.ErrNotFound, "no store at "),
		Entry("read-only, a path with no store", "records.sqlite", records.Options{ReadOnly: true}, recordstore.ErrNotFound, "no store at "),
	)

	DescribeTable("refuses options it sets itself, or that contradict each other, creating nothing,",
		func(opts records.Options, says string) {
			dir := GinkgoT().TempDir()
			st, err := records.Open(context.Background(), filepath.Join(dir, "records.sqlite"), opts)
			if st != nil {
				DeferCleanup(st.Close)
			}
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(recordstore.Code(err)).To(Equal("invalid"))
			Expect(err).To(MatchError(ContainSubstring(says)))
			Expect(listTree(dir)).To(Equal([]string{"."}), "no lock, spool or live file")
		},
		Entry("Owner.Path", records.Options{Owner: records.OwnerOptions{Path: "elsewhere"}}, "Owner.Path is set by records.Open"),
		Entry("Owner.Open", records.Options{Owner: records.OwnerOptions{
			Open: func(context.Context, bool, owner.Submitter) (records.Backend, error) { return nil, nil },
		}}, "Owner.Open is set by records.Open"),
		Entry("Owner.OpenDetached", records.Options{Owner: records.OwnerOptions{
			OpenDetached: func(context.Context, owner.Submitter, error) (records.Backend, error) { return nil, nil },
		}}, "Owner.OpenDetached is set by records.Open"),
		Entry("Owner.CatalogVersion", records.Options{Owner: records.OwnerOptions{CatalogVersion: 7}}, "Owner.CatalogVersion is set by records.Open"),
		Entry("Owner.ReadOnly (Options.ReadOnly is the switch)", records.Options{Owner: records.OwnerOptions{ReadOnly: true}}, "Owner.ReadOnly is set by records.Open"),
		Entry("NameLive with LiveFile", records.Options{LiveFile: "x.db", NameLive: nameLive}, "NameLive and LiveFile"),
		Entry("NameLive with ReadOnly", records.Options{ReadOnly: true, NameLive: nameLive}, "NameLive cannot be used with ReadOnly"),
		Entry("SubmitOnly without Owner.NoPromotion", records.Options{SubmitOnly: recordstore.ErrUnsupported}, "SubmitOnly needs Owner.NoPromotion"),
		Entry("SubmitOnly with Owner.DeferElection", records.Options{SubmitOnly: recordstore.ErrUnsupported,
			Owner: records.OwnerOptions{NoPromotion: true, DeferElection: true}}, "SubmitOnly cannot be used with Owner.DeferElection"),
	)

	It("passes Owner on to the owner as it is, and opens the live file it is told to", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		live := filepath.Join(dir, "files", "live.db")
		roles := make(chan owner.Role, 16) // the owner's goroutines call Events.Role
		st, err := records.Open(ctx, filepath.Join(dir, "w1.records"), records.Options{
			Owner:         records.OwnerOptions{Build: "spec build", Events: owner.Events{Role: func(r owner.Role) { roles <- r }}},
			LiveFile:      live,
			SweepInterval: -1,
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		Expect(st.Role()).To(Equal(owner.RoleOwner))
		Eventually(roles).WithTimeout(waitLong).Should(Receive(Equal(owner.RoleOwner)))
		status, err := st.Status(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(status.Build).To(Equal("spec build"))
		Expect(st.LiveFile()).To(Equal(live))
		Expect(live).To(BeARegularFile())
	})

	It("refuses a caller-named live file that is a directory with invalid, creating nothing beside the store path", func() {
		dir := GinkgoT().TempDir()
		live := subdir(dir)
		before := listTree(dir)
		_, err := records.Open(context.Background(), filepath.Join(dir, "w1.records"), records.Options{LiveFile: live})
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(err).To(MatchError(ContainSubstring(live + " is a directory")))
		Expect(listTree(dir)).To(Equal(before))
	})

	DescribeTable("refuses a directory or a device as store path with invalid, creating nothing beside it",
		func(path func(dir string) string, opts records.Options, says string) {
			dir := GinkgoT().TempDir()
			p := path(dir)
			before := listTree(filepath.Dir(p))
			_, err := records.Open(context.Background(), p, opts)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(recordstore.Code(err)).To(Equal("invalid"))
			Expect(err).To(MatchError(ContainSubstring(says)))
			Expect(listTree(filepath.Dir(p))).To(Equal(before))
		},
		Entry("a directory, to write", subdir, records.Options{}, "is a directory"),
		Entry("a directory, to read", subdir, records.Options{MustExist: true}, "is a directory"),
		Entry("a live file that is a directory", func(dir string) string {
			Expect(os.MkdirAll(filepath.Join(dir, "v1", "records.sqlite"), 0o700)).To(Succeed())
			return filepath.Join(dir, "records.sqlite")
		}, records.Options{}, "is a directory"),
		Entry("a named pipe", func(dir string) string {
			p := filepath.Join(dir, "fifo")
			Expect(syscall.Mkfifo(p, 0o600)).To(Succeed())
			return p
		}, records.Options{}, "is a named pipe, not a regular file"),
		Entry("a path under a regular file", func(dir string) string {
			Expect(os.WriteFile(filepath.Join(dir, "file"), nil, 0o600)).To(Succeed())
			return filepath.Join(dir, "file", "records.sqlite")
		}, records.Options{}, "is not a directory"),
	)

	It("refuses /dev/null as store path with invalid, creating nothing in /dev", func() {
		for _, opts := range []records.Options{{}, {MustExist: true}, {ReadOnly: true}} {
			_, err := records.Open(context.Background(), "/dev/null", opts)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err).To(MatchError(ContainSubstring("/dev/null is a device, not a regular file")))
		}
		for _, p := range []string{"/dev/null.lock", "/dev/null.spool", "/dev/v1/null", "/dev/null.owner.json"} {
			_, err := os.Lstat(p)
			Expect(os.IsNotExist(err)).To(BeTrue(), "%s was created", p)
		}
	})

	Describe("read-only", func() {
		It("reads a backup of a store, takes no lock and creates no file of its own", func() {
			ctx := context.Background()
			path := backupOf()
			dir := filepath.Dir(path)
			before := listTree(dir)
			st, err := records.Open(ctx, path, records.Options{ReadOnly: true})
			Expect(err).NotTo(HaveOccurred())
			Expect(st.Role()).To(Equal(owner.RoleReadOnly))
			recs, err := st.Backend().Scan(ctx, "s", recordstore.ScanOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(recs).To(HaveLen(2))
			status, err := st.Status(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(status.Phase).To(Equal(owner.PhaseNone))
			Expect(st.Close()).To(Succeed())
			Expect(withoutSidecars(listTree(dir))).To(Equal(before), "no lock, state file, socket or spool")
		})

		It("refuses every write with read_only and changes nothing", func() {
			ctx := context.Background()
			path := backupOf()
			live := sqlite.LivePath(path)
			st, err := records.Open(ctx, path, records.Options{ReadOnly: true})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(st.Close)
			b := st.Backend()
			_, err = b.Append(ctx, "s", "events", []recordstore.Row{{"msg": "c"}})
			Expect(recordstore.Code(err)).To(Equal("read_only"), "%v", err)
			_, err = b.Seal(ctx, "s")
			Expect(recordstore.Code(err)).To(Equal("read_only"), "%v", err)
			_, err = b.DeclareKind(ctx, recordstore.Kind{Name: "other", Columns: []recordstore.Column{{Name: "a", Type: recordstore.TypeString}}})
			Expect(recordstore.Code(err)).To(Equal("read_only"), "%v", err)
			_, err = st.Publish(ctx, recordstore.Batch{Entries: []recordstore.BatchEntry{{Op: recordstore.OpSeal, Stream: "s"}}})
			Expect(recordstore.Code(err)).To(Equal("read_only"), "%v", err)
			_, err = st.Outcome(ctx, "0123456789abcdef0123456789abcdef")
			Expect(recordstore.Code(err)).To(Equal("read_only"), "%v", err)
			Expect(b.Promote(ctx)).To(MatchError(recordstore.ErrReadOnly))
			m, err := b.Meta(ctx, "s")
			Expect(err).NotTo(HaveOccurred())
			Expect(m.HighSeq).To(BeEquivalentTo(2))
			Expect(m.Sealed).To(BeFalse())
			_, err = os.Stat(live + ".lock")
			Expect(os.IsNotExist(err)).To(BeTrue())
		})

		It("sees what the store's owner commits meanwhile", func() {
			ctx := context.Background()
			path := filepath.Join(GinkgoT().TempDir(), "records.sqlite")
			own, err := records.Open(ctx, path, records.Options{SweepInterval: -1})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(own.Close)
			_, err = own.Backend().DeclareKind(ctx, events)
			Expect(err).NotTo(HaveOccurred())
			ro, err := records.Open(ctx, path, records.Options{ReadOnly: true})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(ro.Close)
			Expect(ro).NotTo(BeIdenticalTo(own), "a read-only open shares no handle with the owner's")
			Expect(ro.Role()).To(Equal(owner.RoleReadOnly))
			_, err = own.Backend().Append(ctx, "s", "events", []recordstore.Row{{"msg": "a"}})
			Expect(err).NotTo(HaveOccurred())
			Eventually(func() (int64, error) {
				m, err := ro.Backend().Meta(ctx, "s")
				return m.HighSeq, err
			}).WithTimeout(waitLong).Should(BeEquivalentTo(1))
		})
	})

	DescribeTable("Unwritable tells a store that cannot be written from other failures",
		func(err error, want bool) {
			Expect(records.Unwritable(err)).To(Equal(want))
		},
		Entry("permission denied", fmt.Errorf("write state: %w", &fs.PathError{Op: "open", Path: "x", Err: syscall.EACCES}), true),
		Entry("operation not permitted", fmt.Errorf("x: %w", syscall.EPERM), true),
		Entry("read-only file system", fmt.Errorf("x: %w", syscall.EROFS), true),
		Entry("no space left", fmt.Errorf("x: %w", syscall.ENOSPC), true),
		Entry("quota exceeded", fmt.Errorf("x: %w", syscall.EDQUOT), true),
		Entry("a live file SQLite cannot write", fmt.Errorf("x: %w", recordstore.ErrReadOnly), true),
		Entry("a missing file", fmt.Errorf("x: %w", syscall.ENOENT), false),
		Entry("bad input", recordstore.ErrInvalid, false),
	)
})
