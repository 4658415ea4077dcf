// The console's handler: its options, its routes, the embedded files and
// the security headers every response carries.

package console

import (
	"context"
	"embed"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
)

// Prefix is the path the console is served under; Handler answers only
// paths below it.
const Prefix = "/console/"

// CSP is the Content-Security-Policy of every console response: the
// console's own scripts, styles and images (the API included) and nothing
// else; no inline script or style, no plugin, no framing, forms only to
// the console.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// writeHeader is the request header the console's page sends with every
// write; a cross-site form cannot set it (a fetch from another site that
// sets it needs a CORS preflight, which the console never grants).
const writeHeader = "X-Records-Console"

//go:embed assets
var assets embed.FS

// Options configure Handler. Every field may be left zero: the pages whose
// source is missing say so.
type Options struct {
	// Backend answers the kind's schema (Kind).
	Backend recordstore.Backend
	// Status reads the owner's status (owner.Store.Status).
	Status func(ctx context.Context) (owner.Status, error)
	// Spool is the store's spool folder (owner.Store.Spool); nil for a
	// store opened read-only.
	Spool *spool.Dir
	// AllowWrites lets the console retry failed batches (query serve
	// --allow-writes). Off by default: every write answers 403.
	AllowWrites bool
	// Logger receives the failures a client only sees the text of;
	// default: discard.
	Logger *slog.Logger
}

// handler serves the console.
type handler struct {
	opts Options
	log  *slog.Logger
}

// Handler returns the console, to be mounted at Prefix:
//
//	GET  /console/                                    the page (index.html)
//	GET  /console/decode.js, /console/app.js          its scripts: the decoders, the page
//	GET  /console/app.css                             its style
//	GET  /console/api/config                          {"allowWrites":bool}
//	GET  /console/api/owner                           the owner: phase, epoch, heartbeat age, stale, backlog, failed
//	GET  /console/api/kinds/{kind}                    a kind's declaration (its schema)
//	GET  /console/api/spool                           backlog and failed batches, each with its error.json
//	POST /console/api/spool/failed/{batch}/retry      move a failed batch back to incoming/ (AllowWrites only)
//
// The rows, streams and follow come from the read API (recordresults.Handler)
// the page calls at /api/v1/. Failures are JSON {"error":{"code","message"}}
// as the read API answers them.
func Handler(opts Options) http.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &handler{opts: opts, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /console/{$}", h.file("assets/index.html", "text/html; charset=utf-8"))
	mux.HandleFunc("GET /console/decode.js", h.file("assets/decode.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /console/app.js", h.file("assets/app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /console/app.css", h.file("assets/app.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /console/api/config", h.config)
	mux.HandleFunc("GET /console/api/owner", h.owner)
	mux.HandleFunc("GET /console/api/kinds/{kind}", h.kind)
	mux.HandleFunc("GET /console/api/spool", h.spool)
	mux.HandleFunc("POST /console/api/spool/failed/{batch}/retry", h.retry)
	mux.HandleFunc("/console/", h.noRoute)
	return secure(mux)
}

// secure sets the security headers of every console response.
func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", CSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// file serves one embedded file with its content type.
func (h *handler) file(name, ctype string) http.HandlerFunc {
	data, err := assets.ReadFile(name)
	if err != nil {
		panic("console: embedded file missing: " + name) // a build without its assets cannot run
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ctype)
		_, _ = w.Write(data) // the client may be gone; nothing to do then
	}
}

// noRoute answers a path under the prefix that no route takes.
func (h *handler) noRoute(w http.ResponseWriter, r *http.Request) {
	h.fail(w, r, recordstore.Errorf(recordstore.ErrNotFound, "no console route for %s %s", r.Method, r.URL.Path))
}

// errorBody is the JSON shape of every error response (as the read API's).
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// fail answers err with its code and a status chosen by it: 403 for the
// refused writes, 400 invalid, 404 not_found, 409 a conflict, 500 else
// (logged).
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var body errorBody
	body.Error.Code = recordstore.Code(err)
	body.Error.Message = recordstore.Message(err)
	status := http.StatusInternalServerError
	switch {
	case isForbidden(err):
		status = http.StatusForbidden
	case body.Error.Code == "invalid" || body.Error.Code == "unsupported":
		status = http.StatusBadRequest
	case body.Error.Code == "not_found":
		status = http.StatusNotFound
	case body.Error.Code == "schema_conflict" || body.Error.Code == "sealed":
		status = http.StatusConflict
	}
	if status == http.StatusInternalServerError {
		h.log.Error("console request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, status, body)
}

// writeJSON answers with v as a JSON document.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client may be gone; nothing to do then
}
