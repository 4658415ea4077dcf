package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/benbjohnson/litestream"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstoretest/s3test"
)

// restoredMessages restores the replica at url into a scratch store and
// returns the msg of every row of stream in it.
func restoredMessages(url, stream string) []string {
	client, err := replica.NewClient(url)
	Expect(err).NotTo(HaveOccurred())
	dir := GinkgoT().TempDir()
	live := sqlite.LivePath(filepath.Join(dir, "restored"))
	Expect(os.MkdirAll(filepath.Dir(live), 0o700)).To(Succeed())
	opt := litestream.NewRestoreOptions()
	opt.OutputPath = live
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	Expect(litestream.NewReplicaWithClient(nil, client).Restore(ctx, opt)).To(Succeed())
	b, err := sqlite.Open(ctx, filepath.Join(dir, "restored"), sqlite.Options{ReadOnly: true, ReadOnlyFile: true, SweepInterval: -1})
	Expect(err).NotTo(HaveOccurred())
	defer b.Close()
	recs, err := b.Scan(ctx, stream, recordstore.ScanOptions{})
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, r := range recs {
		out = append(out, r.Values["msg"].(string))
	}
	return out
}

var _ = Describe("--replica", func() {
	var (
		srv *s3test.Server
		s   *store
		env []string
	)
	BeforeEach(func() {
		var err error
		srv, err = s3test.Start("records")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(srv.Kill)     // at once: a replicator may still hold a connection
		DeferCleanup(srv.SetEnv()) // for the restores made here
		s = newStore()
		env = append(srv.Env(), "RECORDS_REPLICA="+srv.URL("one"))
		r := runQuery(s.dir, env, "", "--store", s.path, "kind", "apply", kindsFile())
		Expect(r.code).To(Equal(0), r.stderr)
	})

	It("append --wait-replicated returns once the replica holds the rows", func() {
		r := runQuery(s.dir, env, msgLines("m", 0, 3), "--store", s.path, "append", "--stream", "e1", "--kind", "events", "--wait-replicated")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(restoredMessages(srv.URL("one"), "e1")).To(Equal([]string{"m-0", "m-1", "m-2"}))
	})

	It("serve --replica ships each append, and status and /metrics show the replica's position", func() {
		cmd := []string{"--store", s.path, "--replica", srv.URL("served"), "serve", "--addr", "127.0.0.1:0"}
		_, base := startQueryServeEnv(srv.Env(), cmd...)
		// Another process appends through the spool and waits for the
		// owner's replica.
		r := runQuery(s.dir, srv.Env(), msgLines("s", 0, 2), "--store", s.path, "append", "--stream", "e2", "--kind", "events", "--wait-replicated")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring(`"role":"spooled"`))
		Expect(restoredMessages(srv.URL("served"), "e2")).To(Equal([]string{"s-0", "s-1"}))

		st := decodeLines(runQuery(s.dir, nil, "", "--store", s.path, "status").stdout)
		Expect(st).To(HaveLen(1))
		rep, ok := st[0]["replica"].(map[string]any)
		Expect(ok).To(BeTrue(), "status %v", st[0])
		Expect(rep["running"]).To(BeTrue())
		Expect(rep["replicaTxid"]).NotTo(Equal(num("0")))
		Expect(rep["target"]).To(HavePrefix("s3://records/served"))

		code, _, body := get(base + "/metrics")
		Expect(code).To(Equal(200))
		Expect(body).To(MatchRegexp(`(?m)^records_replica_txid [1-9]`))
		Expect(body).To(MatchRegexp(`(?m)^records_replica_failing 0$`))
		Expect(body).To(ContainSubstring("records_replica_lag_seconds"))
	})

	It("query fleet append --wait-replicated ships the tenant's store under <prefix>/tenant/<id>", func() {
		root := filepath.Join(s.dir, "fleet")
		Expect(os.Mkdir(root, 0o700)).To(Succeed())
		fleetArgs := func(args ...string) []string {
			return append([]string{"--replica", srv.URL("fleet"), "fleet", args[0], "--root", root, "--kinds", kindsFile()}, args[1:]...)
		}
		r := runQuery(s.dir, srv.Env(), "", fleetArgs("provision", "tenant:acme")...)
		Expect(r.code).To(Equal(0), r.stderr)
		r = runQuery(s.dir, srv.Env(), msgLines("t", 0, 2), fleetArgs("append", "tenant:acme", "--stream", "e1", "--kind", "events", "--wait-replicated")...)
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(restoredMessages(srv.URL("fleet/tenant/acme"), "e1")).To(Equal([]string{"t-0", "t-1"}))
	})

	It("refuses an address with credentials before anything is created", func() {
		bad := newStore()
		r := runQuery(bad.dir, nil, msgLines("x", 0, 1), "--store", bad.path, "--replica", "s3://key:secret@records/p", "append", "--stream", "e1", "--kind", "events")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: invalid: replica address s3://records/p: credentials belong in the environment"))
		Expect(r.stderr).NotTo(ContainSubstring("secret"))
		entries, err := os.ReadDir(bad.dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(BeEmpty())
	})

	It("append --wait-replicated to a store whose owner does not replicate is not_replicated, the rows appended", func() {
		r := runQuery(s.dir, nil, msgLines("n", 0, 1), "--store", s.path, "append", "--stream", "e3", "--kind", "events", "--wait-replicated")
		Expect(r.code).To(Equal(1))
		Expect(strings.TrimSpace(r.stderr)).To(HavePrefix("query: not_replicated: applied, but the replica does not hold it yet"))
		out := s.ok("", "scan", "--stream", "e3")
		Expect(out).To(ContainSubstring(`"n-0"`))
	})
})

// startQueryServeEnv is startQueryServe with extra environment entries
// (the S3 test server's credentials).
func startQueryServeEnv(env []string, args ...string) (*gexec.Session, string) {
	cmd := exec.Command(queryBin, args...)
	cmd.Env = append(withoutStoreEnv(), env...)
	session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { session.Kill().Wait(10 * time.Second) })
	var addr string
	Eventually(func() bool {
		m := listeningRE.FindSubmatch(session.Err.Contents())
		if m != nil {
			addr = string(m[1])
		}
		return m != nil
	}).WithTimeout(20 * time.Second).Should(BeTrue())
	return session, "http://" + addr
}
