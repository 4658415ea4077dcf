// query restore and query replica verify, through the real binary, from
// replicas made by Litestream of stores the binary wrote.

package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"

	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstoretest/s3test"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

// replicated is a store the binary writes and Litestream, in this
// process, replicates to url.
type replicated struct {
	*store
	url string
	env []string // for the binary: S3 credentials, no CA bundle
	db  *litestream.DB
}

func newReplicated(url string, env []string) *replicated {
	r := &replicated{store: newStore(), url: url, env: env}
	r.ok(eventsKind, "kind", "apply", "-")
	client, err := replica.NewClient(url)
	Expect(err).NotTo(HaveOccurred())
	r.db = litestream.NewDB(sqlite.LivePath(r.path))
	r.db.MonitorInterval = 0
	r.db.Replica = litestream.NewReplicaWithClient(r.db, client)
	r.db.Replica.MonitorEnabled = false
	Expect(r.db.Open()).To(Succeed())
	DeferCleanup(func() { _ = r.db.Close(context.Background()) })
	return r
}

// appendShip appends n rows to stream with the binary, then ships them.
func (r *replicated) appendShip(stream string, n int) {
	r.appendOnly(stream, n)
	Expect(r.db.SyncAndWait(context.Background())).To(Succeed())
}

func (r *replicated) appendOnly(stream string, n int) {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"msg":"%s %d"}`+"\n", stream, i)
	}
	r.ok(b.String(), "append", "--stream", stream, "--kind", "events", "-")
}

// query runs the binary on another store path with the replica's env.
func (r *replicated) query(path string, args ...string) result {
	return runQuery(r.dir, r.env, "", append([]string{"--store", path}, args...)...)
}

// cliLevel0 lists the replica's level-0 files, oldest first.
func cliLevel0(url string) []*ltx.FileInfo {
	client, err := replica.NewClient(url)
	Expect(err).NotTo(HaveOccurred())
	files, err := litestream.FindLTXFiles(context.Background(), client, 0, false, func(*ltx.FileInfo) (bool, error) { return true, nil })
	Expect(err).NotTo(HaveOccurred())
	sort.Slice(files, func(i, j int) bool { return files[i].MinTXID < files[j].MinTXID })
	return files
}

// treeBytes is every file under dir with its content.
func treeBytes(dir string) map[string]string {
	out := map[string]string{}
	Expect(filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = fi.Mode().String() + " " + string(b)
		return err
	})).To(Succeed())
	return out
}

// s3Env starts an S3 server for the spec and returns the binary's
// environment for it: its credentials, and no AWS_CA_BUNDLE, which the S3
// client Litestream builds for a custom endpoint cannot take.
func s3Env() (*s3test.Server, []string) {
	srv, err := s3test.Start("records")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(srv.Close)
	DeferCleanup(srv.SetEnv())
	if old, had := os.LookupEnv("AWS_CA_BUNDLE"); had {
		Expect(os.Unsetenv("AWS_CA_BUNDLE")).To(Succeed())
		DeferCleanup(func() { _ = os.Setenv("AWS_CA_BUNDLE", old) })
	}
	return srv, append(srv.Env(), "AWS_CA_BUNDLE=")
}

var _ = Describe("query restore", func() {
	It("rebuilds a store from an S3 replica, and the restored store reads the same streams", func() {
		srv, env := s3Env()
		src := newReplicated(srv.URL("stores/src"), env)
		src.appendShip("a", 3)
		src.appendShip("b", 2)
		src.appendShip("a", 4)

		dst := filepath.Join(GinkgoT().TempDir(), "dst", "records.sqlite")
		r := src.query(dst, "restore", "--from", src.url)
		Expect(r.code).To(Equal(0), r.stderr)
		out := decodeLines(r.stdout)
		Expect(out).To(HaveLen(1))
		Expect(out[0]).To(HaveKeyWithValue("replaced", false))
		Expect(out[0]).To(HaveKeyWithValue("liveFile", sqlite.LivePath(dst)))

		want := src.ok("", "streams")
		got := src.query(dst, "streams")
		Expect(got.code).To(Equal(0), got.stderr)
		Expect(got.stdout).To(Equal(want))
		Expect(src.query(dst, "scan", "--stream", "a").stdout).To(Equal(src.ok("", "scan", "--stream", "a")))
	})

	Context("from a file replica", func() {
		var src *replicated
		var dst string
		BeforeEach(func() {
			src = newReplicated("file://"+filepath.Join(GinkgoT().TempDir(), "replica"), nil)
			src.appendShip("a", 3)
			src.appendShip("a", 2)
			src.appendShip("b", 2)
			dst = filepath.Join(GinkgoT().TempDir(), "dst", "records.sqlite")
			r := src.query(dst, "restore", "--from", src.url)
			Expect(r.code).To(Equal(0), r.stderr)
		})

		It("refuses a hole in the replica's history with code gap and changes nothing", func() {
			files := cliLevel0(src.url)
			client, err := replica.NewClient(src.url)
			Expect(err).NotTo(HaveOccurred())
			Expect(client.DeleteLTXFiles(context.Background(), files[1:2])).To(Succeed())
			before := treeBytes(filepath.Dir(dst))

			r := src.query(dst, "restore", "--from", src.url, "--force")
			Expect(r.code).To(Equal(1))
			Expect(r.stderr).To(HavePrefix("query: gap: no file of the replica holds transactions"))
			Expect(r.stdout).To(BeEmpty())
			Expect(treeBytes(filepath.Dir(dst))).To(Equal(before))
		})

		It("refuses a replica file with flipped bytes with code checksum and changes nothing", func() {
			files := cliLevel0(src.url)
			last := files[len(files)-1]
			p := findLTX(strings.TrimPrefix(src.url, "file://"), ltx.FormatFilename(last.MinTXID, last.MaxTXID))
			b, err := os.ReadFile(p)
			Expect(err).NotTo(HaveOccurred())
			for i := len(b) / 2; i < len(b)/2+4; i++ {
				b[i] ^= 0x5a
			}
			Expect(os.WriteFile(p, b, 0o600)).To(Succeed())
			before := treeBytes(filepath.Dir(dst))

			r := src.query(dst, "restore", "--from", src.url, "--force")
			Expect(r.code).To(Equal(1))
			Expect(r.stderr).To(HavePrefix("query: checksum: "))
			Expect(treeBytes(filepath.Dir(dst))).To(Equal(before))
		})

		It("refuses an existing store without --force (exists), and with it while an owner runs (in_use)", func() {
			before := treeBytes(filepath.Dir(dst))
			r := src.query(dst, "restore", "--from", src.url)
			Expect(r.code).To(Equal(1))
			Expect(r.stderr).To(HavePrefix("query: exists: store "))
			Expect(treeBytes(filepath.Dir(dst))).To(Equal(before))

			session, _ := startQueryServe(filepath.Dir(dst), "--store", dst, "serve", "--addr", "127.0.0.1:0")
			r = src.query(dst, "restore", "--from", src.url, "--force")
			Expect(r.code).To(Equal(1))
			Expect(r.stderr).To(HavePrefix("query: in_use: store "))
			Expect(r.stderr).To(ContainSubstring(fmt.Sprintf("locked by pid %d", session.Command.Process.Pid)))
			session.Interrupt()
			Eventually(session).WithTimeout(30 * time.Second).Should(gexec.Exit())

			src.appendShip("c", 1)
			r = src.query(dst, "restore", "--from", src.url, "--force")
			Expect(r.code).To(Equal(0), r.stderr)
			Expect(decodeLines(r.stdout)[0]).To(HaveKeyWithValue("replaced", true))
			Expect(src.query(dst, "streams").stdout).To(Equal(src.ok("", "streams")))
		})

		It("restores to a --txid, and refuses flags that contradict each other", func() {
			first := cliLevel0(src.url)[0]
			other := filepath.Join(GinkgoT().TempDir(), "old", "records.sqlite")
			r := src.query(other, "restore", "--from", src.url, "--txid", fmt.Sprint(uint64(first.MaxTXID)))
			Expect(r.code).To(Equal(0), r.stderr)
			Expect(decodeLines(r.stdout)[0]).To(HaveKeyWithValue("txid", num(fmt.Sprint(uint64(first.MaxTXID)))))

			r = src.query(other, "restore", "--from", src.url, "--txid", "3", "--at", "2026-01-01T00:00:00Z")
			Expect(r.code).To(Equal(2))
			Expect(r.stderr).To(ContainSubstring("--at and --txid cannot be used together"))
			r = src.query(other, "restore")
			Expect(r.code).To(Equal(2))
			r = src.query(other, "restore", "--from", "file://"+filepath.Join(GinkgoT().TempDir(), "nothing"), "--force")
			Expect(r.code).To(Equal(1))
			Expect(r.stderr).To(HavePrefix("query: not_found: the replica holds no transaction"))
		})
	})
})

var _ = Describe("query replica verify", func() {
	It("passes a replica in step, and fails with code mismatch, printing the streams, when the store moved on", func() {
		srv, env := s3Env()
		src := newReplicated(srv.URL("stores/v"), env)
		src.appendShip("a", 3)
		src.appendShip("b", 1)

		r := src.query(src.path, "replica", "verify", "--replica", src.url)
		Expect(r.code).To(Equal(0), r.stderr)
		out := decodeLines(r.stdout)
		Expect(out).To(HaveLen(1))
		Expect(out[0]).To(HaveKeyWithValue("streams", num("2")))
		Expect(out[0]).To(HaveKeyWithValue("diffs", BeEmpty()))

		src.appendOnly("a", 2)
		r = src.query(src.path, "replica", "verify", "--replica", src.url)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: mismatch: replica at txid "))
		Expect(r.stderr).To(ContainSubstring("stream a: high seq 5 live, 3 replica"))
		out = decodeLines(r.stdout)
		Expect(out).To(HaveLen(1))
		Expect(out[0]["diffs"]).To(ConsistOf(HaveKeyWithValue("stream", "a")))

		src.appendShip("b", 1)
		r = src.query(src.path, "replica", "verify", "--replica", src.url)
		Expect(r.code).To(Equal(0), r.stderr)
	})

	It("fails with code gap on a replica with a hole, and not_found for a store with no live file", func() {
		src := newReplicated("file://"+filepath.Join(GinkgoT().TempDir(), "replica"), nil)
		src.appendShip("a", 1)
		src.appendShip("a", 1)
		src.appendShip("a", 1)
		files := cliLevel0(src.url)
		client, err := replica.NewClient(src.url)
		Expect(err).NotTo(HaveOccurred())
		Expect(client.DeleteLTXFiles(context.Background(), files[1:2])).To(Succeed())
		r := src.query(src.path, "replica", "verify", "--replica", src.url)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: gap: "))

		none := filepath.Join(GinkgoT().TempDir(), "records.sqlite")
		r = src.query(none, "replica", "verify", "--replica", src.url)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: not_found: "))
		r = src.query(none, "replica", "verify")
		Expect(r.code).To(Equal(2))
	})
})

// findLTX finds the file named name under root.
func findLTX(root, name string) string {
	var found string
	Expect(filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && fi.Name() == name {
			found = p
		}
		return err
	})).To(Succeed())
	Expect(found).NotTo(BeEmpty())
	return found
}

var _ = Describe("query fleet restore", func() {
	It("rebuilds a tenant's store from its replica, and refuses another tenant's replica (check_failed)", func() {
		dir := GinkgoT().TempDir()
		root := filepath.Join(dir, "fleet")
		Expect(os.Mkdir(root, 0o700)).To(Succeed())
		fleetRun := func(stdin string, args ...string) result {
			return runQuery(dir, nil, stdin, append([]string{"fleet", args[0], "--root", root, "--kinds", kindsFile()}, args[1:]...)...)
		}
		r := fleetRun("", "provision", "tenant:acme")
		Expect(r.code).To(Equal(0), r.stderr)
		abs := filepath.Join(root, filepath.FromSlash(decodeLines(r.stdout)[0]["path"].(string)))
		r = fleetRun(tenantRows("acme", 2), "append", "tenant:acme", "--stream", "e1", "--kind", "events")
		Expect(r.code).To(Equal(0), r.stderr)

		url := "file://" + filepath.Join(dir, "replica", "tenant", "acme")
		client, err := replica.NewClient(url)
		Expect(err).NotTo(HaveOccurred())
		db := litestream.NewDB(abs)
		db.MonitorInterval = 0
		db.Replica = litestream.NewReplicaWithClient(db, client)
		db.Replica.MonitorEnabled = false
		Expect(db.Open()).To(Succeed())
		Expect(db.SyncAndWait(context.Background())).To(Succeed())
		Expect(db.Close(context.Background())).To(Succeed())
		r = fleetRun(tenantRows("acme", 3), "append", "tenant:acme", "--stream", "e1", "--kind", "events")
		Expect(r.code).To(Equal(0), r.stderr)

		r = fleetRun("", "restore", "tenant:acme", "--from", url)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: exists: "))

		r = fleetRun("", "restore", "tenant:acme", "--from", url, "--force")
		Expect(r.code).To(Equal(0), r.stderr)
		out := decodeLines(r.stdout)[0]
		Expect(out).To(HaveKeyWithValue("key", "tenant:acme"))
		Expect(out).To(HaveKeyWithValue("replaced", true))
		rep, err := sqlite.CheckFile(context.Background(), abs)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Streams).To(ConsistOf(HaveField("HighSeq", int64(2))))

		r = fleetRun("", "restore", "tenant:beta", "--from", url)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: check_failed: "))
		Expect(r.stderr).To(ContainSubstring("records key tenant:acme, not tenant:beta"))
		r = fleetRun("", "list")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).NotTo(ContainSubstring("tenant:beta"))
	})
})

var _ = Describe("query fleet verify", func() {
	It("verifies a sample of the fleet's replicas, one line each, and fails with the code of a store that differs", func() {
		dir := GinkgoT().TempDir()
		root := filepath.Join(dir, "fleet")
		Expect(os.Mkdir(root, 0o700)).To(Succeed())
		repRoot := "file://" + filepath.Join(dir, "replicas")
		fleetRun := func(stdin string, args ...string) result {
			return runQuery(dir, nil, stdin, append([]string{"fleet", args[0], "--root", root, "--kinds", kindsFile()}, args[1:]...)...)
		}
		dbs := map[string]*litestream.DB{}
		for _, id := range []string{"acme", "beta"} {
			r := fleetRun("", "provision", "tenant:"+id)
			Expect(r.code).To(Equal(0), r.stderr)
			abs := filepath.Join(root, filepath.FromSlash(decodeLines(r.stdout)[0]["path"].(string)))
			r = fleetRun(tenantRows(id, 2), "append", "tenant:"+id, "--stream", "e1", "--kind", "events")
			Expect(r.code).To(Equal(0), r.stderr)
			client, err := replica.NewClient(repRoot + "/tenant/" + id)
			Expect(err).NotTo(HaveOccurred())
			db := litestream.NewDB(abs)
			db.MonitorInterval = 0
			db.Replica = litestream.NewReplicaWithClient(db, client)
			db.Replica.MonitorEnabled = false
			Expect(db.Open()).To(Succeed())
			DeferCleanup(func() { _ = db.Close(context.Background()) })
			Expect(db.SyncAndWait(context.Background())).To(Succeed())
			dbs[id] = db
		}
		r := fleetRun(tenantRows("beta", 1), "append", "tenant:beta", "--stream", "e1", "--kind", "events")
		Expect(r.code).To(Equal(0), r.stderr)

		r = fleetRun("", "verify", "--replica-root", repRoot, "--sample", "5")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: mismatch: 1 of 2 replicas failed verification; first tenant:beta: replica at txid "))
		Expect(r.stderr).NotTo(ContainSubstring("mismatch: mismatch"))
		lines := decodeLines(r.stdout)
		Expect(lines).To(ConsistOf(
			And(HaveKeyWithValue("key", "tenant:acme"), Not(HaveKey("code"))),
			And(HaveKeyWithValue("key", "tenant:beta"), HaveKeyWithValue("code", "mismatch")),
		))

		Expect(dbs["beta"].SyncAndWait(context.Background())).To(Succeed())
		r = fleetRun("", "verify", "--replica-root", repRoot)
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(decodeLines(r.stdout)).To(HaveLen(2))
		Expect(fleetRun("", "verify").code).To(Equal(2))
	})
})
