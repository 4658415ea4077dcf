// GET /api/v1/streams/{stream}/rows: a window of a stream as NDJSON,
// streamed a page at a time.

package recordresults

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"

	"github.com/fb46ecde/records/recordstore"
)

// ContentTypeNDJSON is the content type of the rows endpoint.
const ContentTypeNDJSON = "application/x-ndjson"

// rows answers GET /api/v1/streams/{stream}/rows?after=&limit=. Errors
// found before the first row (bad parameters, unknown stream) get a JSON
// error response; a later one aborts the response (see abort).
func (h *handler) rows(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	stream := r.PathValue("stream")
	after, limit, err := pageParams(r)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if limit > math.MaxInt32 {
		limit = 0 // more rows than a response can carry: the same as no limit
	}
	if _, err := h.b.Meta(ctx, stream); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	page, err := h.b.Scan(ctx, stream, recordstore.ScanOptions{After: after, Limit: pageSize(int(limit), 0)})
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	w.Header().Set("Content-Type", ContentTypeNDJSON)
	w.WriteHeader(http.StatusOK)
	if err := h.streamRows(w, r, stream, page, int(limit)); err != nil {
		// The status is already sent: say why, and cut the connection so
		// that the client sees a truncated body, not a clean end.
		h.abort("rows", stream, err)
	}
}

// abort logs why a rows or follow response whose status was sent stops,
// and aborts it (http.ErrAbortHandler): the server closes the connection
// without ending the body (no final chunk), so that a client (curl exits
// non-zero) never takes a cut response for a complete one.
func (h *handler) abort(route, stream string, err error) {
	h.log.Error(route+" response aborted", "stream", stream, "code", recordstore.Code(err), "err", err)
	panic(http.ErrAbortHandler)
}

// streamRows writes page and the pages after it until limit rows (0: all)
// were written or the stream is exhausted, flushing after each page.
func (h *handler) streamRows(w http.ResponseWriter, r *http.Request, stream string, page []recordstore.Record, limit int) error {
	ctx := r.Context()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	rc := http.NewResponseController(w)
	written := 0
	for {
		for _, rec := range page {
			if err := enc.Encode(rec); err != nil {
				return fmt.Errorf("write row %d: %w", rec.Seq, err)
			}
		}
		written += len(page)
		want := pageSize(limit, written)
		if len(page) == 0 || want == 0 || len(page) < recordstore.TailPage {
			return nil
		}
		_ = rc.Flush()
		after := page[len(page)-1].Seq
		var err error
		page, err = h.b.Scan(ctx, stream, recordstore.ScanOptions{After: after, Limit: want})
		if err != nil {
			return fmt.Errorf("scan stream %s after %d: %w", stream, after, err)
		}
	}
}

// pageSize is how many rows to ask for next: a full page, or what is left
// of limit (0: no limit) after written rows.
func pageSize(limit, written int) int {
	if limit == 0 {
		return recordstore.TailPage
	}
	return min(recordstore.TailPage, limit-written)
}
