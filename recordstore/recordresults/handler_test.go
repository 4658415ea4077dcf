// The HTTP read API through httptest, over a real SQLite store opened with
// Open in a temp folder: every route, the error responses, follow as rows
// arrive, and the owner status.

package recordresults_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/spool"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
)

// apiWait bounds waits on the server: liveness, not speed.
const apiWait = 20 * time.Second

// apiEvents is a kind with one string column.
var apiEvents = recordstore.Kind{Name: "events", Columns: []recordstore.Column{{Name: "msg", Type: recordstore.TypeString}}}

// apiClient bounds every request, so that a response that never ends
// fails the test instead of hanging it.
var apiClient = &http.Client{Timeout: apiWait}

// apiServer is a store opened with Open and the read API over it.
type apiServer struct {
	st   *records.Store
	b    recordstore.Backend
	srv  *httptest.Server
	log  *gbytes.Buffer
	done chan struct{}
}

// newAPIServer opens a store in a temp folder, declares apiEvents, and
// serves the API over it with opts (Logger and Done are filled in, and
// Status and Batches with the store's own when ownStatus is set).
func newAPIServer(opts recordresults.HandlerOptions, ownStatus bool) *apiServer {
	ctx := context.Background()
	st, err := records.Open(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), records.Options{SweepInterval: -1})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(st.Close)
	Expect(st.Role()).To(Equal(owner.RoleOwner))
	_, err = st.Backend().DeclareKind(ctx, apiEvents)
	Expect(err).NotTo(HaveOccurred())
	a := &apiServer{st: st, b: st.Backend(), log: gbytes.NewBuffer(), done: make(chan struct{})}
	opts.Logger = slog.New(slog.NewTextHandler(a.log, nil))
	opts.Done = a.done
	if ownStatus {
		opts.Status = st.Status
		opts.Batches = st
	}
	a.srv = httptest.NewServer(recordresults.Handler(a.b, opts))
	DeferCleanup(a.srv.Close)
	return a
}

// appendMsgs appends one events row per msg to stream.
func (a *apiServer) appendMsgs(stream string, msgs ...string) {
	rows := make([]recordstore.Row, len(msgs))
	for i, m := range msgs {
		rows[i] = recordstore.Row{"msg": m}
	}
	_, err := a.b.Append(context.Background(), stream, "events", rows)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
}

// get fetches path and returns status, content type and body.
func (a *apiServer) get(path string) (int, string, string) {
	resp, err := apiClient.Get(a.srv.URL + path)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

// follow starts a follow request and returns a channel of its lines,
// closed when the response ends, and a function cancelling the request.
func (a *apiServer) follow(path string) (<-chan string, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	DeferCleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.srv.URL+path, nil)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, resp.StatusCode).To(Equal(http.StatusOK))
	ExpectWithOffset(1, resp.Header.Get("Content-Type")).To(Equal(recordresults.ContentTypeNDJSON))
	lines := make(chan string, 100)
	go func() {
		defer GinkgoRecover()
		defer close(lines)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines, cancel
}

// row is the JSON line of an events row.
func row(seq int, msg string) string {
	return fmt.Sprintf(`{"_seq":%d,"msg":%q}`, seq, msg)
}

// apiError decodes an error response body.
func apiError(body string) (code, message string) {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	ExpectWithOffset(1, json.Unmarshal([]byte(body), &e)).To(Succeed(), body)
	return e.Error.Code, e.Error.Message
}

var _ = Describe("Handler", func() {
	var a *apiServer

	BeforeEach(func() {
		a = newAPIServer(recordresults.HandlerOptions{}, false)
		a.appendMsgs("e1", "a", "b", "c")
	})

	It("answers /healthz", func() {
		status, ctype, body := a.get("/healthz")
		Expect(status).To(Equal(http.StatusOK))
		Expect(ctype).To(Equal("application/json"))
		Expect(body).To(MatchJSON(`{"status":"ok"}`))
	})

	It("lists the streams, of one kind on request", func() {
		a.appendMsgs("e0", "z")
		_, _, body := a.get("/api/v1/streams")
		want, err := a.b.Streams(context.Background(), "")
		Expect(err).NotTo(HaveOccurred())
		Expect(want).To(HaveLen(2))
		wantJSON, err := json.Marshal(map[string]any{"streams": want})
		Expect(err).NotTo(HaveOccurred())
		Expect(body).To(MatchJSON(wantJSON))

		_, err = a.b.DeclareKind(context.Background(), recordstore.Kind{Name: "idle", Columns: apiEvents.Columns})
		Expect(err).NotTo(HaveOccurred())
		_, _, body = a.get("/api/v1/streams?kind=idle")
		Expect(body).To(MatchJSON(`{"streams":[]}`))
	})

	It("serves a stream's meta", func() {
		status, _, body := a.get("/api/v1/streams/e1")
		Expect(status).To(Equal(http.StatusOK))
		m, err := a.b.Meta(context.Background(), "e1")
		Expect(err).NotTo(HaveOccurred())
		want, err := json.Marshal(m)
		Expect(err).NotTo(HaveOccurred())
		Expect(body).To(MatchJSON(want))
	})

	It("serves a window of rows as NDJSON, a page at a time past one page", func() {
		_, ctype, body := a.get("/api/v1/streams/e1/rows?after=1&limit=1")
		Expect(ctype).To(Equal(recordresults.ContentTypeNDJSON))
		Expect(body).To(Equal(row(2, "b") + "\n"))

		msgs := make([]string, 2500)
		for i := range msgs {
			msgs[i] = fmt.Sprint(i)
		}
		a.appendMsgs("big", msgs...)
		_, _, body = a.get("/api/v1/streams/big/rows")
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		Expect(lines).To(HaveLen(2500))
		Expect(lines[2499]).To(Equal(row(2500, "2499")))
		_, _, body = a.get("/api/v1/streams/big/rows?after=999&limit=1200")
		lines = strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		Expect(lines).To(HaveLen(1200))
		Expect(lines[0]).To(Equal(row(1000, "999")))
		Expect(lines[1199]).To(Equal(row(2199, "2198")))
	})

	It("serves an HTML page linking the streams", func() {
		status, ctype, body := a.get("/")
		Expect(status).To(Equal(http.StatusOK))
		Expect(ctype).To(HavePrefix("text/html"))
		Expect(body).To(ContainSubstring(`href="/api/v1/streams/e1/rows?limit=100"`))
	})

	It("logs each request", func() {
		a.get("/healthz")
		Eventually(a.log).WithTimeout(apiWait).Should(gbytes.Say(`msg=request method=GET path=/healthz status=200`))
	})

	DescribeTable("answers errors as JSON with the code's status and a message without the code",
		func(path string, status int, code, says string) {
			got, ctype, body := a.get(path)
			Expect(got).To(Equal(status), body)
			Expect(ctype).To(Equal("application/json"))
			c, msg := apiError(body)
			Expect(c).To(Equal(code))
			Expect(msg).To(ContainSubstring(says))
			Expect(msg).NotTo(HavePrefix(recordstore.SentinelForCode(code).Error() + ":"))
			Expect(recordresults.HTTPStatus(code)).To(Equal(status))
		},
		Entry("an unknown stream's meta", "/api/v1/streams/nope", 404, "not_found", "nope"),
		Entry("an unknown stream's rows", "/api/v1/streams/nope/rows", 404, "not_found", "nope"),
		Entry("an invalid stream id", "/api/v1/streams/..x%20y", 400, "invalid", "stream id"),
		Entry("an invalid stream id to follow", "/api/v1/streams/..x%20y/follow", 400, "invalid", "stream id"),
		Entry("a bad after", "/api/v1/streams/e1/rows?after=abc", 400, "invalid", "after"),
		Entry("a bad follow after", "/api/v1/streams/e1/follow?after=-1", 400, "invalid", "after"),
		Entry("a bad follow limit", "/api/v1/streams/e1/follow?limit=x", 400, "invalid", "limit"),
		Entry("a negative limit", "/api/v1/streams/e1/rows?limit=-1", 400, "invalid", "limit"),
		Entry("an invalid kind filter", "/api/v1/streams?kind=a-b", 400, "invalid", "kind name"),
		Entry("an undeclared kind filter", "/api/v1/streams?kind=nothing", 404, "not_found", "kind nothing"),
		Entry("an unknown path", "/api/v2/things", 404, "not_found", "no route"),
		Entry("status without a status function", "/api/v1/status", 404, "not_found", "no route"),
	)

	DescribeTable("answers a method other than GET or HEAD with 405 on a route, 404 elsewhere",
		func(method, path string, status int, code string) {
			req, err := http.NewRequest(method, a.srv.URL+path, nil)
			Expect(err).NotTo(HaveOccurred())
			resp, err := apiClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.StatusCode).To(Equal(status), string(body))
			Expect(resp.Header.Get("Content-Type")).To(Equal("application/json"))
			c, _ := apiError(string(body))
			Expect(c).To(Equal(code))
			if status == http.StatusMethodNotAllowed {
				Expect(resp.Header.Get("Allow")).To(Equal("GET, HEAD"))
			}
		},
		Entry("POST to the streams", http.MethodPost, "/api/v1/streams", 405, "unsupported"),
		Entry("DELETE of a stream", http.MethodDelete, "/api/v1/streams/e1", 405, "unsupported"),
		Entry("PUT to rows", http.MethodPut, "/api/v1/streams/e1/rows", 405, "unsupported"),
		Entry("POST to healthz", http.MethodPost, "/healthz", 405, "unsupported"),
		Entry("POST to an unknown path", http.MethodPost, "/api/v2/things", 404, "not_found"),
		Entry("POST to the status without a status function", http.MethodPost, "/api/v1/status", 404, "not_found"),
	)

	DescribeTable("HTTPStatus by code",
		func(code string, status int) { Expect(recordresults.HTTPStatus(code)).To(Equal(status)) },
		Entry(nil, "invalid", 400), Entry(nil, "unsupported", 400), Entry(nil, "not_found", 404),
		Entry(nil, "sealed", 409), Entry(nil, "schema_conflict", 409), Entry(nil, "capacity", 409),
		Entry(nil, "closed", 500), Entry(nil, "internal", 500),
	)

	Describe("follow", func() {
		It("writes the rows after a seq, then each row as it is appended, and ends when the stream is sealed", func() {
			lines, _ := a.follow("/api/v1/streams/e1/follow?after=1")
			Eventually(lines).WithTimeout(apiWait).Should(Receive(Equal(row(2, "b"))))
			Eventually(lines).WithTimeout(apiWait).Should(Receive(Equal(row(3, "c"))))
			Consistently(lines).WithTimeout(200 * time.Millisecond).ShouldNot(Receive())
			a.appendMsgs("e1", "d")
			Eventually(lines).WithTimeout(apiWait).Should(Receive(Equal(row(4, "d"))))
			_, err := a.b.Seal(context.Background(), "e1")
			Expect(err).NotTo(HaveOccurred())
			Eventually(lines).WithTimeout(apiWait).Should(BeClosed())
		})

		It("waits for a stream that does not exist yet", func() {
			lines, _ := a.follow("/api/v1/streams/later/follow")
			Consistently(lines).WithTimeout(200 * time.Millisecond).ShouldNot(Receive())
			a.appendMsgs("later", "first")
			Eventually(lines).WithTimeout(apiWait).Should(Receive(Equal(row(1, "first"))))
		})

		It("ends after limit rows", func() {
			lines, _ := a.follow("/api/v1/streams/e1/follow?limit=2")
			var got []string
			Eventually(func() bool {
				select {
				case l, ok := <-lines:
					if ok {
						got = append(got, l)
					}
					return !ok
				default:
					return false
				}
			}).WithTimeout(apiWait).Should(BeTrue())
			Expect(got).To(Equal([]string{row(1, "a"), row(2, "b")}))
		})

		It("ends when the client goes away", func() {
			lines, cancel := a.follow("/api/v1/streams/e1/follow?after=3")
			Consistently(lines).WithTimeout(200 * time.Millisecond).ShouldNot(Receive())
			cancel()
			Eventually(a.log).WithTimeout(apiWait).Should(gbytes.Say(`msg=request method=GET path=/api/v1/streams/e1/follow status=200`))
		})

		It("answers HEAD with a GET's headers at once, without waiting for rows", func() {
			resp, err := apiClient.Head(a.srv.URL + "/api/v1/streams/e1/follow?after=3")
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusOK))
			Expect(resp.Header.Get("Content-Type")).To(Equal(recordresults.ContentTypeNDJSON))
			Eventually(a.log).WithTimeout(apiWait).Should(gbytes.Say(`msg=request method=HEAD path=/api/v1/streams/e1/follow status=200`),
				"the request ended while the client still holds the connection")
		})

		It("ends when Done is closed", func() {
			lines, _ := a.follow("/api/v1/streams/e1/follow?after=3")
			Consistently(lines).WithTimeout(200 * time.Millisecond).ShouldNot(Receive())
			close(a.done)
			Eventually(lines).WithTimeout(apiWait).Should(BeClosed())
		})
	})
})

var _ = Describe("Handler with a status function", func() {
	It("serves the owner's status with exactly the printed fields", func() {
		a := newAPIServer(recordresults.HandlerOptions{}, true)
		status, ctype, body := a.get("/api/v1/status")
		Expect(status).To(Equal(http.StatusOK))
		Expect(ctype).To(Equal("application/json"))
		var st map[string]any
		dec := json.NewDecoder(strings.NewReader(body))
		dec.UseNumber()
		Expect(dec.Decode(&st)).To(Succeed())
		Expect(st).To(HaveLen(19), "subscribers left out: none")
		Expect(st).To(HaveKeyWithValue("wake", "push"))
		Expect(st).To(HaveKeyWithValue("refused", json.Number("0")))
		Expect(st).To(HaveKeyWithValue("phase", "ready"))
		Expect(st).To(HaveKeyWithValue("pid", json.Number(fmt.Sprint(os.Getpid()))))
		Expect(st).To(HaveKeyWithValue("socketAlive", true))
		Expect(st).To(HaveKeyWithValue("stale", false))
		Expect(st).To(HaveKeyWithValue("socket", a.st.Paths().Socket))
		Expect(st["heartbeatAt"]).To(MatchRegexp(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`))
	})

	It("answers a failing status function with its code", func() {
		a := newAPIServer(recordresults.HandlerOptions{Status: func(context.Context) (owner.Status, error) {
			return owner.Status{}, fmt.Errorf("read state: %w", recordstore.ErrClosed)
		}}, false)
		status, _, body := a.get("/api/v1/status")
		Expect(status).To(Equal(http.StatusInternalServerError))
		code, msg := apiError(body)
		Expect(code).To(Equal("closed"))
		Expect(msg).To(Equal("read owner status: read state: closed"))
	})
})

var _ = Describe("Status", func() {
	It(`prints {"phase":"none"} alone when no process owns the store`, func() {
		raw, err := json.Marshal(recordresults.NewStatus(owner.Status{State: owner.State{Phase: owner.PhaseNone}}))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(raw)).To(Equal(`{"phase":"none"}`))
	})

	It(`prints {"phase":"none"} with the damage met when there is some`, func() {
		st := recordresults.NewStatus(owner.Status{State: owner.State{Phase: owner.PhaseNone}})
		st.Corrupt = "live file x: database disk image is malformed"
		raw, err := json.Marshal(st)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(raw)).To(Equal(`{"phase":"none","corrupt":"live file x: database disk image is malformed"}`))
	})

	It("prints every field, times in the stored datetime form", func() {
		at := time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
		raw, err := json.Marshal(recordresults.NewStatus(owner.Status{
			State:       owner.State{Instance: "i", PID: 7, Phase: owner.PhaseDraining, StartedAt: at, HeartbeatAt: at, Backlog: 2, Refused: 3, LastError: "boom"},
			SocketAlive: false, Stale: true, Role: owner.RoleOwner, HeartbeatAgeMS: 5,
		}))
		Expect(err).NotTo(HaveOccurred())
		Expect(raw).To(MatchJSON(`{"instance":"i","pid":7,"host":"","build":"","phase":"draining","epoch":0,
			"startedAt":"2030-01-02T02:04:05.123456Z","heartbeatAt":"2030-01-02T02:04:05.123456Z","store":"",
			"catalogVersion":0,"socket":"","spool":{"dir":"","manifestFormat":0,"formats":null},"backlog":2,"failed":0,
			"refused":3,"lastError":"boom","socketAlive":false,"stale":true}`))
	})
})

// publishAs publishes one events row to stream e1 into the store's spool
// as producer id's batch seq, and returns the batch name.
func (a *apiServer) publishAs(id *spool.Identity, seq int64, msg string) spool.BatchName {
	GinkgoHelper()
	ctx := context.Background()
	d, err := spool.Open(ctx, a.st.Paths().Config, spool.Options{})
	Expect(err).NotTo(HaveOccurred())
	defer d.Close()
	vals, err := apiEvents.Normalize(recordstore.Row{"msg": msg})
	Expect(err).NotTo(HaveOccurred())
	n, err := d.Publish(ctx, &recordstore.Batch{ID: spool.NewID(), Created: time.Now(), Producer: id.Producer(seq),
		Schemas: []recordstore.Kind{apiEvents},
		Entries: []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "e1", Kind: apiEvents.Name,
			Rows: []recordstore.Values{vals}}}}, spool.FormatNDJSON)
	Expect(err).NotTo(HaveOccurred())
	return n
}

// appliedThenHeld publishes batch seq 1 of a new producer and waits for
// it over the API (its 200 body is returned), then seq 3, which the owner
// holds back for the missing 2 (a minute by default): it waits in
// incoming/.
func (a *apiServer) appliedThenHeld() (first, held spool.BatchName, body string) {
	GinkgoHelper()
	id := spool.NewIdentity("api test")
	first = a.publishAs(id, 1, "first")
	status, _, body := a.get("/api/v1/batches/" + first.ID + "?wait=" + apiWait.String())
	Expect(status).To(Equal(http.StatusOK), body)
	return first, a.publishAs(id, 3, "held"), body
}

var _ = Describe("Handler with batch outcomes", func() {
	It("answers a batch's outcome by id or name: 200 once applied, 202 while it waits, 404 unknown, 400 malformed", func() {
		a := newAPIServer(recordresults.HandlerOptions{}, true)
		first, held, body := a.appliedThenHeld()
		var res recordstore.BatchResult
		Expect(json.Unmarshal([]byte(body), &res)).To(Succeed())
		Expect(res.ID).To(Equal(first.ID))
		Expect(res.Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(res.Entries).To(HaveLen(1))
		Expect(res.Entries[0].Append.From).To(BeEquivalentTo(1))
		status, ctype, again := a.get("/api/v1/batches/" + first.String())
		Expect(status).To(Equal(http.StatusOK))
		Expect(ctype).To(Equal("application/json"))
		Expect(again).To(Equal(body), "the same answer by batch name, without waiting")

		for _, q := range []string{"", "?wait=100ms"} {
			status, _, body = a.get("/api/v1/batches/" + held.ID + q)
			Expect(status).To(Equal(http.StatusAccepted), "%s: %s", q, body)
			Expect(body).To(MatchJSON(`{"batch":"` + held.ID + `","pending":true}`))
		}

		status, _, body = a.get("/api/v1/batches/0123456789abcdef0123456789abcdef")
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(body).To(ContainSubstring(`"code":"not_found"`))
		for _, bad := range []string{"/api/v1/batches/nope", "/api/v1/batches/" + first.ID + "?wait=2m", "/api/v1/batches/" + first.ID + "?wait=-1s", "/api/v1/batches/" + first.ID + "?wait=soon"} {
			status, _, body = a.get(bad)
			Expect(status).To(Equal(http.StatusBadRequest), bad)
			Expect(body).To(ContainSubstring(`"code":"invalid"`))
		}
	})

	It("answers a wait in progress with 202 once Done is closed", func() {
		a := newAPIServer(recordresults.HandlerOptions{}, true)
		_, held, _ := a.appliedThenHeld()
		type answer struct {
			status int
			body   string
		}
		got := make(chan answer, 1)
		go func() {
			defer GinkgoRecover()
			status, _, body := a.get("/api/v1/batches/" + held.ID + "?wait=1m")
			got <- answer{status, body}
		}()
		Consistently(got, 200*time.Millisecond).ShouldNot(Receive(), "it waits")
		close(a.done)
		var ans answer
		Eventually(got, 30*time.Second).Should(Receive(&ans), "not the minute the request asked for")
		Expect(ans.status).To(Equal(http.StatusAccepted), ans.body)
		Expect(ans.body).To(MatchJSON(`{"batch":"` + held.ID + `","pending":true}`))
	})

	It("has no batches route without Batches", func() {
		a := newAPIServer(recordresults.HandlerOptions{}, false)
		status, _, _ := a.get("/api/v1/batches/0123456789abcdef0123456789abcdef")
		Expect(status).To(Equal(http.StatusNotFound))
	})
})
