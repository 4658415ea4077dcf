package main_test

import (
	"os"
	"sort"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/fb46ecde/records/recordstoretest/s3test"
)

// leaseOf is the "lease" object of query status on path, nil when the
// status has none.
func leaseOf(dir, path string, env []string) map[string]any {
	r := runQuery(dir, env, "", "--store", path, "status")
	st := decodeLines(r.stdout)
	if len(st) != 1 {
		return nil
	}
	l, _ := st[0]["lease"].(map[string]any)
	return l
}

// Two "hosts" — two owner processes with separate local folders — share
// one object store: the replica and the lease beside it.
var _ = Describe("--lease s3", func() {
	var (
		srv  *s3test.Server
		url  string
		a, b *store
		env  []string
	)
	BeforeEach(func() {
		var err error
		srv, err = s3test.Start("records")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(srv.Kill)
		DeferCleanup(srv.SetEnv())
		url = srv.URL("hosts")
		env = srv.Env()
		a, b = newStore(), newStore()
		r := runQuery(a.dir, env, "", "--store", a.path, "--replica", url, "--lease", "s3", "kind", "apply", kindsFile())
		Expect(r.code).To(Equal(0), r.stderr)
	})

	// hostServe starts query serve on s as an owner with the lease.
	hostServe := func(s *store) *gexec.Session {
		sess, _ := startQueryServeEnv(env, "--store", s.path, "--replica", url, "--lease", "s3", "--lease-ttl", "2s",
			"serve", "--addr", "127.0.0.1:0")
		return sess
	}
	appendAcked := func(s *store, prefix string, first, n int) {
		GinkgoHelper()
		r := runQuery(s.dir, env, msgLines(prefix, first, n), "--store", s.path, "append", "--stream", "e1", "--kind", "events",
			"--wait-replicated", "--timeout", "60s")
		Expect(r.code).To(Equal(0), r.stderr)
	}

	takeOver := func(sig syscall.Signal) {
		hostA := hostServe(a)
		Eventually(func() any { return leaseOf(a.dir, a.path, env)["generation"] }, 30*time.Second, 50*time.Millisecond).ShouldNot(BeNil())
		genA := leaseOf(a.dir, a.path, env)["generation"]
		appendAcked(a, "a", 0, 3)

		signal(hostA, sig)

		// Host B: its folder has no store. It serves at once, with no
		// restore by hand: it reads a copy of the replica while A's lease
		// lasts, and takes the store over from the replica's newest state
		// once the lease expired.
		_, err := os.Stat(b.path)
		Expect(err).To(MatchError(os.ErrNotExist))
		hostServe(b)
		Eventually(func() any { return leaseOf(b.dir, b.path, env)["generation"] }, 60*time.Second, 50*time.Millisecond).ShouldNot(BeNil())
		Expect(leaseOf(b.dir, b.path, env)["generation"]).NotTo(Equal(genA))
		appendAcked(b, "b", 0, 3)

		if sig == syscall.SIGSTOP {
			signal(hostA, syscall.SIGCONT)
			// A finds its lease lost and steps down without writing.
			Eventually(hostA.Err, 30*time.Second).Should(gbytes.Say("lease lost"))
			Eventually(func() any { return leaseOf(a.dir, a.path, env) }, 30*time.Second, 50*time.Millisecond).Should(BeNil())
			// A write on host A does not commit: no owner there may
			// take the lease B holds.
			r := runQuery(a.dir, env, msgLines("late", 0, 1), "--store", a.path, "--replica", url, "--lease", "s3",
				"append", "--stream", "e1", "--kind", "events", "--wait-replicated", "--timeout", "3s")
			Expect(r.code).NotTo(Equal(0), r.stdout)
		}
		appendAcked(b, "b", 3, 2)

		scanned := runQuery(b.dir, env, "", "--store", b.path, "scan", "--stream", "e1")
		Expect(scanned.code).To(Equal(0), scanned.stderr)
		var onB []string
		for _, row := range decodeLines(scanned.stdout) {
			onB = append(onB, row["msg"].(string))
		}
		Expect(onB).To(Equal([]string{"a-0", "a-1", "a-2", "b-0", "b-1", "b-2", "b-3", "b-4"}), "host B's store")

		got := restoredMessages(url, "e1")
		sort.Strings(got)
		Expect(got).To(Equal([]string{"a-0", "a-1", "a-2", "b-0", "b-1", "b-2", "b-3", "b-4"}),
			"every acknowledged append once, nothing of A's after the stop")
	}

	It("a paused owner past its TTL is replaced by the other host and, resumed, never writes again", func() {
		takeOver(syscall.SIGSTOP)
	})

	It("a killed owner is replaced by the other host once its lease expired", func() {
		takeOver(syscall.SIGKILL)
	})

	It("refuses --lease without an s3:// --replica, creating nothing", func() {
		c := newStore()
		r := runQuery(c.dir, nil, "", "--store", c.path, "--replica", "file://"+c.dir+"/rep", "--lease", "s3", "kind", "apply", kindsFile())
		Expect(r.code).To(Equal(2), r.stderr)
		Expect(r.stderr).To(ContainSubstring("--lease s3 needs an s3:// --replica"))
		entries, err := os.ReadDir(c.dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(BeEmpty())
	})
})
