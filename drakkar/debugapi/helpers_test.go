// Helpers of the debugapi specs: a worker's real recorder in temp folders,
// sealed files made by other real recorders, requests against the handler.

package debugapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	_ "modernc.org/sqlite"

	"github.com/fb46ecde/records/drakkar/debugapi"
	"github.com/fb46ecde/records/drakkar/recorder"
)

var ctx = context.Background()

const cluster = "search hot"

// mergedName is a merge result's name (dbfiles.MergedName's grammar).
const mergedName = "merged-2026-10-13__08_00_00-0123456789abcdef.db"

// recConfig is a recorder of worker in storage/shared that flushes only
// when told.
func recConfig(storage, shared, worker string) recorder.Config {
	cfg := recorder.DefaultConfig()
	cfg.StorageDir, cfg.SharedDir = storage, shared
	cfg.WorkerName, cfg.ClusterName = worker, cluster
	cfg.FlushInterval = time.Hour
	cfg.RotationInterval = 24 * time.Hour
	return cfg
}

// openRecorder opens an owner recorder, closed at cleanup.
func openRecorder(storage, shared, worker string) *recorder.Recorder {
	rec, err := recorder.Open(ctx, recConfig(storage, shared, worker), recorder.Options{})
	Expect(err).NotTo(HaveOccurred())
	Expect(rec.Owner()).To(Equal(storage != ""))
	DeferCleanup(func() { _ = rec.Close(context.Background()) })
	return rec
}

// started is a task_started event of task id at (part, off) listing
// sources in source_offsets.
func started(id string, part, off int64, labels map[string]string, sources ...[2]int64) recorder.Event {
	t := recorder.Task{ID: id, Partition: recorder.Ptr(part), Offset: recorder.Ptr(off), Labels: labels}
	var so any
	if len(sources) > 0 {
		l := make([]map[string]int64, len(sources))
		for i, s := range sources {
			l[i] = map[string]int64{"partition": s[0], "offset": s[1]}
		}
		so = l
	}
	return recorder.TaskStarted(time.Now(), t, recorder.Started{PID: 1, SourceOffsets: so})
}

// sealFile records events with a recorder of worker and closes it: one
// sealed file (with its meta file) in the cluster's history folder.
// It returns the sealed file's path relative to shared.
func sealFile(storage, shared, worker string, events ...recorder.Event) string {
	rec, err := recorder.Open(ctx, recConfig(storage, shared, worker), recorder.Options{})
	Expect(err).NotTo(HaveOccurred())
	name := filepath.Base(rec.LiveFile())
	for _, e := range events {
		rec.Record(e)
	}
	Expect(rec.Flush(ctx)).To(Succeed())
	Expect(rec.Close(ctx)).To(Succeed())
	rel := "history/search_hot/" + name
	Expect(filepath.Join(shared, rel)).To(BeARegularFile())
	return rel
}

// answer is one response: status, headers, body.
type answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value.
func (a answer) JSON() any {
	var v any
	Expect(json.Unmarshal(a.Body, &v)).To(Succeed(), string(a.Body))
	return v
}

// do sends one request to h; target is the raw request target.
func do(h http.Handler, method, target string, body io.Reader, hdr ...string) answer {
	req := httptest.NewRequest(method, "http://worker"+target, body)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, req)
	b, _ := io.ReadAll(rr.Result().Body)
	return answer{Status: rr.Code, Header: rr.Header(), Body: b}
}

// get is do with GET and no body.
func get(h http.Handler, target string, hdr ...string) answer {
	return do(h, http.MethodGet, target, nil, hdr...)
}

// post sends a JSON body.
func post(h http.Handler, target, body string, hdr ...string) answer {
	return do(h, http.MethodPost, target, strings.NewReader(body), append([]string{"Content-Type", "application/json"}, hdr...)...)
}

// newAPI builds the handler, failing the spec on error.
func newAPI(opts debugapi.Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h, err := debugapi.New(opts)
	Expect(err).NotTo(HaveOccurred())
	return h
}

// apiConfig is the API's Config for worker in storage/shared.
func apiConfig(storage, shared, worker string) debugapi.Config {
	c := debugapi.DefaultConfig()
	c.StorageDir, c.SharedDir, c.WorkerName, c.ClusterName = storage, shared, worker, cluster
	return c
}

// tempDirs returns fresh storage and shared folders.
func tempDirs() (string, string) {
	root := GinkgoT().TempDir()
	storage, shared := filepath.Join(root, "storage"), filepath.Join(root, "shared")
	Expect(os.MkdirAll(shared, 0o700)).To(Succeed())
	return storage, shared
}
