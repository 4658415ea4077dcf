// Opening a store from the command line: reads of a path with no store,
// a directory or a device as store path, --read-only, and reads of a store
// in a folder the process cannot write.

package main_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/fb46ecde/records/recordstore/sqlite"
)

// tree lists the paths under dir, relative to it, with their modes.
func tree(dir string) []string {
	var out []string
	ExpectWithOffset(1, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel+" "+info.Mode().String())
		return nil
	})).To(Succeed())
	sort.Strings(out)
	return out
}

// readCommands are the commands that only read the store.
var readCommands = [][]string{
	{"scan", "--stream", "s"},
	{"scan", "--stream", "s", "--follow", "--limit", "1"},
	{"meta", "--stream", "s"},
	{"streams"},
	{"kind", "list"},
}

// eventsKind declares the events kind on stdin.
const eventsKind = `{"kinds":[{"name":"events","columns":[{"name":"msg","type":"string"}]}]}`

var _ = Describe("opening the store", func() {
	var s *store

	BeforeEach(func() { s = newStore() })

	DescribeTable("a read of a path with no store fails with not_found and creates nothing",
		func(args []string) {
			for _, path := range []string{s.path, filepath.Join(s.dir, "typo", "x.sqlite")} {
				r := runQuery(s.dir, nil, "", append([]string{"--store", path}, args...)...)
				Expect(r.code).To(Equal(1), "query %v", args)
				Expect(r.stderr).To(Equal("query: not_found: no store at " + path + "\n"))
				left, err := os.ReadDir(s.dir)
				Expect(err).NotTo(HaveOccurred())
				Expect(left).To(BeEmpty(), "no folder, lock, spool or live file")
			}
		},
		Entry("scan", readCommands[0]),
		Entry("scan --follow", readCommands[1]),
		Entry("meta", readCommands[2]),
		Entry("streams", readCommands[3]),
		Entry("kind list", readCommands[4]),
		Entry("--read-only streams", []string{"--read-only", "streams"}),
	)

	It("still creates the store on a first write", func() {
		path := filepath.Join(s.dir, "new", "x.sqlite")
		r := runQuery(s.dir, nil, eventsKind, "--store", path, "kind", "apply", "-")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(sqlite.LivePath(path)).To(BeARegularFile())
	})

	DescribeTable("a directory or a device as store path is invalid, for reads and writes, and nothing is created beside it",
		func(stdin string, args ...string) {
			dir := filepath.Join(s.dir, "a-folder")
			Expect(os.Mkdir(dir, 0o700)).To(Succeed())
			before := tree(s.dir)
			for _, path := range []string{dir, "/dev/null"} {
				r := runQuery(s.dir, nil, stdin, append([]string{"--store", path}, args...)...)
				Expect(r.code).To(Equal(1), "query --store %s %v", path, args)
				Expect(r.stderr).To(HavePrefix("query: invalid: store path " + path + ": "))
				Expect(r.stderr).To(Or(ContainSubstring("is a directory"), ContainSubstring("is a device, not a regular file")))
			}
			Expect(tree(s.dir)).To(Equal(before))
			for _, p := range []string{"/dev/null.lock", "/dev/null.spool", "/dev/null.owner.json", "/dev/v1"} {
				_, err := os.Lstat(p)
				Expect(errors.Is(err, fs.ErrNotExist)).To(BeTrue(), "%s was created", p)
			}
		},
		Entry("scan", "", "scan", "--stream", "s"),
		Entry("streams", "", "streams"),
		Entry("kind apply", eventsKind, "kind", "apply", "-"),
		Entry("append", `{"msg":"a"}`, "append", "--stream", "s", "--kind", "events", "-"),
	)

	Describe("--read-only", func() {
		var backup *store

		// backup is a copy of the store's live file alone, in a fresh
		// folder: what a backup of the store holds.
		BeforeEach(func() {
			s.ok(eventsKind, "kind", "apply", "-")
			s.ok(`{"msg":"a"}`+"\n"+`{"msg":"b"}`, "append", "--stream", "s", "--kind", "events", "-")
			backup = newStore()
			data, err := os.ReadFile(sqlite.LivePath(s.path))
			Expect(err).NotTo(HaveOccurred())
			Expect(os.MkdirAll(filepath.Dir(sqlite.LivePath(backup.path)), 0o700)).To(Succeed())
			Expect(os.WriteFile(sqlite.LivePath(backup.path), data, 0o600)).To(Succeed())
		})

		It("reads a backup and creates no lock, state file or spool", func() {
			Expect(backup.ok("", "--read-only", "scan", "--stream", "s")).To(Equal(`{"_seq":1,"msg":"a"}` + "\n" + `{"_seq":2,"msg":"b"}` + "\n"))
			Expect(backup.one("", "--read-only", "meta", "--stream", "s")).To(HaveKeyWithValue("highSeq", num("2")))
			Expect(backup.lines("", "--read-only", "streams")).To(HaveLen(1))
			Expect(backup.lines("", "--read-only", "kind", "list")).To(HaveLen(1))
			for _, p := range []string{".lock", ".spool", ".owner.json", ".sock"} {
				_, err := os.Lstat(backup.path + p)
				Expect(errors.Is(err, fs.ErrNotExist)).To(BeTrue(), "%s was created", backup.path+p)
			}
		})

		It("serves a backup, with no batches route, never owning it", func() {
			cmd := exec.Command(queryBin, "--store", backup.path, "--read-only", "serve", "--addr", "127.0.0.1:0")
			cmd.Env = withoutStoreEnv()
			session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func() { session.Kill().Wait(10 * time.Second) })
			Eventually(session.Err).WithTimeout(20 * time.Second).Should(gbytes.Say(`msg=role role=read-only`))
			Eventually(session.Err).WithTimeout(20 * time.Second).Should(gbytes.Say(`msg=listening addr=(127\.0\.0\.1:\d+)`))
			base := "http://" + listeningRE.FindStringSubmatch(string(session.Err.Contents()))[1]
			status, _, body := get(base + "/api/v1/streams/s/rows")
			Expect(status).To(Equal(200))
			Expect(body).To(Equal(`{"_seq":1,"msg":"a"}` + "\n" + `{"_seq":2,"msg":"b"}` + "\n"))
			status, _, _ = get(base + "/api/v1/batches/0123456789abcdef0123456789abcdef")
			Expect(status).To(Equal(404))
			_, err = os.Lstat(backup.path + ".lock")
			Expect(errors.Is(err, fs.ErrNotExist)).To(BeTrue())
		})

		DescribeTable("refuses writes with read_only and changes nothing",
			func(stdin string, args ...string) {
				r := backup.run(stdin, append([]string{"--read-only"}, args...)...)
				Expect(r.code).To(Equal(1), "query %v", args)
				Expect(r.stderr).To(HavePrefix("query: read_only: "))
				Expect(backup.one("", "--read-only", "meta", "--stream", "s")).To(And(HaveKeyWithValue("highSeq", num("2")), HaveKeyWithValue("sealed", false)))
				_, err := os.Lstat(backup.path + ".spool")
				Expect(errors.Is(err, fs.ErrNotExist)).To(BeTrue())
			},
			Entry("append", `{"msg":"c"}`, "append", "--stream", "s", "--kind", "events", "-"),
			Entry("append --no-wait", `{"msg":"c"}`, "append", "--no-wait", "--stream", "s", "--kind", "events", "-"),
			Entry("append in batches", `{"msg":"c"}`, "append", "--batch-rows", "10", "--stream", "s", "--kind", "events", "-"),
			Entry("seal", "", "seal", "--stream", "s"),
			Entry("kind apply", `{"kinds":[{"name":"more","columns":[{"name":"a","type":"string"}]}]}`, "kind", "apply", "-"),
		)
	})

	Describe("a store in a folder this process cannot write", func() {
		var (
			runAs  func(stdin string, args ...string) result
			before []string
		)

		// The store is made writable, then handed to another user (when
		// the suite runs as root, whom permissions do not stop) and its
		// folders made 0500: the reads run as that user.
		BeforeEach(func() {
			var dir string
			dir, runAs = otherUsersStore()
			Expect(filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.IsDir() {
					return err
				}
				return os.Chmod(p, 0o500)
			})).To(Succeed())
			before = tree(dir)
			DeferCleanup(func() { Expect(tree(dir)).To(Equal(before), "nothing was created or changed") })
		})

		DescribeTable("reads it read-only, writing nothing, with a warning that says why",
			func(args []string) {
				r := runAs("", args...)
				Expect(r.code).To(Equal(0), r.stderr)
				Expect(r.stdout).NotTo(BeEmpty())
				Expect(r.stderr).To(ContainSubstring(`level=WARN msg="opened read-only: the store cannot be written here"`))
				Expect(r.stderr).To(ContainSubstring("permission denied"))
			},
			Entry("scan", readCommands[0]),
			Entry("scan --follow", readCommands[1]),
			Entry("meta", readCommands[2]),
			Entry("streams", readCommands[3]),
			Entry("kind list", readCommands[4]),
		)

		It("reads it with --read-only without a word", func() {
			r := runAs("", "--read-only", "scan", "--stream", "s")
			Expect(r.code).To(Equal(0), r.stderr)
			Expect(r.stdout).To(Equal(`{"_seq":1,"msg":"a"}` + "\n"))
			Expect(r.stderr).To(BeEmpty())
		})

		It("still fails a write, which has nowhere to go", func() {
			r := runAs(`{"msg":"b"}`, "append", "--stream", "s", "--kind", "events", "-")
			Expect(r.code).To(Equal(1))
			Expect(r.stderr).To(ContainSubstring("permission denied"))
		})
	})

	Describe("a live file made 0400 for a while", func() {
		It("fails writes with read_only naming it, then works again once its mode is restored, SQLite's files included", func() {
			dir, runAs := otherUsersStore()
			live := sqlite.LivePath(filepath.Join(dir, "records.sqlite"))
			Expect(os.Chmod(live, 0o400)).To(Succeed())

			r := runAs(`{"msg":"b"}`, "append", "--stream", "s", "--kind", "events", "-")
			Expect(r.code).To(Equal(1))
			Expect(r.stderr).To(HavePrefix("query: read_only: "))
			Expect(r.stderr).To(ContainSubstring(live + " is not writable by this process (mode -r--------)"))
			// SQLite made its -wal and -shm files with the live file's
			// mode meanwhile (a read, falling back to read-only, does too).
			r = runAs("", "scan", "--stream", "s")
			Expect(r.code).To(Equal(0), r.stderr)
			Expect(r.stdout).To(Equal(`{"_seq":1,"msg":"a"}` + "\n"))
			for _, p := range []string{live + "-wal", live + "-shm"} {
				Expect(modeOf(p)).To(Equal(fs.FileMode(0o400)), p)
			}

			Expect(os.Chmod(live, 0o600)).To(Succeed())
			r = runAs(`{"msg":"b"}`, "append", "--stream", "s", "--kind", "events", "-")
			Expect(r.code).To(Equal(0), r.stderr)
			Expect(r.stdout).To(ContainSubstring(`"from":2`))
			for _, p := range []string{live, live + "-wal", live + "-shm"} {
				if _, err := os.Stat(p); err == nil {
					Expect(modeOf(p)).To(Equal(fs.FileMode(0o600)), p)
				}
			}
		})
	})
})

// modeOf returns the permission bits of the file at p.
func modeOf(p string) fs.FileMode {
	fi, err := os.Stat(p)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return fi.Mode().Perm()
}

// otherUsersStore makes a store in a fresh folder (events kind, stream s
// with one row), hands it to another user when the suite runs as root
// (whom permissions do not stop) — nobody, 65534 — and returns its folder
// and a function that runs the query binary on it as that user (as this
// one otherwise) with stdin.
func otherUsersStore() (string, func(stdin string, args ...string) result) {
	root, err := os.MkdirTemp("", "records-perm-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o700)
			}
			return nil
		})
		Expect(os.RemoveAll(root)).To(Succeed())
	})
	Expect(os.Chmod(root, 0o755)).To(Succeed())
	bin := filepath.Join(root, "query")
	copyFile(queryBin, bin)
	dir := filepath.Join(root, "store")
	Expect(os.Mkdir(dir, 0o700)).To(Succeed())
	path := filepath.Join(dir, "records.sqlite")
	owned := &store{dir: dir, path: path}
	owned.ok(eventsKind, "kind", "apply", "-")
	owned.ok(`{"msg":"a"}`, "append", "--stream", "s", "--kind", "events", "-")
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
		Expect(filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, 65534, 65534)
		})).To(Succeed())
	}
	return dir, func(stdin string, args ...string) result {
		cmd := exec.Command(bin, append([]string{"--store", path}, args...)...)
		cmd.Dir = root
		cmd.Env = withoutStoreEnv()
		cmd.Stdin = strings.NewReader(stdin)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var exit *exec.ExitError
		code := 0
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else {
			ExpectWithOffset(1, err).NotTo(HaveOccurred())
		}
		return result{code: code, stdout: out.String(), stderr: errb.String()}
	}
}

// copyFile copies the executable src to dst (mode 0755).
func copyFile(src, dst string) {
	in, err := os.Open(src)
	Expect(err).NotTo(HaveOccurred())
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	Expect(err).NotTo(HaveOccurred())
	_, err = io.Copy(out, in)
	Expect(err).NotTo(HaveOccurred())
	Expect(out.Close()).To(Succeed())
}
