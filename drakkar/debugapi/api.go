package debugapi

import (
	"crypto/subtle"
	"encoding/json"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/recordstore"
)

// ErrOptions is returned by New for unusable Options.
var ErrOptions = recordstore.Invalidf("debugapi options")

// The texts of the API's errors.
const (
	TextUnauthorized  = "Invalid or missing auth token"
	TextCacheDisabled = "Cache is disabled"
	TextNotFound      = "Not Found"
	TextInvalidJSON   = "Invalid JSON body"
	TextSelectTwo     = "Select at least 2 databases"
	TextMergeDisabled = "Merge is disabled on this worker (ui.merge_enabled is false)"
	TextNoLiveFile    = "No live database file"
	TextSnapshotFail  = "Snapshot failed: "
)

// server is the state the routes share.
type server struct {
	opts  Options
	log   *slog.Logger
	now   func() time.Time
	stats *ownStats
	metas *metaCache
	// openapi is the JSON form of the embedded OpenAPI document.
	openapi []byte
}

// Route is one route New serves, as its OpenAPI document lists it.
type Route struct {
	// Method is the HTTP method ("GET", "POST").
	Method string
	// Path is the path template with OpenAPI parameters ("{key}"); a
	// parameter that is the last segment takes the rest of the path,
	// slashes included.
	Path string
	// Public routes need no token (probes, the peer cache exchange).
	Public bool
	// AnyMethod routes are mounted for every method (the handler answers
	// the others itself).
	AnyMethod bool
	// Handler serves the route.
	Handler http.Handler
}

// pattern is rt's http.ServeMux pattern: a last-segment parameter becomes
// a {name...} wildcard.
func (rt Route) pattern() string {
	p := rt.Path
	if strings.HasSuffix(p, "}") {
		p = p[:len(p)-1] + "...}"
	}
	if rt.AnyMethod {
		return p
	}
	return rt.Method + " " + p
}

// routes is every route New serves, in the order of the route table of
// docs/drakkar.md.
func (s *server) routes() []Route {
	f := func(method, path string, h http.HandlerFunc) Route {
		return Route{Method: method, Path: path, Handler: h}
	}
	return []Route{
		{Method: "GET", Path: "/healthz", Public: true, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		})},
		{Method: "GET", Path: "/readyz", Public: true, Handler: http.HandlerFunc(s.readyz)},
		f("GET", "/metrics", s.metrics),
		f("GET", "/api/v1/identity", s.identity),
		f("GET", "/api/v1/openapi.json", s.openAPI),
		f("GET", "/api/v1/workers", s.workers),
		f("GET", "/api/v1/events", s.events),
		f("GET", "/api/v1/debug/databases", s.databases),
		f("GET", "/api/v1/debug/download/{path}", s.download),
		f("GET", "/api/v1/debug/download-live", s.downloadLive),
		f("POST", "/api/v1/debug/merge", s.merge),
		f("GET", "/api/v1/debug/archives", s.archives),
		f("GET", "/api/v1/debug/archives/{name}", s.archive),
		f("GET", "/api/v1/debug/trace", s.trace),
		f("GET", "/api/v1/debug/trace-by-label", s.traceByLabel),
		f("GET", "/api/v1/debug/label-keys", s.labelKeys),
		f("GET", "/api/v1/debug/metrics", s.metricsJSON),
		f("GET", "/api/v1/debug/cache/entries", s.cacheEntries),
		f("GET", "/api/v1/debug/cache/entry/{key}", s.cacheEntry),
		f("GET", "/api/v1/debug/cache/stats", s.cacheStats),
		f("GET", StatusPath, s.status),
		{Method: "GET", Path: cache.ChangesPath, Public: true, AnyMethod: true, Handler: s.exchange()},
	}
}

// Routes returns the routes of h, a handler New returned, in the form its
// OpenAPI document lists them; nil for another handler.
func Routes(h http.Handler) []Route {
	a, ok := h.(*apiHandler)
	if !ok {
		return nil
	}
	return a.s.routes()
}

// New returns the worker's HTTP API: every route of the package doc, auth
// applied, and the cache exchange route (cache.ExchangeHandler) mounted
// without auth. It opens nothing; the routes read the recorder, the cache,
// the registry and the folders of opts.Config at each request.
func New(opts Options) (http.Handler, error) {
	c := opts.Config
	if c.TraceHistoryMaxFiles < 0 || c.TraceHistoryMaxSeconds < 0 {
		return nil, recordstore.Errorf(ErrOptions, "negative trace history limit")
	}
	if c.TraceHistoryMaxFiles == 0 {
		opts.Config.TraceHistoryMaxFiles = DefaultTraceHistoryMaxFiles
	}
	if c.TraceHistoryMaxSeconds == 0 {
		opts.Config.TraceHistoryMaxSeconds = DefaultTraceHistoryMaxSeconds
	}
	s := &server{opts: opts, log: opts.Logger, now: opts.Now, stats: newOwnStats(), metas: newMetaCache()}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	doc, err := openAPIJSON()
	if err != nil {
		return nil, recordstore.Errorf(ErrOptions, "%v", err)
	}
	s.openapi = doc
	authed := http.NewServeMux()
	root := http.NewServeMux()
	for _, rt := range s.routes() {
		switch {
		case rt.Public:
			root.Handle(rt.pattern(), rt.Handler)
		default:
			authed.Handle(rt.pattern(), rt.Handler)
		}
	}
	authed.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeDetail(w, http.StatusNotFound, TextNotFound)
	})
	root.Handle("/", s.auth(authed))
	return &apiHandler{Handler: cleanPaths(root), s: s}, nil
}

// apiHandler is New's handler; it keeps the server for the package's
// tests.
type apiHandler struct {
	http.Handler
	s *server
}

// cacheEntryPrefix is the cache browser's entry route's path prefix.
const cacheEntryPrefix = "/api/v1/debug/cache/entry/"

// cleanPaths answers 400 to a download path carrying a quote, a
// semicolon or a control character, and 404 to a path that is not clean ("..", ".", "//",
// a NUL or a backslash) instead of letting the mux redirect it: a
// download path is then never rewritten into another one. Under
// cacheEntryPrefix only the path as written (percent-encoded) must be
// clean: a key decodes to any string.
func cleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.HasPrefix(p, downloadPrefix) && unsafeChars(p) {
			writeError(w, http.StatusBadRequest, TextInvalidFilename)
			return
		}
		if strings.HasPrefix(p, cacheEntryPrefix) {
			// A cache key is any string: the route takes it percent-encoded
			// (".", "..", "a%2F%2Fb", "a%5Cb"), so only the path as
			// written must be clean.
			if esc := r.URL.EscapedPath(); strings.HasPrefix(esc, cacheEntryPrefix) && len(esc) > len(cacheEntryPrefix) && path.Clean(esc) == esc {
				next.ServeHTTP(w, r)
				return
			}
		}
		if p == "" || p[0] != '/' || path.Clean(p) != p || strings.ContainsAny(p, "\x00\\") {
			if strings.HasPrefix(p, "/api/v1/debug/download") || strings.HasPrefix(p, "/api/v1/debug/archives/") {
				writeError(w, http.StatusNotFound, TextFileNotFound)
			} else {
				writeDetail(w, http.StatusNotFound, TextNotFound)
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

// exchange is the peer cache exchange route (no auth).
func (s *server) exchange() http.Handler {
	if s.opts.Cache != nil {
		return s.opts.Cache.ExchangeHandler()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, text := cache.ParseChangesQuery(r.URL.Query()); text != "" {
			writeError(w, http.StatusBadRequest, text)
			return
		}
		writeError(w, http.StatusNotFound, cache.ErrTextOff)
	})
}

// auth checks ui.auth_token: Bearer header or ?token=, constant time.
func (s *server) auth(next http.Handler) http.Handler {
	tok := s.opts.Config.AuthToken
	if tok == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := "", false
		if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
			got, ok = strings.TrimPrefix(h, "Bearer "), true
		} else if q, has := r.URL.Query()["token"]; has && len(q) > 0 {
			got, ok = q[len(q)-1], true
		}
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(tok)) != 1 {
			writeDetail(w, http.StatusUnauthorized, TextUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *server) readyz(w http.ResponseWriter, _ *http.Request) {
	var reasons []string
	if s.opts.Ready != nil {
		reasons = s.opts.Ready()
	}
	if len(reasons) == 0 {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
		return
	}
	writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not_ready", "reasons": reasons})
}

func (s *server) metrics(w http.ResponseWriter, r *http.Request) {
	if s.opts.Metrics == nil {
		writeDetail(w, http.StatusNotFound, TextNotFound)
		return
	}
	promhttp.HandlerFor(s.opts.Metrics, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

// writeJSON writes v as the JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"detail":"Internal Server Error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store, private")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeDetail writes {"detail": text}.
func writeDetail(w http.ResponseWriter, status int, text string) {
	writeJSON(w, status, map[string]string{"detail": text})
}

// writeError writes the legacy {"error": text}.
func writeError(w http.ResponseWriter, status int, text string) {
	writeJSON(w, status, map[string]string{"error": text})
}

// fieldError is one item of a 422 body.
type fieldError struct {
	Loc []string `json:"loc"`
	Msg string   `json:"msg"`
}

// write422 writes {"detail":[{"loc":["query",param],"msg":msg}]}.
func write422(w http.ResponseWriter, param, msg string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []fieldError{{Loc: []string{"query", param}, Msg: msg}}})
}

// internal logs err and answers 500 {"detail": ...}.
func (s *server) internal(w http.ResponseWriter, route string, err error) {
	s.log.Error("debugapi_failed", "route", route, "err", err)
	writeDetail(w, http.StatusInternalServerError, "Internal Server Error")
}
