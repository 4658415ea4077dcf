// The HTTP read API over one backend: its routes, its options, and the small
// handlers (health, stream list, meta, status).

package recordresults

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/internal/httpx"
	"github.com/fb46ecde/records/recordstore/owner"
)

// HandlerOptions configure Handler. The zero value is usable.
type HandlerOptions struct {
	// Logger receives one line per request, and the failures a client
	// only sees the text of; default: discard.
	Logger *slog.Logger
	// Status, when set, answers GET /api/v1/status: the store's owner as
	// the serving process sees it (Store.Status does that). Without it the
	// route does not exist (404).
	Status func(ctx context.Context) (owner.Status, error)
	// Batches, when set, answers GET /api/v1/batches/{batch}: the outcome
	// of a spooled batch (a *owner.Store is one). Without it the route
	// does not exist (404).
	Batches BatchOutcomes
	// Done, when closed, ends every follow response as if its stream were
	// sealed, and every wait for a batch as if its wait ran out (202, still
	// pending). Close it when the server shuts down, so that followers and
	// waiters do not hold the shutdown up (http.Server.RegisterOnShutdown
	// is the place).
	Done <-chan struct{}
	// Reader runs the queries of the rows, page and kinds routes (its
	// search columns and views are the ones served); default: a new
	// Reader over the backend.
	Reader *Reader
	// MaxExportRows caps the rows one rows or view response carries (0:
	// no cap). An export with more rows is never sent cut short as if
	// whole: it is refused (400, invalid) when that is known before the
	// first byte (the first page shows it, or the stream's row count for a
	// query without filters or seq window; for a view, the output held
	// back before the status), else aborted once the cap is sent with rows
	// left (see Handler), and logged as a warning. A limit up to the cap,
	// or a paged read, is never refused.
	MaxExportRows int
}

// BatchOutcomes tells the outcome of the batches spooled to a store:
// Outcome at once, Await waiting for it; *owner.Store has both.
type BatchOutcomes interface {
	Outcome(ctx context.Context, id string) (recordstore.BatchResult, error)
	Await(ctx context.Context, id string) (recordstore.BatchResult, error)
}

// handler serves the read API of one backend.
type handler struct {
	b    recordstore.Backend
	rd   *Reader
	log  *slog.Logger
	opts HandlerOptions
	mux  *http.ServeMux // the routes, for noRoute to tell a wrong method from a wrong path
}

// Handler returns the HTTP read API over b:
//
//	GET /healthz                                      {"status":"ok"} (503 "corrupt" once damage was met)
//	GET /api/v1/status                                the owner's Status (with HandlerOptions.Status)
//	GET /api/v1/batches/{batch}[?wait=D]              a spooled batch's outcome (with HandlerOptions.Batches)
//	GET /api/v1/streams[?kind=K]                      {"streams":[<meta>...]}
//	GET /api/v1/streams/{stream}                      <meta>
//	GET /api/v1/streams/{stream}/rows?<query>         NDJSON (or format=csv|parquet, csv_guard=1), one row per line
//	GET /api/v1/streams/{stream}/page?<query>         one page as JSON, with the next page's cursor
//	GET /api/v1/kinds[/{kind}]                        kinds with their search and sort columns
//	GET /api/v1/views[/{view}?stream=&after=&to=]     the Reader's views, and a view's rows (format=csv, csv_guard=1; capped as rows)
//	GET /api/v1/streams/{stream}/follow?after=&limit= NDJSON or SSE (ending with event "end"), streamed as rows arrive
//	GET /                                             a small HTML page of streams
//
// <query> is the query model of ParseQuery (docs/reading.md).
// Failures are JSON {"error":{"code":"not_found","message":"..."}} with the
// code and message of recordstore.Code and recordstore.Message and a status
// chosen by the code (HTTPStatus). A backend that cannot read at all — one
// opened detached, whose store's owner runs another catalog version —
// answers every route but /healthz and /api/v1/status with its error (503,
// code catalog_version) before any response starts, follow included. The
// A rows or follow response whose store fails once its 200 is sent
// (a damaged page, say) is aborted (http.ErrAbortHandler): the connection
// is cut without ending the body, so a client sees a truncated response,
// never a clean end. A backend that remembers damage (sqlite.Backend
// Damage) makes /healthz and /api/v1/status answer 503 with it. The
// handler only reads: it never writes
// to the store. It is safe for concurrent requests (as every
// recordstore.Backend is).
func Handler(b recordstore.Backend, opts HandlerOptions) http.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	rd := opts.Reader
	if rd == nil {
		rd = NewReader(b)
	}
	h := &handler{b: b, rd: rd, log: log, opts: opts}
	mux := http.NewServeMux()
	h.mux = mux
	mux.HandleFunc("GET /healthz", h.healthz)
	if opts.Status != nil {
		mux.HandleFunc("GET /api/v1/status", h.status)
	}
	if opts.Batches != nil {
		mux.HandleFunc("GET /api/v1/batches/{batch}", h.reads(h.batch))
	}
	mux.HandleFunc("GET /api/v1/streams", h.reads(h.streams))
	mux.HandleFunc("GET /api/v1/streams/{stream}", h.reads(h.meta))
	mux.HandleFunc("GET /api/v1/streams/{stream}/rows", h.reads(h.rows))
	mux.HandleFunc("GET /api/v1/streams/{stream}/page", h.reads(h.page))
	mux.HandleFunc("GET /api/v1/streams/{stream}/follow", h.reads(h.follow))
	mux.HandleFunc("GET /api/v1/kinds", h.reads(h.kinds))
	mux.HandleFunc("GET /api/v1/kinds/{kind}", h.reads(h.kind))
	mux.HandleFunc("GET /api/v1/views", h.reads(h.views))
	mux.HandleFunc("GET /api/v1/views/{view}", h.reads(h.viewRows))
	mux.HandleFunc("GET /{$}", h.reads(h.index))
	mux.HandleFunc("/", h.noRoute)
	return logRequests(log, mux)
}

// detachable is the optional capability of a backend that may have been
// opened detached (submitonly.Backend.Detached): a non-nil error is why it
// cannot read.
type detachable interface{ Detached() error }

// reads wraps a route that reads the backend: when the backend is detached
// the request is answered with that error at once, so that a route which
// starts its response before reading (follow) fails with a status instead
// of an empty 200.
func (h *handler) reads(route http.HandlerFunc) http.HandlerFunc {
	d, ok := h.b.(detachable)
	if !ok {
		return route
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if err := d.Detached(); err != nil {
			writeError(w, r, h.log, fmt.Errorf("read %s: this process is detached from the store: %w", r.URL.Path, err))
			return
		}
		route(w, r)
	}
}

// damageable is the optional capability of a backend that remembers the
// damage its calls met (sqlite.Backend.Damage): a non-nil error wraps
// sqlite.ErrCorrupt (code corrupt).
type damageable interface{ Damage() error }

// damage returns the damage the backend's calls met, or nil.
func (h *handler) damage() error {
	if d, ok := h.b.(damageable); ok {
		return d.Damage()
	}
	return nil
}

// healthBody is the body of GET /healthz: status "ok", or "corrupt" with
// the damage met as error.
type healthBody struct {
	Status string       `json:"status"`
	Error  *healthError `json:"error,omitempty"`
}

// healthError is the damage in a healthBody, as an error response gives it.
type healthError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// healthz answers {"status":"ok"}, or 503 with status "corrupt" and the
// damage once a read or a write of the store met a damaged file.
func (h *handler) healthz(w http.ResponseWriter, _ *http.Request) {
	dmg := h.damage()
	if dmg == nil {
		writeJSON(w, http.StatusOK, healthBody{Status: "ok"})
		return
	}
	code := recordstore.Code(dmg)
	body := healthBody{Status: code, Error: &healthError{Code: code, Message: recordstore.Message(dmg)}}
	writeJSON(w, http.StatusServiceUnavailable, body)
}

// status answers the owner's status; 503, with the damage as "corrupt",
// once this process met a damaged file.
func (h *handler) status(w http.ResponseWriter, r *http.Request) {
	st, err := h.opts.Status(r.Context())
	if err != nil {
		writeError(w, r, h.log, fmt.Errorf("read owner status: %w", err))
		return
	}
	out := NewStatus(st)
	if dmg := h.damage(); dmg != nil {
		out.Corrupt = recordstore.Message(dmg)
		writeJSON(w, http.StatusServiceUnavailable, out)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// streamList is the body of GET /api/v1/streams.
type streamList struct {
	Streams []recordstore.Meta `json:"streams"`
}

func (h *handler) streams(w http.ResponseWriter, r *http.Request) {
	kind := r.URL.Query().Get("kind")
	if kind != "" {
		if err := recordstore.ValidateKindName(kind); err != nil {
			writeError(w, r, h.log, err)
			return
		}
	}
	metas, err := h.b.Streams(r.Context(), kind)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if metas == nil {
		metas = []recordstore.Meta{}
	}
	writeJSON(w, http.StatusOK, streamList{Streams: metas})
}

func (h *handler) meta(w http.ResponseWriter, r *http.Request) {
	stream := r.PathValue("stream")
	m, err := h.b.Meta(r.Context(), stream)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// noRoute answers what no route takes: 405 (code unsupported, with an
// Allow header) for a path that a GET would find, 404 (not_found)
// otherwise.
func (h *handler) noRoute(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		probe := r.Clone(r.Context())
		probe.Method = http.MethodGet
		if _, pattern := h.mux.Handler(probe); pattern != "/" {
			w.Header().Set("Allow", "GET, HEAD")
			httpx.WriteError(w, http.StatusMethodNotAllowed, recordstore.Code(recordstore.ErrUnsupported),
				fmt.Sprintf("method %s is not allowed on %s; the API only reads: GET or HEAD", r.Method, r.URL.Path))
			return
		}
	}
	writeError(w, r, h.log, recordstore.Errorf(recordstore.ErrNotFound, "no route for %s %s", r.Method, r.URL.Path))
}
