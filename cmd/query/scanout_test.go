// query scan --out through the real binary: what it refuses to replace
// (devices, FIFOs, symlinks, folders, existing files without --force), a
// missing folder, --force over a regular file, and --out - (stdout).

package main_test

import (
	"os"
	"path/filepath"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("query scan --out", func() {
	var s *store

	BeforeEach(func() {
		s = newStore()
		s.ok(taskKinds, "kind", "apply", "-")
		s.ok(taskRows, "append", "--stream", "t", "--kind", "tasks")
	})

	// scanOut runs scan of stream t as CSV to out with extra flags.
	scanOut := func(out string, flags ...string) result {
		return s.run("", append([]string{"scan", "--stream", "t", "--format", "csv", "--out", out}, flags...)...)
	}

	// noTempFiles checks that dir holds no temp file of an export.
	noTempFiles := func(dir string) {
		entries, err := os.ReadDir(dir)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		for _, e := range entries {
			ExpectWithOffset(1, e.Name()).NotTo(ContainSubstring(".tmp-"), "no temp file is left")
		}
	}

	// lmode is the type bits of what is at path, not following a symlink.
	lmode := func(path string) os.FileMode {
		fi, err := os.Lstat(path)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		return fi.Mode().Type()
	}

	DescribeTable("refuses a path that is there, leaving it as it is, and with --force refuses anything but a regular file",
		func(mk func(path string), want os.FileMode) {
			out := filepath.Join(s.dir, "out.csv")
			mk(out)
			r := scanOut(out)
			Expect(r.code).To(Equal(1), r.stderr)
			Expect(r.stderr).To(HavePrefix("query: exists: --out " + out))
			Expect(lmode(out)).To(Equal(want))

			r = scanOut(out, "--force")
			Expect(r.code).To(Equal(1), r.stderr)
			Expect(r.stderr).To(HavePrefix("query: invalid: --out " + out + " is a"))
			Expect(r.stderr).To(ContainSubstring("--force replaces a regular file only"))
			Expect(lmode(out)).To(Equal(want), "still what it was")
			Expect(r.stdout).To(BeEmpty())
			noTempFiles(s.dir)
		},
		Entry("a character device (mknod c 1 3)", func(p string) {
			Expect(syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3)).To(Succeed())
		}, os.ModeDevice|os.ModeCharDevice),
		Entry("a FIFO", func(p string) {
			Expect(syscall.Mkfifo(p, 0o600)).To(Succeed())
		}, os.ModeNamedPipe),
		Entry("a symlink", func(p string) {
			Expect(os.Symlink(writeFile(s.dir, "target.txt", "keep me\n"), p)).To(Succeed())
		}, os.ModeSymlink),
	)

	It("never writes through a symlink: its target is unchanged", func() {
		target := writeFile(s.dir, "target.txt", "keep me\n")
		out := filepath.Join(s.dir, "link.csv")
		Expect(os.Symlink(target, out)).To(Succeed())
		Expect(os.Chmod(target, 0o644)).To(Succeed())
		for _, flags := range [][]string{nil, {"--force"}} {
			r := scanOut(out, flags...)
			Expect(r.code).To(Equal(1), r.stderr)
			data, err := os.ReadFile(target)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(data)).To(Equal("keep me\n"))
			fi, err := os.Stat(target)
			Expect(err).NotTo(HaveOccurred())
			Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o644)))
			Expect(os.Readlink(out)).To(Equal(target))
		}
	})

	It("refuses an existing file without --force, and replaces it with --force as a 0600 file", func() {
		out := writeFile(s.dir, "old.csv", "old content\n")
		Expect(os.Chmod(out, 0o644)).To(Succeed())

		r := scanOut(out)
		Expect(r.code).To(Equal(1), r.stderr)
		Expect(r.stderr).To(Equal("query: exists: --out " + out + " is already there: give --force to replace a file\n"))
		data, err := os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(data)).To(Equal("old content\n"))
		fi, err := os.Stat(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o644)), "its mode is kept")

		Expect(s.ok("", "scan", "--stream", "t", "--format", "csv", "--out", out, "--force")).To(BeEmpty())
		data, err = os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(data)).To(HavePrefix("_seq,host,tries,at\n1,web-1,2,"))
		fi, err = os.Stat(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		noTempFiles(s.dir)
	})

	It("refuses a missing folder with not_found and does not create it", func() {
		dir := filepath.Join(s.dir, "exports")
		r := scanOut(filepath.Join(dir, "t.csv"))
		Expect(r.code).To(Equal(1), r.stderr)
		Expect(r.stderr).To(Equal("query: not_found: --out: folder " + dir + " does not exist\n"))
		Expect(dir).NotTo(BeADirectory())
	})

	It("refuses a folder with invalid before reading any row", func() {
		dir := filepath.Join(s.dir, "exports")
		Expect(os.Mkdir(dir, 0o700)).To(Succeed())
		for _, force := range [][]string{nil, {"--force"}} {
			r := scanOut(dir, force...)
			Expect(r.code).To(Equal(1), r.stderr)
			Expect(r.stderr).To(Equal("query: invalid: --out " + dir + " is a folder: name a file in it\n"))
		}
		r := s.run("", "scan", "--stream", "nope", "--out", dir)
		Expect(r.stderr).To(HavePrefix("query: invalid: --out "), "the path is checked before the stream is read")
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(BeEmpty())
	})

	It("writes stdout with --out -", func() {
		Expect(s.ok("", "scan", "--stream", "t", "--format", "csv", "--q", "cache", "--out", "-")).To(Equal("_seq,host,tries,at\n4,cache,1,\n"))
		Expect(filepath.Join(s.dir, "-")).NotTo(BeAnExistingFile())
	})
})
