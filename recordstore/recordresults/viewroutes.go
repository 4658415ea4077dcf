// GET /api/v1/views and /api/v1/views/{view}: the registered views, and a
// view's rows over a stream window as NDJSON or CSV.

package recordresults

import (
	"mime"
	"net/http"
)

// viewList is the body of GET /api/v1/views.
type viewList struct {
	Views []View `json:"views"`
}

// views answers GET /api/v1/views.
func (h *handler) views(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, viewList{Views: h.rd.Views()})
}

// viewRows answers GET /api/v1/views/{view}?stream=&after=&to=&limit=&format=&download=1.
// What fails before the first row gets a JSON error; a failure later
// aborts the response (see abort).
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
	var f Format
	if err == nil {
		f, err = ParseFormat(v.Get("format"))
	}
	if err == nil {
		err = h.rd.checkViewRun(r.Context(), name, q)
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if f == FormatParquet {
		_, err := h.rd.ExportView(r.Context(), w, name, q, f) // refused before writing
		writeError(w, r, h.log, err)
		return
	}
	w.Header().Set("Content-Type", f.ContentType())
	if v.Get("download") == "1" {
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name + f.Extension()}))
	}
	w.WriteHeader(http.StatusOK)
	if _, err := h.rd.ExportView(r.Context(), w, name, q, f); err != nil {
		h.abort(r, "view", q.Stream, err)
	}
}
