// A damaged page in the live file met by a rows or follow response once its
// 200 is sent: the response is aborted (the client sees a truncated body),
// and /healthz and /api/v1/status report the damage.

package recordresults_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/sqlite"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
)

// damagedRows is how many rows the damaged store's stream s has; the row
// whose page is damaged is past the first two pages of a response.
const (
	damagedRows = 3002
	damagedRow  = 2500
)

// damagedMsg is the msg of row seq: unique in the file, so that its page
// can be found by its bytes.
func damagedMsg(seq int) string {
	return fmt.Sprintf("row-%05d-%s", seq, strings.Repeat("x", 80))
}

// newDamagedServer makes a store whose stream s has damagedRows rows,
// damages the page holding row damagedRow, then opens the store with Open
// and serves the API over it with the store's own status.
func newDamagedServer() *apiServer {
	ctx := context.Background()
	path := filepath.Join(GinkgoT().TempDir(), "records.sqlite")
	st, err := records.Open(ctx, path, records.Options{SweepInterval: -1})
	Expect(err).NotTo(HaveOccurred())
	_, err = st.Backend().DeclareKind(ctx, apiEvents)
	Expect(err).NotTo(HaveOccurred())
	rows := make([]recordstore.Row, damagedRows)
	for i := range rows {
		rows[i] = recordstore.Row{"msg": damagedMsg(i + 1)}
	}
	_, err = st.Backend().Append(ctx, "s", "events", rows)
	Expect(err).NotTo(HaveOccurred())
	Expect(st.Close()).To(Succeed())
	damagePageOf(sqlite.LivePath(path), damagedMsg(damagedRow))

	st, err = records.Open(ctx, path, records.Options{SweepInterval: -1})
	Expect(err).NotTo(HaveOccurred(), "opening reads the catalog, not the rows")
	DeferCleanup(st.Close)
	a := &apiServer{st: st, b: st.Backend(), log: gbytes.NewBuffer(), done: make(chan struct{})}
	a.srv = httptest.NewServer(recordresults.Handler(a.b, recordresults.HandlerOptions{
		Logger: slog.New(slog.NewTextHandler(a.log, nil)), Done: a.done, Status: st.Status, Batches: st,
	}))
	DeferCleanup(a.srv.Close)
	return a
}

// damagePageOf moves every page of the live file out of the WAL, then
// overwrites with 0xff the page holding marker.
func damagePageOf(live, marker string) {
	db, err := sql.Open("sqlite", live)
	Expect(err).NotTo(HaveOccurred())
	var busy, frames, moved int64
	Expect(db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &moved)).To(Succeed())
	Expect(busy).To(BeZero())
	Expect(db.Close()).To(Succeed())
	data, err := os.ReadFile(live)
	Expect(err).NotTo(HaveOccurred())
	at := bytes.Index(data, []byte(marker))
	Expect(at).To(BeNumerically(">", 0), "the row's bytes are in the live file")
	pageSize := int(binary.BigEndian.Uint16(data[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	f, err := os.OpenFile(live, os.O_WRONLY, 0)
	Expect(err).NotTo(HaveOccurred())
	_, err = f.WriteAt(bytes.Repeat([]byte{0xff}, pageSize), int64(at/pageSize*pageSize))
	Expect(err).NotTo(HaveOccurred())
	Expect(f.Close()).To(Succeed())
}

// readCut fetches path and returns the status, the complete lines of the
// body and the error that ended reading it.
func (a *apiServer) readCut(path string) (int, []string, error) {
	resp, err := apiClient.Get(a.srv.URL + path)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	var lines []string
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" {
				err = nil
			}
			return resp.StatusCode, lines, err
		}
		lines = append(lines, line)
	}
}

var _ = Describe("Handler over a damaged live file", func() {
	var a *apiServer

	BeforeEach(func() { a = newDamagedServer() })

	DescribeTable("aborts a response that meets the damage after its status, so that the client sees it truncated",
		func(path string) {
			status, lines, err := a.readCut(path)
			Expect(status).To(Equal(http.StatusOK))
			Expect(err).To(MatchError(io.ErrUnexpectedEOF), "the body does not end cleanly")
			Expect(len(lines)).To(BeNumerically("<", damagedRow))
			Expect(a.log).To(gbytes.Say(`level=ERROR msg="\w+ response aborted" stream=s code=corrupt`))
			Expect(a.log).To(gbytes.Say(`msg=request method=GET path=/api/v1/streams/s/\w+ status=200 duration=\S+ aborted=true`))
		},
		Entry("rows", "/api/v1/streams/s/rows"),
		Entry("follow", "/api/v1/streams/s/follow"),
	)

	It("reports the damage on /healthz and /api/v1/status with 503, once a read met it", func() {
		status, _, body := a.get("/healthz")
		Expect(status).To(Equal(http.StatusOK), "no call has met the damage yet")
		Expect(body).To(MatchJSON(`{"status":"ok"}`))

		_, _, _ = a.readCut("/api/v1/streams/s/rows")

		status, ctype, body := a.get("/healthz")
		Expect(status).To(Equal(http.StatusServiceUnavailable))
		Expect(ctype).To(Equal("application/json"))
		var health struct {
			Status string
			Error  struct{ Code, Message string }
		}
		Expect(json.Unmarshal([]byte(body), &health)).To(Succeed())
		Expect(health.Status).To(Equal("corrupt"))
		Expect(health.Error.Code).To(Equal("corrupt"))
		Expect(health.Error.Message).To(ContainSubstring(a.st.Backend().LivePath()))

		status, _, body = a.get("/api/v1/status")
		Expect(status).To(Equal(http.StatusServiceUnavailable))
		var st map[string]any
		Expect(json.Unmarshal([]byte(body), &st)).To(Succeed())
		Expect(st).To(HaveKeyWithValue("phase", "ready"))
		Expect(st["corrupt"]).To(ContainSubstring(a.st.Backend().LivePath()))
	})
})
