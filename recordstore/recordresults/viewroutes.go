// GET /api/v1/views and /api/v1/views/{view}: the registered views, and a
// view's rows over a stream window as NDJSON or CSV.

package recordresults

import (
	"bytes"
	"net/http"

	"github.com/fb46ecde/records/recordstore"
)

// viewList is the body of GET /api/v1/views.
type viewList struct {
	Views []View `json:"views"`
}

// views answers GET /api/v1/views.
func (h *handler) views(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, viewList{Views: h.rd.Views()})
}

// viewRows answers GET /api/v1/views/{view}?stream=&after=&to=&limit=&format=&download=1&csv_guard=1.
// csv_guard is the rows route's (parseExportOptions), and so is the export
// cap: a run with more rows than MaxExportRows is never sent cut short as
// if whole. The first viewHoldBytes of output are held back before the
// status is sent, so that what fails while they are written — a bad
// parameter, a view that fails, a run that passes the cap — gets a JSON
// error (400 invalid for the cap) and no row; a failure later, the cap
// included, aborts the response (see abort).
func (h *handler) viewRows(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("view")
	v := r.URL.Query()
	q := ViewQuery{Stream: v.Get("stream")}
	var err error
	if q.After, err = int64Param(v, "after"); err == nil {
		if q.To, err = int64Param(v, "to"); err == nil {
			var limit int64
			limit, err = int64Param(v, "limit")
			q.Limit = int(min(limit, 1<<31-1))
		}
	}
	var o ExportOptions
	if err == nil {
		o, err = parseExportOptions(v)
	}
	if err == nil {
		err = h.rd.checkViewRun(r.Context(), name, q)
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if o.Format == FormatParquet {
		_, err := h.rd.ExportViewWith(r.Context(), w, name, q, o) // refused before writing
		writeError(w, r, h.log, err)
		return
	}
	var over func(n int64) error
	if maxRows := h.opts.MaxExportRows; maxRows > 0 && (q.Limit == 0 || q.Limit > maxRows) {
		q.Limit = maxRows + 1 // one more than the cap tells a run over it
		over = func(n int64) error {
			if n >= int64(maxRows) {
				return viewCapError(name, q.Stream, maxRows)
			}
			return nil
		}
	}
	out := &heldResponse{w: w, start: func() {
		setExportHeaders(w, name, o.Format, v)
		w.WriteHeader(http.StatusOK)
	}}
	_, err = h.rd.exportView(r.Context(), out, name, q, o, over)
	if err == nil {
		err = out.send()
	}
	switch {
	case err == nil:
	case !out.sent:
		writeError(w, r, h.log, err)
	default:
		h.abort(r, "view", q.Stream, err)
	}
}

// viewCapError is the error of a view run over stream with more rows than
// the cap maxRows (code invalid, errExportCap).
func viewCapError(view, stream string, maxRows int) error {
	return recordstore.Errorf(errExportCap, "view %s over stream %s: the export has more than %d rows, the most one response carries (MaxExportRows; serve --max-export-rows): ask limit=%d or less, or narrow the window (after, to)", view, stream, maxRows, maxRows)
}

// viewHoldBytes is how much of a view's output is held back before the
// status is sent (see viewRows).
const viewHoldBytes = 64 << 10

// heldResponse is the body of a view response: what is written is held
// until viewHoldBytes are, then start sends the status and the held bytes
// go out, and so does everything written after.
type heldResponse struct {
	w     http.ResponseWriter
	start func() // sets the headers and sends the status
	held  bytes.Buffer
	sent  bool // start was called
}

// Write holds p, or writes it once the response has started.
func (h *heldResponse) Write(p []byte) (int, error) {
	if h.sent {
		return h.w.Write(p)
	}
	h.held.Write(p)
	if h.held.Len() >= viewHoldBytes {
		if err := h.send(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// send starts the response, when not yet, and writes what is held.
func (h *heldResponse) send() error {
	if h.sent {
		return nil
	}
	h.sent = true
	h.start()
	_, err := h.w.Write(h.held.Bytes())
	h.held = bytes.Buffer{}
	return err
}
