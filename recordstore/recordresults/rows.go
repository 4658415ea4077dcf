// GET /api/v1/streams/{stream}/rows and /page: the rows of a Query, as
// NDJSON, CSV or Parquet streamed a page at a time, or one page as JSON.

package recordresults

import (
	"context"
	"errors"
	"log/slog"
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
// every row of the query (up to limit), or with page_size or cursor one
// page and its next cursor in HeaderNextCursor. Errors found before the
// first row is sent (bad parameters, unknown stream, a failure reading the
// first page) get a JSON error response; a later one aborts the response
// (see abort). An export with more rows than MaxExportRows is never sent
// cut short as if whole: it is refused (400, invalid) when that is known
// before the first byte — the first page shows it, or the stream's row
// count for a query without filters or seq window — and otherwise aborted
// once the cap is reached with rows left, so that the client sees a broken
// transfer.
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
	maxRows := h.opts.MaxExportRows
	capped := maxRows > 0 && (q.Limit == 0 || q.Limit > maxRows)
	if capped {
		q.Limit = maxRows
	}
	p, err := h.rd.plan(ctx, q)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if v.Has("page_size") || v.Has("cursor") {
		setExportHeaders(w, stream, o.Format, v)
		h.onePage(w, r, p, q, o)
		return
	}
	if capped {
		if err := h.checkExportCap(ctx, q, maxRows); err != nil {
			writeError(w, r, h.log, err)
			return
		}
	}
	g := &pager{b: h.b, p: p, limit: q.Limit}
	first, err := g.next(ctx)
	if err == nil && capped && g.cut() {
		err = exportCapError(stream, maxRows)
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if first == nil {
		first = []recordstore.Record{} // the read is empty: no second fetch
	}
	setExportHeaders(w, stream, o.Format, v)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	o.Progress = func(int64) { _ = rc.Flush() }
	var cut func() error
	if capped {
		cut = func() error { return exportCapError(stream, maxRows) }
	}
	if _, err := writeExport(ctx, w, g, first, o, cut); err != nil {
		// The status is already sent: say why, and cut the connection so
		// that the client sees a truncated body, not a clean end.
		h.abort(r, "rows", stream, err)
	}
}

// setExportHeaders sets the content type of format f, and with download=1
// the Content-Disposition of a file named after name (a stream, a view).
func setExportHeaders(w http.ResponseWriter, name string, f Format, v url.Values) {
	w.Header().Set("Content-Type", f.ContentType())
	if v.Get("download") == "1" {
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name + f.Extension()}))
	}
}

// checkExportCap refuses an export capped at maxRows rows that is known from
// the stream's row count to have more: a query without filters, time
// window or seq window reads every row of the stream.
func (h *handler) checkExportCap(ctx context.Context, q Query, maxRows int) error {
	if q.After != 0 || q.To != 0 || q.Text != "" || len(q.Where) > 0 || !q.From.IsZero() || !q.Until.IsZero() {
		return nil
	}
	m, err := h.b.Meta(ctx, q.Stream)
	if err != nil {
		return err
	}
	if m.Total > int64(maxRows) {
		return exportCapError(q.Stream, maxRows)
	}
	return nil
}

// exportCapError is the error of an export of stream with more rows than
// the cap maxRows (code invalid).
func exportCapError(stream string, maxRows int) error {
	return recordstore.Errorf(errExportCap, "stream %s: the export has more than %d rows, the most one response carries (MaxExportRows; serve --max-export-rows): ask limit=%d or less, narrow the query, or read it in pages (page_size, cursor)", stream, maxRows, maxRows)
}

// parseExportOptions reads the format and csv_guard parameters of a rows
// or view request: csv_guard=1 guards the text cells of a CSV export
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
		h.abort(r, "rows", q.Stream, err)
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

// errExportCap is wrapped by the error of an export with more rows than
// HandlerOptions.MaxExportRows (code invalid).
var errExportCap = &recordstore.Error{Code: "invalid"}

// abort logs why a rows, view or follow response whose status was sent
// stops, and aborts it (http.ErrAbortHandler): the server closes the
// connection without ending the body (no final chunk), so that a client
// (curl exits non-zero) never takes a cut response for a complete one. A
// client that hung up (clientGone: `curl … | head -1`) is logged at debug
// level, an export cut at the cap as a warning (the client asked too
// much), anything else — our faults — as an error.
func (h *handler) abort(r *http.Request, route, stream string, err error) {
	level := slog.LevelError
	switch {
	case clientGone(r, err):
		level = slog.LevelDebug
	case errors.Is(err, errExportCap):
		level = slog.LevelWarn
	}
	h.log.Log(r.Context(), level, route+" response aborted", "stream", stream, "code", recordstore.Code(err), "client_gone", level == slog.LevelDebug, "err", err)
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
