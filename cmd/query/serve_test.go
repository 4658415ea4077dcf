// query serve over real HTTP on a free port, found from its log line.

package main_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
)

var listeningRE = regexp.MustCompile(`msg=listening addr=(127\.0\.0\.1:\d+)`)

// startServe starts query serve on a free port and returns the session and
// its base URL.
func startServe(s *store) (*gexec.Session, string) {
	return startServeWith(s)
}

// startServeWith starts query serve on a free port with extra flags.
func startServeWith(s *store, flags ...string) (*gexec.Session, string) {
	return startQueryServe("", append([]string{"--store", s.path, "serve", "--addr", "127.0.0.1:0"}, flags...)...)
}

// startQueryServe runs query args... (a serve command) in dir (the test's
// folder when empty), waits until it logs the address it bound, and
// returns the session and its base URL; the session is killed at the end
// of the spec.
func startQueryServe(dir string, args ...string) (*gexec.Session, string) {
	cmd := exec.Command(queryBin, args...)
	cmd.Dir = dir
	cmd.Env = withoutStoreEnv()
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

// client bounds every request of the tests, so that a response that never
// ends fails the test instead of hanging it.
var client = &http.Client{Timeout: 30 * time.Second}

// get fetches url and returns status, content type and body.
func get(url string) (int, string, string) {
	resp, err := client.Get(url)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

// errorOf decodes an error response body.
func errorOf(body string) (code, message string) {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	ExpectWithOffset(1, json.Unmarshal([]byte(body), &e)).To(Succeed(), body)
	return e.Error.Code, e.Error.Message
}

var _ = Describe("query serve", func() {
	var (
		s       *store
		session *gexec.Session
		base    string
	)

	BeforeEach(func() {
		s = newStore()
		s.ok("", "kind", "apply", kindsFile())
		s.ok(jobRows, "append", "--stream", "s1", "--kind", "jobs")
		s.ok(`{"msg":"a"}`+"\n"+`{"msg":"b"}`+"\n"+`{"msg":"c"}`, "append", "--stream", "e1", "--kind", "events")
		session, base = startServe(s)
	})

	It("answers /healthz", func() {
		status, ctype, body := get(base + "/healthz")
		Expect(status).To(Equal(http.StatusOK))
		Expect(ctype).To(Equal("application/json"))
		Expect(body).To(MatchJSON(`{"status":"ok"}`))
	})

	It("lists streams, of one kind on request", func() {
		status, _, body := get(base + "/api/v1/streams")
		Expect(status).To(Equal(http.StatusOK))
		var list struct{ Streams []map[string]any }
		Expect(json.Unmarshal([]byte(body), &list)).To(Succeed())
		Expect(list.Streams).To(HaveLen(2))
		Expect(list.Streams[0]).To(HaveKeyWithValue("stream", "e1"))
		Expect(list.Streams[1]).To(HaveKeyWithValue("stream", "s1"))

		_, _, body = get(base + "/api/v1/streams?kind=jobs")
		Expect(json.Unmarshal([]byte(body), &list)).To(Succeed())
		Expect(list.Streams).To(HaveLen(1))

		s.ok(`{"kinds":[{"name":"idle","columns":[{"name":"a","type":"string"}]}]}`, "kind", "apply", "-")
		_, _, body = get(base + "/api/v1/streams?kind=idle")
		Expect(body).To(MatchJSON(`{"streams":[]}`))
	})

	It("serves a stream's meta exactly as query meta prints it", func() {
		status, ctype, body := get(base + "/api/v1/streams/s1")
		Expect(status).To(Equal(http.StatusOK))
		Expect(ctype).To(Equal("application/json"))
		Expect(body).To(Equal(s.ok("", "meta", "--stream", "s1")))
	})

	It("streams rows as NDJSON, exactly as query scan prints them", func() {
		status, ctype, body := get(base + "/api/v1/streams/s1/rows")
		Expect(status).To(Equal(http.StatusOK))
		Expect(ctype).To(Equal("application/x-ndjson"))
		Expect(body).To(Equal(jobScan))

		_, _, body = get(base + "/api/v1/streams/e1/rows?after=1&limit=1")
		Expect(body).To(Equal(`{"_seq":2,"msg":"b"}` + "\n"))
		_, _, body = get(base + "/api/v1/streams/e1/rows?after=3")
		Expect(body).To(BeEmpty())
	})

	It("follows a stream as NDJSON, with rows another process appends, until it is sealed", func() {
		resp, err := http.Get(base + "/api/v1/streams/e1/follow?after=1")
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(resp.Header.Get("Content-Type")).To(Equal("application/x-ndjson"))
		lines := make(chan string, 10)
		go func() {
			defer GinkgoRecover()
			defer close(lines)
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		Eventually(lines).WithTimeout(20 * time.Second).Should(Receive(Equal(`{"_seq":2,"msg":"b"}`)))
		Eventually(lines).WithTimeout(20 * time.Second).Should(Receive(Equal(`{"_seq":3,"msg":"c"}`)))
		s.ok(`{"msg":"d"}`, "append", "--stream", "e1", "--kind", "events")
		Eventually(lines).WithTimeout(20 * time.Second).Should(Receive(Equal(`{"_seq":4,"msg":"d"}`)))
		s.ok("", "seal", "--stream", "e1")
		Eventually(lines).WithTimeout(20 * time.Second).Should(BeClosed())
	})

	It("ends a follow response when it shuts down", func() {
		resp, err := http.Get(base + "/api/v1/streams/e1/follow?after=3")
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		ended := make(chan error, 1)
		go func() { _, err := io.ReadAll(resp.Body); ended <- err }()
		Consistently(ended).WithTimeout(300 * time.Millisecond).ShouldNot(Receive())
		session.Terminate()
		Eventually(ended).WithTimeout(20 * time.Second).Should(Receive(BeNil()))
		Eventually(session).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
	})

	DescribeTable("answers errors as JSON with a status by code",
		func(path string, status int, code, says string) {
			got, ctype, body := get(base + path)
			Expect(got).To(Equal(status), body)
			Expect(ctype).To(Equal("application/json"))
			c, msg := errorOf(body)
			Expect(c).To(Equal(code))
			Expect(msg).To(ContainSubstring(says))
		},
		Entry("an unknown stream's meta", "/api/v1/streams/nope", 404, "not_found", "nope"),
		Entry("an unknown stream's rows", "/api/v1/streams/nope/rows", 404, "not_found", "nope"),
		Entry("an invalid stream id", "/api/v1/streams/..x%20y", 400, "invalid", "stream id"),
		Entry("a bad after", "/api/v1/streams/s1/rows?after=abc", 400, "invalid", "after"),
		Entry("a negative limit", "/api/v1/streams/s1/rows?limit=-1", 400, "invalid", "limit"),
		Entry("a bad follow after", "/api/v1/streams/e1/follow?after=x", 400, "invalid", "after"),
		Entry("an invalid stream id to follow", "/api/v1/streams/..x%20y/follow", 400, "invalid", "stream id"),
		Entry("an invalid kind filter", "/api/v1/streams?kind=a-b", 400, "invalid", "kind name"),
		Entry("an undeclared kind filter", "/api/v1/streams?kind=nothing", 404, "not_found", "kind nothing"),
		Entry("an unknown path", "/api/v2/things", 404, "not_found", "no route"),
	)

	It("serves an HTML page listing the streams", func() {
		status, ctype, body := get(base + "/")
		Expect(status).To(Equal(http.StatusOK))
		Expect(ctype).To(HavePrefix("text/html"))
		Expect(body).To(ContainSubstring(`href="/api/v1/streams/s1"`))
		Expect(body).To(ContainSubstring(`href="/api/v1/streams/e1/rows?limit=100"`))
	})

	It("logs each request", func() {
		get(base + "/healthz")
		Eventually(func() string { return string(session.Err.Contents()) }).
			Should(MatchRegexp(`msg=request method=GET path=/healthz status=200`))
	})

	DescribeTable("shuts down cleanly on a signal",
		func(sig syscall.Signal) {
			session.Signal(sig)
			Eventually(session).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
			Expect(string(session.Err.Contents())).To(ContainSubstring("msg=stopped"))
			Expect(s.ok("", "status")).To(Equal(`{"phase":"none"}`+"\n"), "the owner released the store")
			Expect(strings.Count(s.ok("", "scan", "--stream", "e1"), "\n")).To(Equal(3))
		},
		Entry("SIGINT", syscall.SIGINT),
		Entry("SIGTERM", syscall.SIGTERM),
	)

	It("fails with exit 1 when the address is taken", func() {
		addr := strings.TrimPrefix(base, "http://")
		r := s.run("", "serve", "--addr", addr)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(MatchRegexp(`(?m)^query: internal: listen on ` + regexp.QuoteMeta(addr)))
	})

	It("warns, naming the address, when it listens on every interface", func() {
		other := newStore()
		cmd := exec.Command(queryBin, "--store", other.path, "serve", "--addr", "0.0.0.0:0")
		cmd.Env = withoutStoreEnv()
		wild, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { wild.Kill().Wait(10 * time.Second) })
		Eventually(wild.Err).WithTimeout(20 * time.Second).Should(gbytes.Say(`msg=listening`))
		Expect(string(wild.Err.Contents())).To(MatchRegexp(`level=WARN msg="listening on a non-loopback address[^"]*" addr=0\.0\.0\.0:0`))
		Expect(string(session.Err.Contents())).NotTo(ContainSubstring("non-loopback"), "127.0.0.1 is not warned about")
	})
})
