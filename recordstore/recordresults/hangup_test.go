// A client that hangs up in the middle of a rows export is logged at debug
// level, not as an error of the server: before the response starts (its
// first page read) and once its status is sent (a later page).

package recordresults_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
)

// hangupBackend is a real backend whose page read number at waits, once
// it has said so on reached, until the request is canceled (the client
// hung up), then reads with the canceled context.
type hangupBackend struct {
	recordstore.Backend
	at      int32
	calls   atomic.Int32
	reached chan struct{}
}

func (h *hangupBackend) QueryRows(ctx context.Context, stream string, q recordstore.RowQuery) ([]recordstore.Record, recordstore.Meta, error) {
	if h.calls.Add(1) == h.at {
		close(h.reached)
		select {
		case <-ctx.Done():
		case <-time.After(apiWait): // the spec fails on its own waits
		}
	}
	return h.Backend.(recordstore.RowQuerier).QueryRows(ctx, stream, q)
}

var _ = Describe("A client that hangs up during a rows export", func() {
	DescribeTable("is logged at debug level, not as an error",
		func(at int32, want string) {
			a := newAPIServer(recordresults.HandlerOptions{}, false)
			a.appendMsgs("s", numbered(1500)...) // two pages
			b := &hangupBackend{Backend: a.b, at: at, reached: make(chan struct{})}
			log := gbytes.NewBuffer()
			srv := httptest.NewServer(recordresults.Handler(b, recordresults.HandlerOptions{
				Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
			}))
			DeferCleanup(srv.Close)

			ctx, cancel := context.WithCancel(context.Background())
			DeferCleanup(cancel)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/streams/s/rows", nil)
			Expect(err).NotTo(HaveOccurred())
			go func() {
				defer GinkgoRecover()
				if resp, err := apiClient.Do(req); err == nil {
					_ = resp.Body.Close()
				}
			}()
			Eventually(b.reached, apiWait).Should(BeClosed())
			cancel() // the client hangs up: its connection is closed

			Eventually(log, apiWait).Should(gbytes.Say(want))
			Eventually(log, apiWait).Should(gbytes.Say(`level=INFO msg=request method=GET path=/api/v1/streams/s/rows`))
			Expect(string(log.Contents())).NotTo(ContainSubstring("level=ERROR"))
		},
		Entry("before the response starts", int32(1), `level=DEBUG msg="request failed" method=GET path=/api/v1/streams/s/rows client_gone=true err=.*context canceled`),
		Entry("after its status was sent", int32(2), `level=DEBUG msg="rows response aborted" stream=s code=internal client_gone=true err=.*context canceled`),
	)
})
