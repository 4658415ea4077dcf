// Follow with the query model: Server-Sent Events with Last-Event-ID,
// ending at `to`; filters; bad parameters; Reader.Follow in Go.

package recordresults_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// sseEvent is one Server-Sent Event: its id, data and event name ("" for
// a row).
type sseEvent struct{ id, data, event string }

// sse starts an SSE follow of path with lastID as Last-Event-ID ("" for
// none) and returns its events, closed when the response ends.
func (a *apiServer) sse(path, lastID string) <-chan sseEvent {
	ctx, cancel := context.WithCancel(context.Background())
	DeferCleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.srv.URL+path, nil)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, resp.StatusCode).To(Equal(http.StatusOK))
	ExpectWithOffset(1, resp.Header.Get("Content-Type")).To(Equal(recordresults.ContentTypeSSE))
	events := make(chan sseEvent, 100)
	go func() {
		defer GinkgoRecover()
		defer close(events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case line == "":
				events <- ev
				ev = sseEvent{}
			}
		}
	}()
	return events
}

// endEvent is the end event of an SSE follow ended by reason after seq.
func endEvent(reason string, seq int) sseEvent {
	return sseEvent{id: fmt.Sprint(seq), data: fmt.Sprintf(`{"reason":%q,"seq":%d}`, reason, seq), event: "end"}
}

// sseStatus makes an SSE follow request of path with lastID as
// Last-Event-ID ("" for none) and returns its status, closing the
// response at once.
func (a *apiServer) sseStatus(path, lastID string) int {
	req, err := http.NewRequest(http.MethodGet, a.srv.URL+path, nil)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := apiClient.Do(req)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, resp.Body.Close()).To(Succeed())
	return resp.StatusCode
}

var _ = Describe("Follow with query parameters", func() {
	var a *apiServer

	BeforeEach(func() {
		a = newAPIServer(recordresults.HandlerOptions{}, false)
		a.appendMsgs("e1", "a", "b")
	})

	It("sends Server-Sent Events with the seq as id, and ends at to", func() {
		events := a.sse("/api/v1/streams/e1/follow?to=4", "")
		Eventually(events, apiWait).Should(Receive(Equal(sseEvent{"1", row(1, "a"), ""})))
		Eventually(events, apiWait).Should(Receive(Equal(sseEvent{"2", row(2, "b"), ""})))
		a.appendMsgs("e1", "c", "d", "e")
		Eventually(events, apiWait).Should(Receive(Equal(sseEvent{"3", row(3, "c"), ""})))
		Eventually(events, apiWait).Should(Receive(Equal(sseEvent{"4", row(4, "d"), ""})))
		Eventually(events, apiWait).Should(Receive(Equal(endEvent("to", 4))))
		Eventually(events, apiWait).Should(BeClosed(), "the follow ends once it sent seq 4")
	})

	It("resumes after Last-Event-ID, which wins over after", func() {
		a.appendMsgs("e1", "c")
		events := a.sse("/api/v1/streams/e1/follow?after=0&format=sse", "2")
		Eventually(events, apiWait).Should(Receive(Equal(sseEvent{"3", row(3, "c"), ""})))
		_, err := a.b.Seal(context.Background(), "e1")
		Expect(err).NotTo(HaveOccurred())
		Eventually(events, apiWait).Should(Receive(Equal(endEvent("sealed", 3))))
		Eventually(events, apiWait).Should(BeClosed(), "the follow ends at seal")
	})

	It("answers a resume at to with 204, so that an EventSource stops", func() {
		Expect(a.sseStatus("/api/v1/streams/e1/follow?to=2", "2")).To(Equal(http.StatusNoContent))
	})

	It("ends a follow of a sealed stream with an end event whose id a reconnect resumes after, and answers that reconnect 204", func() {
		_, err := a.b.Seal(context.Background(), "e1")
		Expect(err).NotTo(HaveOccurred())
		events := a.sse("/api/v1/streams/e1/follow?q=a", "")
		Eventually(events, apiWait).Should(Receive(Equal(sseEvent{"1", row(1, "a"), ""})))
		Eventually(events, apiWait).Should(Receive(Equal(endEvent("sealed", 2))), "the id is the last seq read, not the last sent")
		Eventually(events, apiWait).Should(BeClosed())

		Expect(a.sseStatus("/api/v1/streams/e1/follow?q=a", "2")).To(Equal(http.StatusNoContent))
		Expect(a.sseStatus("/api/v1/streams/e1/follow?after=2", "")).To(Equal(http.StatusNoContent))
		Expect(a.sseStatus("/api/v1/streams/e1/follow", "1")).To(Equal(http.StatusOK), "row 2 is still to send")
	})

	It("ends with an end event when the stream is deleted, or after limit rows", func() {
		events := a.sse("/api/v1/streams/e1/follow?limit=1", "")
		Eventually(events, apiWait).Should(Receive(Equal(sseEvent{"1", row(1, "a"), ""})))
		Eventually(events, apiWait).Should(Receive(Equal(endEvent("limit", 1))))
		Eventually(events, apiWait).Should(BeClosed())

		events = a.sse("/api/v1/streams/e1/follow", "2")
		Expect(a.b.Delete(context.Background(), "e1")).To(Succeed())
		Eventually(events, apiWait).Should(Receive(Equal(endEvent("gone", 2))))
		Eventually(events, apiWait).Should(BeClosed())
	})

	It("sends no end event on NDJSON: the body just ends", func() {
		_, err := a.b.Seal(context.Background(), "e1")
		Expect(err).NotTo(HaveOccurred())
		status, ctype, body := a.get("/api/v1/streams/e1/follow")
		Expect(status).To(Equal(http.StatusOK))
		Expect(ctype).To(Equal(recordresults.ContentTypeNDJSON))
		Expect(body).To(Equal(row(1, "a") + "\n" + row(2, "b") + "\n"))
	})

	It("sends only the rows the filters select, as NDJSON", func() {
		lines, _ := a.follow("/api/v1/streams/e1/follow?where=" + url.QueryEscape("msg~B") + "&q=b")
		Eventually(lines, apiWait).Should(Receive(Equal(row(2, "b"))))
		a.appendMsgs("e1", "abc", "xyz", "bb")
		Eventually(lines, apiWait).Should(Receive(Equal(row(3, "abc"))))
		Eventually(lines, apiWait).Should(Receive(Equal(row(5, "bb"))))
		_, err := a.b.Seal(context.Background(), "e1")
		Expect(err).NotTo(HaveOccurred())
		Eventually(lines, apiWait).Should(BeClosed())
	})

	DescribeTable("refuses bad parameters with 400 before following",
		func(params string, header string) {
			req, err := http.NewRequest(http.MethodGet, a.srv.URL+"/api/v1/streams/e1/follow?"+params, nil)
			Expect(err).NotTo(HaveOccurred())
			if header != "" {
				req.Header.Set("Accept", "text/event-stream")
				req.Header.Set("Last-Event-ID", header)
			}
			resp, err := apiClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusBadRequest))
		},
		Entry("a filter on an unknown column of the stream's kind", "where=nope=1", ""),
		Entry("a sort", "sort=-_seq", ""),
		Entry("a cursor", "cursor=x", ""),
		Entry("an unknown format", "format=csv", ""),
		Entry("a Last-Event-ID that is not a seq", "", "abc"),
	)

	It("follows in Go with Reader.Follow, up to the limit", func() {
		rd := recordresults.NewReader(a.b)
		a.appendMsgs("e1", "z1")
		var got []int64
		err := rd.Follow(context.Background(), recordresults.Query{Stream: "e1", Limit: 3, Text: "Z"}, func(rec recordstore.Record) error {
			got = append(got, rec.Seq)
			if len(got) == 1 {
				a.appendMsgs("e1", "q", "z2", "z3", "z4")
			}
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal([]int64{3, 5, 6}))
	})
})
