// The store shared by several real processes: query serve owning it, short
// commands writing through the spool, status seen from the outside, a
// second serve taking over when the owner is killed, and the owner's final
// drain on SIGTERM.

package main_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstoretest"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

// statusKeys are the fields query status prints while a process owns the
// store.
var statusKeys = []string{"instance", "pid", "host", "build", "phase", "epoch", "startedAt", "heartbeatAt",
	"store", "catalogVersion", "socket", "spool", "backlog", "failed", "refused", "lastError", "socketAlive", "stale", "wake"}

// pendingRE matches the failure of an append whose wait ran out, and
// captures the batch id.
var pendingRE = regexp.MustCompile(`^query: pending: batch ([0-9a-f]{32}) is spooled and not applied yet\n$`)

// liveness bounds every wait on another process: generous, since it is
// not a speed check.
const liveness = 30 * time.Second

// pidOf returns the pid of a session's process as JSON prints it.
func pidOf(session *gexec.Session) json.Number {
	return json.Number(strconv.Itoa(session.Command.Process.Pid))
}

// logOf returns what a session has logged so far.
func logOf(session *gexec.Session) func() string {
	return func() string { return string(session.Err.Contents()) }
}

// msgs returns the msg column of every row of an events stream.
func (s *store) msgs(stream string) []string {
	var out []string
	for _, row := range decodeLines(s.ok("", "scan", "--stream", stream)) {
		out = append(out, row["msg"].(string))
	}
	return out
}

// signal sends sig to a session's process (SIGSTOP and SIGCONT, which
// gexec has no shorthand for); after a SIGSTOP it returns once every
// thread of the process is stopped (recordstoretest.StopProcess).
func signal(session *gexec.Session, sig syscall.Signal) {
	if sig == syscall.SIGSTOP {
		ExpectWithOffset(1, recordstoretest.StopProcess(session.Command.Process.Pid)).To(Succeed())
		return
	}
	ExpectWithOffset(1, session.Command.Process.Signal(sig)).To(Succeed())
}

var _ = Describe("a store owned by query serve", func() {
	var s *store

	BeforeEach(func() {
		s = newStore()
		s.ok("", "kind", "apply", kindsFile())
		s.ok(`{"msg":"a"}`+"\n"+`{"msg":"b"}`, "append", "--stream", "e1", "--kind", "events")
	})

	Describe("query status", func() {
		It(`prints {"phase":"none"} when no process owns the store, without creating anything`, func() {
			fresh := newStore()
			Expect(fresh.ok("", "status")).To(Equal(`{"phase":"none"}` + "\n"))
			Expect(fresh.path + ".lock").NotTo(BeAnExistingFile())
			Expect(spool.PathFor(fresh.path)).NotTo(BeAnExistingFile())

			Expect(s.ok("", "status")).To(Equal(`{"phase":"none"}`+"\n"), "the last command released the store")
		})

		It("counts the backlog in incoming/, not in the state file's last heartbeat", func() {
			session, _ := startServe(s)
			session.Kill()
			Eventually(session).WithTimeout(liveness).Should(gexec.Exit())
			Expect(s.one("", "status")).To(HaveKeyWithValue("backlog", num("0")))
			s.publish()
			s.publish()
			st := s.one("", "status")
			Expect(st).To(HaveKeyWithValue("stale", true))
			Expect(st).To(HaveKeyWithValue("backlog", num("2")), "the two batches wait, whatever the dead owner last wrote")
		})

		It(`reports a state file that is not a state as {"phase":"unknown"} with a hint, and exits 0`, func() {
			Expect(os.WriteFile(s.path+".owner.json", []byte("\x00garbage{"), 0o600)).To(Succeed())
			s.publish()
			st := s.one("", "status")
			Expect(keys(st)).To(ConsistOf("phase", "backlog", "hint"))
			Expect(st).To(HaveKeyWithValue("phase", "unknown"))
			Expect(st).To(HaveKeyWithValue("backlog", num("1")))
			Expect(st["hint"]).To(ContainSubstring("replaces it"))
		})

		It("describes a running serve, and a killed one as stale", func() {
			session, base := startServe(s)
			st := s.one("", "status")
			Expect(keys(st)).To(ConsistOf(statusKeys))
			Expect(st).To(HaveKeyWithValue("phase", "ready"))
			Expect(st).To(HaveKeyWithValue("pid", pidOf(session)))
			Expect(st).To(HaveKeyWithValue("socketAlive", true))
			Expect(st).To(HaveKeyWithValue("wake", "push"), "the owner pushes commit notices")
			Expect(st).To(HaveKeyWithValue("stale", false))
			Expect(st).To(HaveKeyWithValue("catalogVersion", num("1")))
			Expect(st).To(HaveKeyWithValue("backlog", num("0")))
			Expect(st).To(HaveKeyWithValue("lastError", ""))
			Expect(st["heartbeatAt"]).To(MatchRegexp(datetimeRE))
			Expect(st["spool"]).To(HaveKeyWithValue("dir", spool.PathFor(s.path)))
			Expect(st).To(HaveKeyWithValue("store", filepath.Join(filepath.Dir(s.path), "v1", filepath.Base(s.path))), "the live file of catalog version 1")
			Expect(st).To(HaveKeyWithValue("socket", s.path+".sock"))
			Expect(st).To(HaveKeyWithValue("epoch", num("3")), "two commands owned the store before it, each one epoch")

			code, _, body := get(base + "/api/v1/status")
			Expect(code).To(Equal(http.StatusOK))
			var api map[string]any
			Expect(json.Unmarshal([]byte(body), &api)).To(Succeed())
			Expect(keys(api)).To(ConsistOf(statusKeys))
			Expect(api).To(HaveKeyWithValue("instance", st["instance"]))
			Expect(api).To(HaveKeyWithValue("socketAlive", true))

			session.Kill()
			Eventually(session).WithTimeout(liveness).Should(gexec.Exit())
			st = s.one("", "status")
			Expect(st).To(HaveKeyWithValue("pid", pidOf(session)))
			Expect(st).To(HaveKeyWithValue("stale", true))
			Expect(st).To(HaveKeyWithValue("socketAlive", false))
			Expect(st).To(HaveKeyWithValue("wake", "polling"), "no owner answers: followers poll")
		})
	})

	Describe("an entry refused in a batch nobody waits for", func() {
		It("is logged by the owner, counted in status and listed by spool ls --refused", func() {
			session, _ := startServe(s)
			Eventually(logOf(session)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))
			s.ok("", "seal", "--stream", "e1")
			name := s.one(msgLines("late", 0, 1), "spool", "publish", "--stream", "e1", "--kind", "events")["batch"].(string)
			id := name[strings.LastIndex(name, "-")+1:]
			Eventually(logOf(session)).WithTimeout(liveness).Should(And(
				ContainSubstring(`level=WARN msg="entry refused"`), ContainSubstring("batch="+name), ContainSubstring("entry=0"),
				ContainSubstring("code=sealed")))
			st := s.one("", "status")
			Expect(st).To(HaveKeyWithValue("refused", num("1")))
			Expect(st).To(HaveKeyWithValue("failed", num("0")), "the batch committed; only its entry was refused")

			ls := s.lines("", "spool", "ls", "--refused")
			Expect(ls).To(HaveLen(1))
			Expect(keys(ls[0])).To(ConsistOf("batch", "producer", "seq", "entry", "op", "stream", "code", "message", "ingestedAt"))
			Expect(ls[0]).To(HaveKeyWithValue("batch", id))
			Expect(ls[0]).To(HaveKeyWithValue("entry", num("0")))
			Expect(ls[0]).To(HaveKeyWithValue("op", "append"))
			Expect(ls[0]).To(HaveKeyWithValue("stream", "e1"))
			Expect(ls[0]).To(HaveKeyWithValue("code", "sealed"))
			Expect(ls[0]["message"]).To(ContainSubstring("e1"))
			Expect(ls[0]["ingestedAt"]).To(MatchRegexp(datetimeRE))
			Expect(s.msgs("e1")).To(Equal([]string{"a", "b"}), "the refused row was not stored")
		})
	})

	Describe("query append from another process", func() {
		var (
			session *gexec.Session
			base    string
		)

		BeforeEach(func() {
			session, base = startServe(s)
			Eventually(logOf(session)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))
		})

		It("goes through the spool and prints the owner's exact window", func() {
			res := s.one(`{"msg":"c"}`+"\n"+`{"msg":"d"}`, "append", "--stream", "e1", "--kind", "events")
			Expect(res).To(Equal(map[string]any{"stream": "e1", "kind": "events", "from": num("3"), "to": num("4"),
				"appended": num("2"), "skipped": num("0"), "replaced": num("0"), "role": "spooled"}))
			Expect(s.msgs("e1")).To(Equal([]string{"a", "b", "c", "d"}))
			_, _, body := get(base + "/api/v1/streams/e1/rows?after=2")
			Expect(body).To(Equal(`{"_seq":3,"msg":"c"}` + "\n" + `{"_seq":4,"msg":"d"}` + "\n"))
			// The folder leaves incoming/ once the idle owner has synced.
			Eventually(func() []string { return s.entries(spool.StateIncoming) }).WithTimeout(liveness).Should(BeEmpty())
		})

		It("with --batch-rows sends the rows to the owner in batches, as one append is sent, and prints their windows together", func() {
			res := s.one(msgLines("bulk", 0, 2500), "append", "--stream", "e1", "--kind", "events", "--batch-rows", "1000")
			Expect(res).To(Equal(map[string]any{"stream": "e1", "kind": "events", "from": num("3"), "to": num("2502"),
				"appended": num("2500"), "skipped": num("0"), "replaced": num("0"), "role": "spooled", "batches": num("3")}))
			msgs := s.msgs("e1")
			Expect(msgs).To(HaveLen(2502))
			Expect(msgs[2]).To(Equal("bulk-0"))
			Expect(msgs[2501]).To(Equal("bulk-2499"))
			// Each batch goes as an append without --batch-rows goes: over
			// the owner's socket when it answers there, else the spool.
			Eventually(func() []string { return s.entries(spool.StateIncoming) }).WithTimeout(liveness).Should(BeEmpty())
		})

		It("with --no-wait prints the batch id at once, and the rows arrive", func() {
			out := s.one(`{"msg":"c"}`, "append", "--stream", "e1", "--kind", "events", "--no-wait")
			Expect(keys(out)).To(ConsistOf("batch", "pending"))
			Expect(out).To(HaveKeyWithValue("pending", true))
			Expect(spool.ValidID(out["batch"].(string))).To(BeTrue(), "batch %v", out["batch"])
			Eventually(func() string {
				_, _, body := get(base + "/api/v1/streams/e1/rows?after=2")
				return body
			}).WithTimeout(liveness).Should(Equal(`{"_seq":3,"msg":"c"}` + "\n"))
			Expect(s.msgs("e1")).To(Equal([]string{"a", "b", "c"}))
		})

		It("with --timeout fails with code pending and the batch id while the owner is stopped, and the batch is applied once when it resumes", func() {
			signal(session, syscall.SIGSTOP)
			r := s.run(`{"msg":"late"}`, "append", "--stream", "e1", "--kind", "events", "--timeout", "300ms")
			signal(session, syscall.SIGCONT)
			Expect(r.code).To(Equal(1), r.stderr)
			Expect(r.stdout).To(BeEmpty())
			m := pendingRE.FindStringSubmatch(r.stderr)
			Expect(m).NotTo(BeNil(), "stderr %q", r.stderr)

			Eventually(s.msgs).WithArguments("e1").WithTimeout(liveness).Should(Equal([]string{"a", "b", "late"}))
			Eventually(func() []string { return s.entries(spool.StateIncoming) }).WithTimeout(liveness).Should(BeEmpty())
			Expect(s.entries(spool.StateTrash)).To(ContainElement(HaveSuffix(m[1])), "the batch named in the error is the one applied")
			Consistently(s.msgs).WithArguments("e1").WithTimeout(time.Second).Should(Equal([]string{"a", "b", "late"}))
		})

		It("with --schema sends the declaration in the rows' batch: --no-wait returns at once and --timeout ends the wait while the owner is stopped", func() {
			schema := writeFile(s.dir, "k9.json", `{"kinds":[{"name":"k9","columns":[{"name":"n","type":"integer"}]}]}`)
			signal(session, syscall.SIGSTOP)
			done := make(chan result, 1)
			go func() {
				done <- s.run(`{"n":1}`, "append", "--stream", "s9", "--kind", "k9", "--schema", schema, "--no-wait")
			}()
			var r result
			Eventually(done).WithTimeout(liveness).Should(Receive(&r), "--no-wait does not wait for the declaration either")
			Expect(r.code).To(Equal(0), r.stderr)
			out := decodeLines(r.stdout)
			Expect(out).To(HaveLen(1))
			Expect(out[0]).To(HaveKeyWithValue("pending", true))

			go func() {
				done <- s.run(`{"n":2}`, "append", "--stream", "s9", "--kind", "k9", "--schema", schema, "--timeout", "300ms")
			}()
			Eventually(done).WithTimeout(liveness).Should(Receive(&r), "--timeout bounds the declaration's wait too")
			signal(session, syscall.SIGCONT)
			Expect(r.code).To(Equal(1), r.stderr)
			m := pendingRE.FindStringSubmatch(r.stderr)
			Expect(m).NotTo(BeNil(), "stderr %q", r.stderr)

			// Until the resumed owner applies the first batch, the stream
			// does not exist yet: a scan then fails not_found, and is tried again.
			Eventually(func(g Gomega) {
				r := s.run("", "scan", "--stream", "s9")
				g.Expect(r.code).To(Equal(0), r.stderr)
				g.Expect(decodeLines(r.stdout)).To(Equal([]map[string]any{{"_seq": num("1"), "n": num("1")}, {"_seq": num("2"), "n": num("2")}}))
			}).WithTimeout(liveness).Should(Succeed())
			Eventually(func() []string { return s.entries(spool.StateIncoming) }).WithTimeout(liveness).Should(BeEmpty())
			Expect(s.entries(spool.StateTrash)).To(ContainElement(HaveSuffix(m[1])), "the batch named in the error held the rows")
			Expect(s.ok("", "kind", "list")).To(ContainSubstring(`"k9"`))
		})

		It("with --batch-rows and --timeout fails with code pending naming the spooled batch, and says which rows wait, while the owner is stopped", func() {
			signal(session, syscall.SIGSTOP)
			r := s.run(msgLines("late", 0, 5), "append", "--stream", "e1", "--kind", "events", "--batch-rows", "2", "--timeout", "300ms")
			signal(session, syscall.SIGCONT)
			Expect(r.code).To(Equal(1), r.stderr)
			m := regexp.MustCompile(`^query: pending: batch ([0-9a-f]{32}) is spooled and not applied yet \(applied: 0 rows in 0 batches\) \(spooled, not applied yet: (\d+) rows in (\d+) batch(es)?\)\n$`).
				FindStringSubmatch(r.stderr)
			Expect(m).NotTo(BeNil(), "stderr %q", r.stderr)
			spooled, err := strconv.Atoi(m[2])
			Expect(err).NotTo(HaveOccurred())
			Expect(spooled).To(BeNumerically(">=", 2), "at least the first batch was published before the wait ran out")

			Eventually(s.msgs).WithArguments("e1").WithTimeout(liveness).Should(HaveLen(2 + spooled))
			Eventually(func() []string { return s.entries(spool.StateIncoming) }).WithTimeout(liveness).Should(BeEmpty())
			Expect(s.entries(spool.StateTrash)).To(ContainElement(HaveSuffix(m[1])), "the batch named in the error is one applied")
			Consistently(s.msgs).WithArguments("e1").WithTimeout(time.Second).Should(HaveLen(2+spooled), "exactly the rows it said")
		})

		It("await prints the outcome of a --no-wait append, of a pending one once the owner resumes, and of a refused one", func() {
			out := s.one(`{"msg":"c"}`, "append", "--stream", "e1", "--kind", "events", "--no-wait")
			id := out["batch"].(string)
			res := s.one("", "await", id)
			Expect(res).To(HaveKeyWithValue("id", id))
			Expect(res).To(HaveKeyWithValue("outcome", "committed"))
			Expect(res["entries"]).To(Equal([]any{map[string]any{"op": "append", "stream": "e1", "append": map[string]any{
				"stream": "e1", "kind": "events", "from": num("3"), "to": num("3"),
				"appended": num("1"), "skipped": num("0"), "replaced": num("0")}}}))

			signal(session, syscall.SIGSTOP)
			r := s.run(`{"msg":"late"}`, "append", "--stream", "e1", "--kind", "events", "--timeout", "300ms")
			m := pendingRE.FindStringSubmatch(r.stderr)
			Expect(m).NotTo(BeNil(), "stderr %q", r.stderr)
			w := s.run("", "await", m[1], "--timeout", "300ms")
			signal(session, syscall.SIGCONT)
			Expect(w.code).To(Equal(1))
			Expect(w.stdout).To(BeEmpty())
			Expect(w.stderr).To(Equal(r.stderr), "the same pending line")
			res = s.one("", "await", m[1])
			Expect(res).To(HaveKeyWithValue("outcome", "committed"))
			Expect(s.msgs("e1")).To(Equal([]string{"a", "b", "c", "late"}))

			// spool publish checks nothing against the store: the owner
			// refuses the append.
			s.ok("", "seal", "--stream", "e1")
			refused := s.one(`{"msg":"after the seal"}`, "spool", "publish", "--stream", "e1", "--kind", "events", "-")
			name := refused["batch"].(string) // a batch name: await takes those too
			w = s.run("", "await", name)
			Expect(w.code).To(Equal(1))
			Expect(w.stderr).To(Equal("query: sealed: batch " + name[len(name)-32:] + ": stream e1 is sealed\n"))
			line := decodeLines(w.stdout)
			Expect(line).To(HaveLen(1), "the outcome is printed all the same")
			Expect(line[0]).To(HaveKeyWithValue("outcome", "committed"))
		})

		It("await refuses a batch nobody knows, and an argument that is no batch", func() {
			w := s.run("", "await", "0123456789abcdef0123456789abcdef")
			Expect(w.code).To(Equal(1))
			Expect(w.stderr).To(HavePrefix("query: not_found: "))
			w = s.run("", "await", "nope")
			Expect(w.code).To(Equal(1))
			Expect(w.stderr).To(HavePrefix("query: invalid: "))
			w = s.run("", "await", "0123456789abcdef0123456789abcdef", "--timeout", "-1s")
			Expect(w.code).To(Equal(2))
		})

		It("declares kinds and seals, reopens, expires, trims and deletes through the owner", func() {
			Expect(s.ok(`{"kinds":[{"name":"notes","columns":[{"name":"msg","type":"string"}]}]}`, "kind", "apply", "-")).
				To(Equal(`{"name":"notes","status":"created"}` + "\n"))
			Expect(s.lines("", "kind", "list")).To(HaveLen(3))
			Expect(s.one(`{"msg":"n1"}`, "append", "--stream", "n", "--kind", "notes")).To(HaveKeyWithValue("role", "spooled"))

			sealed := s.one("", "seal", "--stream", "n")
			Expect(keys(sealed)).To(ConsistOf(metaKeys))
			Expect(sealed).To(HaveKeyWithValue("sealed", true))
			r := s.run(`{"msg":"n2"}`, "append", "--stream", "n", "--kind", "notes")
			Expect(r.code).To(Equal(1))
			Expect(r.stderr).To(HavePrefix("query: sealed: "))

			reopened := s.one("", "reopen", "--stream", "n", "--generation", sealed["generation"].(json.Number).String())
			Expect(reopened).To(HaveKeyWithValue("sealed", false))
			Expect(s.one(`{"msg":"n2"}`, "append", "--stream", "n", "--kind", "notes")).To(HaveKeyWithValue("from", num("2")))

			expiring := s.one("", "expire", "--stream", "n", "--ttl", "1h")
			Expect(expiring["expiresAt"]).To(MatchRegexp(datetimeRE))
			future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
			trimmed := s.one("", "trim", "--stream", "n", "--before", future)
			Expect(trimmed).To(HaveKeyWithValue("total", num("0")))
			Expect(trimmed).To(HaveKeyWithValue("highSeq", num("2")))

			Expect(s.ok("", "delete", "--stream", "n")).To(Equal(`{"stream":"n","deleted":true}` + "\n"))
			Expect(s.run("", "meta", "--stream", "n").stderr).To(HavePrefix("query: not_found: "))
			Expect(s.one("", "status")).To(HaveKeyWithValue("pid", pidOf(session)), "serve owned the store throughout")
		})

		// writingCommands are the commands that write, other than append,
		// as they run against the store of the BeforeEach (stream e1 of
		// kind events, at generation 1).
		writingCommands := func() []TableEntry {
			newKind := `{"kinds":[{"name":"notes","columns":[{"name":"msg","type":"string"}]}]}`
			return []TableEntry{
				Entry("seal", "", "seal", "--stream", "e1"),
				Entry("reopen", "", "reopen", "--stream", "e1", "--generation", "1"),
				Entry("expire", "", "expire", "--stream", "e1", "--ttl", "1h"),
				Entry("trim", "", "trim", "--stream", "e1", "--before", "2000-01-01T00:00:00Z"),
				Entry("delete", "", "delete", "--stream", "e1"),
				Entry("kind apply", newKind, "kind", "apply", "-"),
			}
		}

		// appliedOnResume checks that the owner, resumed, applies batch id
		// without an error.
		appliedOnResume := func(id string) {
			GinkgoHelper()
			res := s.one("", "await", id, "--timeout", liveness.String())
			Expect(res).To(HaveKeyWithValue("outcome", "committed"))
			Expect(res).NotTo(HaveKey("error"))
		}

		DescribeTable("every writing command with --timeout fails with code pending naming the batch while the owner is stopped, and the batch is applied when it resumes",
			func(stdin string, args ...string) {
				signal(session, syscall.SIGSTOP)
				r := s.run(stdin, append(args, "--timeout", "300ms")...)
				signal(session, syscall.SIGCONT)
				Expect(r.code).To(Equal(1), r.stderr)
				Expect(r.stdout).To(BeEmpty())
				m := pendingRE.FindStringSubmatch(r.stderr)
				Expect(m).NotTo(BeNil(), "stderr %q", r.stderr)
				appliedOnResume(m[1])
			},
			writingCommands(),
		)

		DescribeTable("every writing command with --no-wait prints the batch at once while the owner is stopped, and the batch is applied when it resumes",
			func(stdin string, args ...string) {
				signal(session, syscall.SIGSTOP)
				done := make(chan result, 1)
				go func() { done <- s.run(stdin, append(args, "--no-wait")...) }()
				var r result
				Eventually(done).WithTimeout(liveness).Should(Receive(&r), "--no-wait does not wait for the owner")
				signal(session, syscall.SIGCONT)
				Expect(r.code).To(Equal(0), r.stderr)
				out := decodeLines(r.stdout)
				Expect(out).To(HaveLen(1))
				Expect(keys(out[0])).To(ConsistOf("batch", "pending"))
				Expect(out[0]).To(HaveKeyWithValue("pending", true))
				appliedOnResume(out[0]["batch"].(string))
			},
			writingCommands(),
		)

		It("refuses --timeout with --no-wait, and a negative --timeout, on every writing command", func() {
			for _, args := range [][]string{{"seal", "--stream", "e1"}, {"kind", "apply", "-"}, {"delete", "--stream", "e1"}} {
				r := s.run("", append(args, "--no-wait", "--timeout", "1s")...)
				Expect(r.code).To(Equal(2), "%v", args)
				Expect(r.stderr).To(ContainSubstring("--timeout and --no-wait cannot be used together"))
				Expect(s.run("", append(args, "--timeout", "-1s")...).code).To(Equal(2), "%v", args)
			}
			Expect(s.msgs("e1")).To(Equal([]string{"a", "b"}))
		})
	})

	It("promotes a standing-by serve when the owner is killed", func() {
		first, _ := startServe(s)
		Eventually(logOf(first)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))
		second, base := startServe(s)
		Expect(logOf(second)()).To(ContainSubstring("msg=role role=non-owner"))
		Expect(logOf(second)()).NotTo(ContainSubstring("msg=role role=owner"))
		_, _, body := get(base + "/api/v1/streams/e1/rows")
		Expect(body).To(Equal(`{"_seq":1,"msg":"a"}` + "\n" + `{"_seq":2,"msg":"b"}` + "\n"))

		first.Signal(syscall.SIGKILL)
		Eventually(first).WithTimeout(liveness).Should(gexec.Exit())
		Eventually(logOf(second)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))
		Eventually(func() any { return s.one("", "status")["pid"] }).WithTimeout(liveness).Should(Equal(pidOf(second)))

		res := s.one(`{"msg":"c"}`, "append", "--stream", "e1", "--kind", "events")
		Expect(res).To(HaveKeyWithValue("role", "spooled"))
		Expect(res).To(HaveKeyWithValue("from", num("3")))
		_, _, body = get(base + "/api/v1/streams/e1/rows?after=2")
		Expect(body).To(Equal(`{"_seq":3,"msg":"c"}` + "\n"))
		st := s.one("", "status")
		Expect(st).To(HaveKeyWithValue("stale", false))
		Expect(st).To(HaveKeyWithValue("socketAlive", true))
	})

	It("drains the spool before it exits 0 on SIGTERM", func() {
		session, _ := startServe(s)
		signal(session, syscall.SIGSTOP)
		s.ok(`{"msg":"c"}`, "spool", "publish", "--stream", "e1", "--kind", "events")
		Expect(s.entries(spool.StateIncoming)).To(HaveLen(1))
		session.Terminate()
		signal(session, syscall.SIGCONT)
		Eventually(session).WithTimeout(liveness).Should(gexec.Exit(0))
		Expect(logOf(session)()).To(ContainSubstring("msg=stopped"))

		// Checked before any other command could own the store and drain.
		Expect(s.entries(spool.StateIncoming)).To(BeEmpty())
		Expect(s.ok("", "status")).To(Equal(`{"phase":"none"}` + "\n"))
		Expect(s.msgs("e1")).To(Equal([]string{"a", "b", "c"}))
	})
})
