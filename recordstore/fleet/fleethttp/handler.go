// The fleet's routes: the health, the tenant list, and each tenant's read
// API over a leased store.

package fleethttp

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/internal/httpx"
	"github.com/fb46ecde/records/recordstore/recordresults"
)

// TenantsPrefix is the path under which each store's read API is served.
const TenantsPrefix = "/api/v1/tenants/"

// RouteFollow is the pattern of a tenant's follow route, whose responses
// stay open while rows arrive.
const RouteFollow = TenantsPrefix + "{key}/streams/{stream}/follow"

// The page size of GET /api/v1/tenants: limit= defaults to DefaultPage and
// may not exceed fleet.MaxPage.
const DefaultPage = 1000

// Options configure Handler. The zero value is usable.
type Options struct {
	// Logger receives one line per tenant request (the read API's, with
	// the tenant's key), the fleet's own refusals, and the failures a
	// client only sees the text of; default: discard.
	Logger *slog.Logger
	// Done, when closed, ends every follow response and batch wait, as
	// recordresults.HandlerOptions.Done does: close it when the server
	// shuts down (http.Server.RegisterOnShutdown is the place).
	Done <-chan struct{}
	// MaxExportRows caps one rows response of any tenant (0: no cap), as
	// recordresults.HandlerOptions.MaxExportRows does.
	MaxExportRows int
}

// RoutePatterns returns the patterns (http.ServeMux syntax, without a
// method) of every route Handler answers: its own, and each route of
// the read API under /api/v1/ as a tenant's under TenantsPrefix{key}/,
// the store's /healthz as /api/v1/tenants/{key}/healthz. A bounded set,
// for labelling requests by route (ownermetrics.NewHTTP); each call
// returns a new slice.
func RoutePatterns() []string {
	out := []string{"/healthz", "/api/v1/tenants", TenantsPrefix + "{key}/healthz"}
	for _, p := range recordresults.RoutePatterns() {
		if rest, ok := strings.CutPrefix(p, "/api/v1/"); ok {
			out = append(out, TenantsPrefix+"{key}/"+rest)
		}
	}
	return out
}

// api serves the fleet.
type api struct {
	f *fleet.Fleet
	// routes holds the tenant routes' patterns only: a request none
	// matches is answered 404 naming its own path, before any disk work.
	routes *http.ServeMux
	log    *slog.Logger
	opts   Options
}

// Handler returns the HTTP API of f:
//
//	GET /healthz                                    {"status":"ok"}, with "replica" (fleet.ReplicaHealth) while it ships stores
//	GET /api/v1/tenants[?after=KEY&limit=N]         {"tenants":[{key,path,size}...],"next":KEY}
//	    /api/v1/tenants/{key}/healthz               the store's /healthz
//	    /api/v1/tenants/{key}/<route>               the store's /api/v1/<route>
//
// {key} is a key as fleet list prints it (tenant:acme, slot:00042), or a
// tenant id (tenant fleet) or routing key (slot fleet) alone. Each tenant
// request leases its store for its whole length (a follow while it
// streams), opening it on first use; whether a missing store is created
// is f's fleet.Options.CreateOnDemand (refuse it for a server that only
// reads). A follow ends when opts.Done is closed, or when the store is
// deleted (fleet.Lease.Gone), so that its lease and file go. The tenant
// list is fleet.ListPage, sorted by key, DefaultPage stores a page unless
// limit= says otherwise (1 to fleet.MaxPage).
//
// Failures are JSON {"error":{"code","message"}} with a status by code
// (HTTPStatus); another method than GET or HEAD on a fleet route is 405
// (code unsupported, an Allow header). A key that is not one, and a path
// that is no route, are refused before anything on disk is looked at.
// Nothing here writes to a store.
func Handler(f *fleet.Fleet, opts Options) http.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &api{f: f, log: log, opts: opts, routes: http.NewServeMux()}
	for _, p := range RoutePatterns() {
		if strings.HasPrefix(p, TenantsPrefix) {
			h.routes.Handle(p, http.NotFoundHandler())
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		body := map[string]any{"status": "ok"}
		if rh := f.ReplicaHealth(); rh.Replicating > 0 {
			body["replica"] = rh // the stores this process owns and ships (a replica configured)
		}
		httpx.WriteJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("GET /api/v1/tenants", h.tenants)
	mux.HandleFunc(TenantsPrefix+"{key}", h.tenant)
	mux.HandleFunc(TenantsPrefix+"{key}/{rest...}", h.tenant)
	mux.HandleFunc("/", h.noRoute)
	return mux
}

// key reads a tenant request's key: a key as list prints it when it has a
// ':', else a tenant id or routing key of the fleet's mode. Only syntax is
// checked: nothing on disk is looked at.
func (h *api) key(s string) (fleet.Key, error) {
	if strings.Contains(s, ":") {
		return h.f.ParseKey(s)
	}
	return h.f.KeyFor(s)
}

// tenant answers a request under /api/v1/tenants/{key}/ with the store's
// read API, the store leased for the length of the request.
func (h *api) tenant(w http.ResponseWriter, r *http.Request) {
	k, err := h.key(r.PathValue("key"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if _, pattern := h.routes.Handler(r); pattern == "" {
		// Said here, with the tenant's prefix: the store's API would
		// name the path without it.
		h.noRoute(w, r)
		return
	}
	target, err := tenantTarget(r.URL)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	lease, err := h.f.Acquire(r.Context(), k)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer lease.Release()
	st := lease.Store()
	store := recordresults.Handler(st.Backend(), recordresults.HandlerOptions{
		Logger: h.log.With("tenant", k.String()), Status: st.Status, Batches: st,
		Done: endWhenGone(r.Context(), h.opts.Done, lease.Gone()), MaxExportRows: h.opts.MaxExportRows,
	})
	inner := r.Clone(r.Context())
	inner.URL = target
	inner.RequestURI = target.RequestURI()
	store.ServeHTTP(w, inner)
}

// endWhenGone returns a channel closed when done is (the server shuts
// down) or gone is (the store was deleted by another process: see
// fleet.Lease.Gone), so that a follow of a deleted store ends, as one ends
// at shutdown, and lets its lease and the deleted file go. Its goroutine
// ends with ctx.
func endWhenGone(ctx context.Context, done, gone <-chan struct{}) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		select {
		case <-done:
			close(out)
		case <-gone:
			close(out)
		case <-ctx.Done():
		}
	}()
	return out
}

// tenantTarget maps a tenant request's URL to the store's read API:
// /api/v1/tenants/{key}/healthz to /healthz, /api/v1/tenants/{key}/<rest>
// to /api/v1/<rest> (the query string kept).
func tenantTarget(u *url.URL) (*url.URL, error) {
	esc := strings.TrimPrefix(u.EscapedPath(), TenantsPrefix)
	_, rest, _ := strings.Cut(esc, "/")
	raw := "/api/v1/" + rest
	if rest == "healthz" {
		raw = "/healthz"
	}
	p, err := url.PathUnescape(raw)
	if err != nil {
		return nil, recordstore.Invalidf("path %q: %v", u.EscapedPath(), err)
	}
	out := *u
	out.Path, out.RawPath = p, raw
	return &out, nil
}

// tenantPage is the body of GET /api/v1/tenants.
type tenantPage struct {
	Tenants []fleet.Entry `json:"tenants"`
	// Next, when set, is the after= of the next page.
	Next string `json:"next,omitempty"`
}

// tenants answers the fleet's stores sorted by key, a page at a time:
// after= (a key, exclusive) and limit= (default DefaultPage, at most
// fleet.MaxPage). fleet.ListPage walks the tree by name and opens only
// the page's files.
func (h *api) tenants(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := DefaultPage
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > fleet.MaxPage {
			h.fail(w, r, recordstore.Invalidf("query parameter limit=%q: want 1 to %d", cutQuoted(s), fleet.MaxPage))
			return
		}
		limit = n
	}
	p, err := h.f.ListPage(r.Context(), q.Get("after"), limit)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, tenantPage{Tenants: p.Stores, Next: p.Next})
}

// cutQuoted cuts a client's value to 64 bytes for an error message.
func cutQuoted(s string) string {
	if len(s) > 64 {
		return s[:64]
	}
	return s
}

// noRoute answers what no fleet route takes: 405 for another method than
// GET on a fleet route, 404 otherwise.
func (h *api) noRoute(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" || r.URL.Path == "/api/v1/tenants" {
		w.Header().Set("Allow", "GET, HEAD")
		h.failStatus(w, r, http.StatusMethodNotAllowed, recordstore.Errorf(recordstore.ErrUnsupported,
			"method %s is not allowed on %s; the API only reads: GET or HEAD", r.Method, r.URL.Path))
		return
	}
	h.fail(w, r, recordstore.Errorf(recordstore.ErrNotFound, "no route for %s %s", r.Method, r.URL.Path))
}

// fail answers err with the status HTTPStatus gives its code.
func (h *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	h.failStatus(w, r, HTTPStatus(recordstore.Code(err)), err)
}

// failStatus answers err with status as the read API answers its errors
// (recordresults.WriteError, which logs an internal one); a refusal is
// logged at info, since the read API's request line does not see it.
func (h *api) failStatus(w http.ResponseWriter, r *http.Request, status int, err error) {
	if status != http.StatusInternalServerError {
		h.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", status, "code", recordstore.Code(err))
	}
	recordresults.WriteError(w, r, h.log, status, err)
}
