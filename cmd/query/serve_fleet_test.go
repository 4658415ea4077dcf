// query serve --fleet over real HTTP: the read API of each store of a
// fleet, with stores provisioned by query fleet and appended to by another
// process through the fleet API (testdata/fleetappend).

package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

// fleetAppendBin appends rows to a fleet store through the fleet API, as
// a service would: built once, on first use.
var fleetAppendBin string

// fleetAppend runs fleetappend ROOT KEY STREAM events with rows on stdin.
func fleetAppend(root, key, stream, rows string) {
	if fleetAppendBin == "" {
		var err error
		fleetAppendBin, err = gexec.Build("github.com/fb46ecde/records/cmd/query/testdata/fleetappend")
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
	}
	cmd := exec.Command(fleetAppendBin, root, key, stream, "events")
	cmd.Stdin = strings.NewReader(rows)
	out, err := cmd.CombinedOutput()
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), string(out))
}

// startFleetServe starts query serve --fleet root on a free port, with
// more flags, and returns the session and its base URL.
func startFleetServe(dir, root string, flags ...string) (*gexec.Session, string) {
	return startQueryServe(dir, append([]string{"serve", "--fleet", root, "--addr", "127.0.0.1:0"}, flags...)...)
}

// metricValue reads one unlabelled sample from a /metrics body.
func metricValue(body, name string) float64 {
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(body)
	ExpectWithOffset(1, m).NotTo(BeNil(), "no %s in /metrics", name)
	v, err := strconv.ParseFloat(m[1], 64)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return v
}

// tenantRows is the NDJSON of n rows of tenant t.
func tenantRows(t string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"msg":"%s-%d"}`+"\n", t, i)
	}
	return b.String()
}

// scanOf is the rows response of tenantRows(t, n) appended to an empty
// stream.
func scanOf(t string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"_seq":%d,"msg":"%s-%d"}`+"\n", i, t, i)
	}
	return b.String()
}

var _ = Describe("query serve --fleet", func() {
	var dir, root string

	provision := func(ids ...string) {
		for _, id := range ids {
			r := runQuery(dir, nil, "", "fleet", "provision", "tenant:"+id, "--root", root, "--kinds", kindsFile())
			ExpectWithOffset(1, r.code).To(Equal(0), r.stderr)
		}
	}

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		root = filepath.Join(dir, "fleet")
		Expect(os.Mkdir(root, 0o700)).To(Succeed())
	})

	DescribeTable("turns SQLite's lookaside off at start, unless --sqlite-lookaside",
		func(flags []string, off bool) {
			provision("acme")
			session, base := startFleetServe(dir, root, append([]string{"--log-level", "debug"}, flags...)...)
			status, _, body := get(base + "/api/v1/tenants/acme/streams")
			Expect(status).To(Equal(http.StatusOK), body)
			if off {
				Expect(string(session.Err.Contents())).To(ContainSubstring("sqlite lookaside off"))
			} else {
				Expect(string(session.Err.Contents())).NotTo(ContainSubstring("sqlite lookaside"))
			}
		},
		Entry("by default", nil, true),
		Entry("--sqlite-lookaside keeps it", []string{"--sqlite-lookaside"}, false),
	)

	Context("with three tenants provisioned and appended to", func() {
		var (
			session *gexec.Session
			base    string
			tenants = map[string]int{"acme": 2, "beta": 3, "gamma": 1}
		)

		BeforeEach(func() {
			for id, n := range tenants {
				provision(id)
				fleetAppend(root, "tenant:"+id, "e1", tenantRows(id, n))
			}
			session, base = startFleetServe(dir, root)
		})

		It("serves each tenant's streams and rows from its own store", func() {
			for id, n := range tenants {
				status, ctype, body := get(base + "/api/v1/tenants/tenant:" + id + "/streams")
				Expect(status).To(Equal(http.StatusOK), body)
				Expect(ctype).To(Equal("application/json"))
				var list struct{ Streams []map[string]any }
				Expect(json.Unmarshal([]byte(body), &list)).To(Succeed())
				Expect(list.Streams).To(HaveLen(1))
				Expect(list.Streams[0]).To(HaveKeyWithValue("stream", "e1"))
				Expect(list.Streams[0]).To(HaveKeyWithValue("total", BeNumerically("==", n)))

				status, ctype, body = get(base + "/api/v1/tenants/" + id + "/streams/e1/rows")
				Expect(status).To(Equal(http.StatusOK), body)
				Expect(ctype).To(Equal("application/x-ndjson"))
				Expect(body).To(Equal(scanOf(id, n)))
			}
			_, _, body := get(base + "/api/v1/tenants/beta/streams/e1/rows?after=1&limit=1")
			Expect(body).To(Equal(`{"_seq":2,"msg":"beta-2"}` + "\n"))
		})

		It("lists the fleet's tenants sorted by key, a page at a time", func() {
			status, _, body := get(base + "/api/v1/tenants")
			Expect(status).To(Equal(http.StatusOK), body)
			var page struct {
				Tenants []struct{ Key, Path string }
				Next    string
			}
			Expect(json.Unmarshal([]byte(body), &page)).To(Succeed())
			var keys []string
			for _, t := range page.Tenants {
				keys = append(keys, t.Key)
				Expect(filepath.Join(root, t.Path)).To(BeARegularFile())
			}
			Expect(keys).To(Equal([]string{"tenant:acme", "tenant:beta", "tenant:gamma"}))
			Expect(page.Next).To(BeEmpty())

			_, _, body = get(base + "/api/v1/tenants?limit=2")
			page.Tenants, page.Next = nil, ""
			Expect(json.Unmarshal([]byte(body), &page)).To(Succeed())
			Expect(page.Tenants).To(HaveLen(2))
			Expect(page.Next).To(Equal("tenant:beta"))
			_, _, body = get(base + "/api/v1/tenants?limit=2&after=" + page.Next)
			page.Tenants, page.Next = nil, ""
			Expect(json.Unmarshal([]byte(body), &page)).To(Succeed())
			Expect(page.Tenants).To(HaveLen(1))
			Expect(page.Tenants[0].Key).To(Equal("tenant:gamma"))
			Expect(page.Next).To(BeEmpty())
		})

		It("answers /healthz, a tenant's /healthz and /metrics", func() {
			status, _, body := get(base + "/healthz")
			Expect(status).To(Equal(http.StatusOK))
			Expect(body).To(MatchJSON(`{"status":"ok"}`))
			status, _, body = get(base + "/api/v1/tenants/acme/healthz")
			Expect(status).To(Equal(http.StatusOK))
			Expect(body).To(MatchJSON(`{"status":"ok"}`))
			status, _, body = get(base + "/metrics")
			Expect(status).To(Equal(http.StatusOK))
			Expect(metricValue(body, "records_fleet_stores_open")).To(Equal(1.0))
			Expect(body).To(ContainSubstring(`records_http_requests_total{code="200",route="/api/v1/tenants/{key}/healthz"} 1`))
		})

		DescribeTable("answers errors as JSON with a status by code, creating nothing",
			func(path string, status int, code, says string) {
				// acme open (its owner files made) before the tree is taken
				warm, _, _ := get(base + "/api/v1/tenants/acme/streams")
				Expect(warm).To(Equal(http.StatusOK))
				before := treeOf(root)
				got, ctype, body := get(base + path)
				Expect(got).To(Equal(status), body)
				Expect(ctype).To(Equal("application/json"))
				c, msg := errorOf(body)
				Expect(c).To(Equal(code))
				Expect(msg).To(ContainSubstring(says))
				Expect(treeOf(root)).To(Equal(before))
			},
			Entry("a missing tenant", "/api/v1/tenants/ghost/streams", 404, "not_found", "tenant:ghost"),
			Entry("a missing tenant by key", "/api/v1/tenants/tenant:ghost/streams/e1/rows", 404, "not_found", "tenant:ghost"),
			Entry("an uppercase tenant id", "/api/v1/tenants/Acme/streams", 400, "invalid", "uppercase"),
			Entry("a key of the other mode", "/api/v1/tenants/slot:1/streams", 400, "invalid", "slot"),
			Entry("a key of no mode", "/api/v1/tenants/user:acme/streams", 400, "invalid", "mode"),
			Entry("a tenant id with a dot", "/api/v1/tenants/..x/streams", 400, "invalid", "tenant id"),
			Entry("a tenant id with an escaped slash", "/api/v1/tenants/a%2F..%2Fb/streams", 400, "invalid", "tenant id"),
			Entry("a device name", "/api/v1/tenants/nul/streams", 400, "invalid", "device"),
			Entry("a tenant id too long", "/api/v1/tenants/"+strings.Repeat("a", 129)+"/streams", 400, "invalid", "longer"),
			Entry("an unknown stream of a tenant", "/api/v1/tenants/acme/streams/nope", 404, "not_found", "nope"),
			Entry("a bad after of a tenant", "/api/v1/tenants/acme/streams/e1/rows?after=x", 400, "invalid", "after"),
			Entry("an unknown route of a tenant, named with its tenant prefix", "/api/v1/tenants/acme/things", 404, "not_found", "no route for GET /api/v1/tenants/acme/things"),
			Entry("a tenant with no route after it", "/api/v1/tenants/acme", 404, "not_found", "no route for GET /api/v1/tenants/acme"),
			Entry("a bad page size", "/api/v1/tenants?limit=0", 400, "invalid", "limit"),
			Entry("a bad page start", "/api/v1/tenants?after=Acme", 400, "invalid", "key"),
			Entry("an unknown path", "/api/v2/things", 404, "not_found", "no route"),
		)

		It("follows one tenant's stream over HTTP with rows another process appends", func() {
			resp, err := http.Get(base + "/api/v1/tenants/tenant:acme/streams/e1/follow?after=1")
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
			Eventually(lines).WithTimeout(20 * time.Second).Should(Receive(Equal(`{"_seq":2,"msg":"acme-2"}`)))
			fleetAppend(root, "tenant:acme", "e1", `{"msg":"late"}`)
			Eventually(lines).WithTimeout(20 * time.Second).Should(Receive(Equal(`{"_seq":3,"msg":"late"}`)))
			_, _, body := get(base + "/api/v1/tenants/beta/streams/e1/rows")
			Expect(body).To(Equal(scanOf("beta", 3)), "another tenant is untouched")

			session.Terminate()
			Eventually(lines).WithTimeout(20 * time.Second).Should(BeClosed())
			Eventually(session).WithTimeout(20 * time.Second).Should(gexec.Exit(0))
		})

		It("ends a follow of a store deleted by query fleet delete, and serves the store provisioned again, never the deleted one", func() {
			resp, err := http.Get(base + "/api/v1/tenants/acme/streams/e1/follow")
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusOK))
			lines := make(chan string, 10)
			ended := make(chan error, 1)
			go func() {
				defer GinkgoRecover()
				defer close(lines)
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					lines <- sc.Text()
				}
				ended <- sc.Err()
			}()
			Eventually(lines).WithTimeout(20 * time.Second).Should(Receive(Equal(`{"_seq":2,"msg":"acme-2"}`)))

			r := runQuery(dir, nil, "", "fleet", "delete", "tenant:acme", "--force", "--root", root)
			Expect(r.code).To(Equal(0), r.stderr)
			provision("acme")
			r = runQuery(dir, nil, `{"msg":"new"}`+"\n", "fleet", "append", "tenant:acme", "--root", root, "--stream", "e1", "--kind", "events")
			Expect(r.code).To(Equal(0), r.stderr)

			status, _, body := get(base + "/api/v1/tenants/acme/streams/e1/rows")
			Expect(status).To(Equal(http.StatusOK), body)
			Expect(body).To(Equal(`{"_seq":1,"msg":"new"}`+"\n"), "the new store's rows, not the deleted one's")

			// The follow of the deleted store ended, cleanly, with no row
			// of the new store; serve holds nothing of the deleted file.
			Eventually(lines).WithTimeout(20 * time.Second).Should(BeClosed())
			Expect(ended).To(Receive(BeNil()))
			Eventually(func() []string {
				return deletedFilesHeld(session.Command.Process.Pid, root)
			}).WithTimeout(20 * time.Second).Should(BeEmpty())
		})
	})

	It("answers every tenant in turn with --max-open 2, closing the least recently used", func() {
		ids := []string{"t1", "t2", "t3", "t4", "t5"}
		for _, id := range ids {
			provision(id)
			fleetAppend(root, "tenant:"+id, "e1", tenantRows(id, 2))
		}
		_, base := startFleetServe(dir, root, "--max-open", "2", "--min-residency", "0")
		for round := 0; round < 2; round++ {
			for _, id := range ids {
				status, _, body := get(base + "/api/v1/tenants/" + id + "/streams/e1/rows")
				Expect(status).To(Equal(http.StatusOK), body)
				Expect(body).To(Equal(scanOf(id, 2)))
			}
		}
		Eventually(func() float64 {
			_, _, body := get(base + "/metrics")
			return metricValue(body, "records_fleet_stores_open")
		}).WithTimeout(20 * time.Second).Should(BeNumerically("<=", 2))
		_, _, body := get(base + "/metrics")
		Expect(metricValue(body, "records_fleet_evictions_total")).To(BeNumerically(">=", 3))
		Expect(metricValue(body, "records_fleet_opens_total")).To(BeNumerically(">", 5), "evicted stores were opened again")
	})

	It("serves a slot fleet by slot key or routing key, never creating a slot's store", func() {
		r := runQuery(dir, nil, "", "fleet", "provision", "slot:42", "--root", root, "--mode", "slot")
		Expect(r.code).To(Equal(0), r.stderr)
		_, base := startFleetServe(dir, root, "--mode", "slot")
		status, _, body := get(base + "/api/v1/tenants/slot:42/streams")
		Expect(status).To(Equal(http.StatusOK), body)
		Expect(body).To(MatchJSON(`{"streams":[]}`))
		status, _, body = get(base + "/api/v1/tenants/slot:00042/healthz")
		Expect(status).To(Equal(http.StatusOK), body)

		before := treeOf(root)
		status, _, body = get(base + "/api/v1/tenants/slot:43/streams")
		Expect(status).To(Equal(http.StatusNotFound), body)
		status, _, body = get(base + "/api/v1/tenants/some-routing-key/streams")
		Expect(status).To(Equal(http.StatusNotFound), body)
		status, _, body = get(base + "/api/v1/tenants/slot:16384/streams")
		Expect(status).To(Equal(http.StatusBadRequest), body)
		status, _, body = get(base + "/api/v1/tenants/tenant:acme/streams")
		Expect(status).To(Equal(http.StatusBadRequest), body)
		Expect(treeOf(root)).To(Equal(before))
	})

	It("refuses a root that does not exist, creating nothing", func() {
		missing := filepath.Join(dir, "nope")
		r := runQuery(dir, nil, "", "serve", "--fleet", missing, "--addr", "127.0.0.1:0")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("query: not_found: "))
		Expect(missing).NotTo(BeADirectory())
	})

	DescribeTable("is a usage error (exit 2) when the command line is wrong",
		func(args ...string) {
			r := runQuery(dir, nil, "", args...)
			Expect(r.code).To(Equal(2), r.stderr)
			Expect(r.stderr).To(HavePrefix("query: usage: "))
		},
		Entry("--fleet with --store", "--store", "x.sqlite", "serve", "--fleet", "fleet"),
		Entry("--fleet with --read-only", "--read-only", "serve", "--fleet", "fleet"),
		Entry("--fleet with --allow-writes", "serve", "--fleet", "fleet", "--allow-writes"),
		Entry("--mode without --fleet", "serve", "--mode", "slot"),
		Entry("--max-open without --fleet", "serve", "--max-open", "3"),
		Entry("an empty --fleet", "serve", "--fleet", ""),
		Entry("a bad --mode", "serve", "--fleet", "fleet", "--mode", "user"),
		Entry("a --max-open of 0", "serve", "--fleet", "fleet", "--max-open", "0"),
		Entry("a bad --addr", "serve", "--fleet", "fleet", "--addr", "nowhere"),
		Entry("--restore-missing without --fleet", "serve", "--restore-missing"),
		Entry("--restore-missing without --replica", "serve", "--fleet", "fleet", "--restore-missing"),
		Entry("--restore-missing without --lease", "--replica", "file:///nonexistent/replica", "serve", "--fleet", "fleet", "--restore-missing"),
	)
})

// deletedFilesHeld lists the files under root that process pid holds
// open although they were deleted (Linux: /proc/PID/fd).
func deletedFilesHeld(pid int, root string) []string {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	var held []string
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(target, root) && strings.HasSuffix(target, " (deleted)") {
			held = append(held, target)
		}
	}
	return held
}
