// The validation table: one testdata/validation/<case>/ mini spool per
// case, loaded and read the way the owner does; each must be refused with
// its typed reason and left exactly as it was.

package spool_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// copyTree copies src to dst, keeping symlinks as symlinks.
func copyTree(src, dst string) {
	GinkgoHelper()
	Expect(filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case e.IsDir():
			return os.MkdirAll(to, 0o700)
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, data, 0o600)
		}
	})).To(Succeed())
}

// snapshot lists every path under root with its size and link target.
func snapshot(root string) []string {
	GinkgoHelper()
	var out []string
	Expect(filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		line := strings.TrimPrefix(p, root) + " " + fi.Mode().String()
		if fi.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			line += " " + string(data)
		}
		out = append(out, line)
		return nil
	})).To(Succeed())
	return out
}

// openCase copies testdata/validation/<name> into a temp spool root.
func openCase(name string) *spool.Dir {
	GinkgoHelper()
	root := filepath.Join(GinkgoT().TempDir(), "case.spool")
	copyTree(filepath.Join("testdata", "validation", name), root)
	d, err := spool.OpenRoot(context.Background(), root, spool.Options{})
	Expect(err).NotTo(HaveOccurred())
	return d
}

// ingestLike loads every incoming batch and reads all of its rows, as the
// owner does, returning the first error.
func ingestLike(d *spool.Dir) (int, error) {
	ctx := context.Background()
	list, err := d.List(ctx, spool.StateIncoming)
	if err != nil {
		return 0, err
	}
	rows := 0
	for _, n := range list {
		b, err := d.Load(ctx, spool.StateIncoming, n.String())
		if err != nil {
			return rows, err
		}
		del, err := b.ReadAll(ctx)
		if err != nil {
			return rows, err
		}
		rows += int(del.Rows())
	}
	return rows, nil
}

var _ = Describe("validating foreign batches", func() {
	DescribeTable("refuses a damaged batch with its typed reason and changes nothing",
		func(name string, want error, reason string) {
			d := openCase(name)
			before := snapshot(d.Root())
			_, err := ingestLike(d)
			Expect(err).To(MatchError(want))
			Expect(err).To(MatchError(ContainSubstring(reason)))
			var ve *spool.ValidationError
			Expect(err).To(BeAssignableToTypeOf(ve))
			Expect(err.(*spool.ValidationError).Batch).To(HaveLen(83))
			Expect(recordstore.Code(err)).To(Equal("invalid"))
			Expect(snapshot(d.Root())).To(Equal(before))
		},
		Entry("a torn manifest", "torn-manifest", spool.ErrBadManifest, "not a JSON object"),
		Entry("a missing manifest", "missing-manifest", spool.ErrBadManifest, "manifest.json is missing"),
		Entry("a wrong SHA-256", "wrong-sha256", spool.ErrChecksum, "SHA-256"),
		Entry("a wrong size", "wrong-size", spool.ErrChecksum, "the manifest says 5"),
		Entry("a ../ file name", "dotdot-file", spool.ErrUnsafePath, "../e00001.ndjson"),
		Entry("an absolute file name", "absolute-file", spool.ErrUnsafePath, "/etc/passwd"),
		Entry("a symlinked data file", "symlinked-data", spool.ErrUnsafePath, "not a plain file"),
		Entry("a missing data file", "missing-data", spool.ErrChecksum, "missing"),
		Entry("a truncated gzip", "truncated-gzip", recordstore.ErrInvalid, "gzip"),
		Entry("format 2", "format-2", spool.ErrManifestFormat, "2 (this build reads format 1)"),
		Entry("an unknown codec", "unknown-codec", spool.ErrUnknownCodec, `"csv"`),
		Entry("fewer rows than the manifest says", "row-count-fewer", spool.ErrRowCount, "holds 3 rows, the manifest says 4"),
		Entry("more rows than the manifest says", "row-count-more", spool.ErrRowCount, "more than the 2 rows"),
		Entry("a row that does not fit the schema", "bad-row", recordstore.ErrInvalid, "line 1"),
		Entry("a row with an unknown column", "unknown-column", recordstore.ErrInvalid, `unknown column "zz"`),
		Entry("a bad id", "bad-id", spool.ErrBadManifest, "NOT-AN-ID"),
		Entry("a folder name that does not match", "name-mismatch", spool.ErrBadManifest, "does not match"),
		Entry("an unknown manifest field", "unknown-field", spool.ErrBadManifest, "priority"),
		Entry("an unknown op", "unknown-op", spool.ErrBadManifest, "truncate"),
		Entry("a kind missing from the schemas", "kind-not-in-schemas", spool.ErrBadManifest, "not among the schemas"),
	)

	It("refuses exactly one row count short of the manifest only at the end, after streaming", func() {
		d := openCase("row-count-fewer")
		list, err := d.List(context.Background(), spool.StateIncoming)
		Expect(err).NotTo(HaveOccurred())
		b, err := d.Load(context.Background(), spool.StateIncoming, list[0].String())
		Expect(err).NotTo(HaveOccurred(), "the cheap checks pass")
		n := 0
		var last error
		for _, err := range b.Rows(context.Background(), 0) {
			if err != nil {
				last = err
				break
			}
			n++
		}
		Expect(n).To(Equal(3))
		Expect(last).To(MatchError(spool.ErrRowCount))
	})

	DescribeTable("accepts the intact cases",
		func(name string) {
			rows, err := ingestLike(openCase(name))
			Expect(err).NotTo(HaveOccurred())
			Expect(rows).To(Equal(3))
		},
		Entry("ndjson", "ok-ndjson"),
		Entry("ndjson.gz", "ok-ndjson-gz"),
	)

	It("never lists an orphan tmp batch, and GC removes it once old", func() {
		d := openCase("orphan-tmp")
		list, err := d.List(context.Background(), spool.StateIncoming)
		Expect(err).NotTo(HaveOccurred())
		Expect(list).To(BeEmpty())
		tmp, err := os.ReadDir(d.Path(spool.StateTmp, ""))
		Expect(err).NotTo(HaveOccurred())
		Expect(tmp).To(HaveLen(1))

		res, err := d.GC(context.Background(), spool.GCOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Tmp).To(BeEmpty(), "young: it may be a publish in progress")
		old := time.Now().Add(-25 * time.Hour)
		Expect(os.Chtimes(d.Path(spool.StateTmp, tmp[0].Name()), old, old)).To(Succeed())
		res, err = d.GC(context.Background(), spool.GCOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Tmp).To(Equal([]string{tmp[0].Name()}))
		expectEmpty(d, spool.StateTmp)
	})
})
