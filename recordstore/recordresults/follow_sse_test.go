// Follow with the query model: Server-Sent Events with Last-Event-ID,
// ending at `to`; filters; bad parameters; Reader.Follow in Go.

package recordresults_test

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// sseEvent is one Server-Sent Event.
type sseEvent struct{ id, data string }

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
			case line == "":
				events <- ev
				ev = sseEvent{}
			}
		}
	}()
	return events
}

var _ = Describe("Follow with query parameters", func() {
	var a *apiServer

	BeforeEach(func() {
		a = newAPIServer(recordresults.HandlerOptions{}, false)
		a.appendMsgs("e1", "a", "b")
	})

	It("sends Server-Sent Events with the seq as id, and ends at to", func() {
		events := a.sse("/api/v1/streams/e1/follow?to=4", "")
		Eventually(events, apiWait).Should(Receive(Equal(sseEvent{"1", row(1, "a")})))
		Eventually(events, apiWait).Should(Receive(Equal(sseEvent{"2", row(2, "b")})))
		a.appendMsgs("e1", "c", "d", "e")
		Eventually(events, apiWait).Should(Receive(Equal(sseEvent{"3", row(3, "c")})))
		Eventually(events, apiWait).Should(Receive(Equal(sseEvent{"4", row(4, "d")})))
		Eventually(events, apiWait).Should(BeClosed(), "the follow ends once it sent seq 4")
	})

	It("resumes after Last-Event-ID, which wins over after", func() {
		a.appendMsgs("e1", "c")
		events := a.sse("/api/v1/streams/e1/follow?after=0&format=sse", "2")
		Eventually(events, apiWait).Should(Receive(Equal(sseEvent{"3", row(3, "c")})))
		_, err := a.b.Seal(context.Background(), "e1")
		Expect(err).NotTo(HaveOccurred())
		Eventually(events, apiWait).Should(BeClosed(), "the follow ends at seal")
	})

	It("answers a resume past to with no event", func() {
		events := a.sse("/api/v1/streams/e1/follow?to=2", "2")
		Eventually(events, apiWait).Should(BeClosed())
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
