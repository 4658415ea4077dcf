// GET /api/v1/streams/{stream}/rows and /page: the rows of a Query, as
// NDJSON, CSV or Parquet streamed a page at a time, or one page as JSON.

package recordresults

import (
	"mime"
	"net/http"
	"net/url"

	"github.com/fb46ecde/records/recordstore"
)

// ContentTypeNDJSON is the content type of the rows endpoint.
const ContentTypeNDJSON = "application/x-ndjson"

// HeaderNextCursor carries the cursor of the next page of a paged rows
// response (absent on the last page).
const HeaderNextCursor = "Records-Next-Cursor"

// rows answers GET /api/v1/streams/{stream}/rows?<query>&format=&download=&csv_guard=:
// every row of the query (up to limit, and MaxExportRows), or with
// page_size or cursor one page and its next cursor in HeaderNextCursor.
// Errors found before the first row (bad parameters, unknown stream) get a
// JSON error response; a later one aborts the response (see abort).
func (h *handler) rows(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	stream := r.PathValue("stream")
	v := r.URL.Query()
	q, err := ParseQuery(stream, v)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	o, err := parseExportOptions(v)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	f := o.Format
	if m := h.opts.MaxExportRows; m > 0 && (q.Limit == 0 || q.Limit > m) {
		q.Limit = m
	}
	p, err := h.rd.plan(ctx, q)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	w.Header().Set("Content-Type", f.ContentType())
	if v.Get("download") == "1" {
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": stream + f.Extension()}))
	}
	if v.Has("page_size") || v.Has("cursor") {
		h.onePage(w, r, p, q, o)
		return
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	o.Progress = func(int64) { _ = rc.Flush() }
	if _, err := h.rd.export(ctx, w, p, q.Limit, o); err != nil {
		// The status is already sent: say why, and cut the connection so
		// that the client sees a truncated body, not a clean end.
		h.abort("rows", stream, err)
	}
}

// parseExportOptions reads the format and csv_guard parameters of a rows
// request: csv_guard=1 guards the text cells of a CSV export
// (ExportOptions.CSVGuard), 0 or absent does not, another value is
// ErrInvalid.
func parseExportOptions(v url.Values) (ExportOptions, error) {
	f, err := ParseFormat(v.Get("format"))
	if err != nil {
		return ExportOptions{}, err
	}
	o := ExportOptions{Format: f}
	switch g := v.Get("csv_guard"); g {
	case "", "0":
	case "1":
		o.CSVGuard = true
	default:
		return o, recordstore.Invalidf("csv_guard=%s: want 1 or 0", recordstore.Quote(g))
	}
	return o, nil
}

// onePage answers a paged rows request: the page's rows as o says, and
// the next page's cursor in a header.
func (h *handler) onePage(w http.ResponseWriter, r *http.Request, p *plan, q Query, o ExportOptions) {
	recs, more, err := p.fetch(r.Context(), h.b, q.pageSize())
	if err != nil {
		w.Header().Del("Content-Disposition")
		writeError(w, r, h.log, err)
		return
	}
	if more {
		w.Header().Set(HeaderNextCursor, p.cursor())
	}
	w.WriteHeader(http.StatusOK)
	if err := writeRows(w, &p.kind, recs, o); err != nil {
		h.abort("rows", q.Stream, err)
	}
}

// page answers GET /api/v1/streams/{stream}/page?<query>: one Page as JSON.
func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	q, err := ParseQuery(r.PathValue("stream"), r.URL.Query())
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	pg, err := h.rd.Page(r.Context(), q)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, pg)
}

// abort logs why a rows or follow response whose status was sent stops,
// and aborts it (http.ErrAbortHandler): the server closes the connection
// without ending the body (no final chunk), so that a client (curl exits
// non-zero) never takes a cut response for a complete one.
func (h *handler) abort(route, stream string, err error) {
	h.log.Error(route+" response aborted", "stream", stream, "code", recordstore.Code(err), "err", err)
	panic(http.ErrAbortHandler)
}

// kindList is the body of GET /api/v1/kinds.
type kindList struct {
	Kinds []KindInfo `json:"kinds"`
}

// kinds answers GET /api/v1/kinds: every declared kind's KindInfo.
func (h *handler) kinds(w http.ResponseWriter, r *http.Request) {
	ks, err := h.b.Kinds(r.Context())
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	out := kindList{Kinds: []KindInfo{}}
	for _, k := range ks {
		info, err := h.rd.KindInfo(r.Context(), k.Name)
		if err != nil {
			writeError(w, r, h.log, err)
			return
		}
		out.Kinds = append(out.Kinds, info)
	}
	writeJSON(w, http.StatusOK, out)
}

// kind answers GET /api/v1/kinds/{kind}: its KindInfo.
func (h *handler) kind(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("kind")
	if err := recordstore.ValidateKindName(name); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	info, err := h.rd.KindInfo(r.Context(), name)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}
