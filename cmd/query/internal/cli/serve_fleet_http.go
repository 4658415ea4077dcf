// The HTTP side of query serve --fleet: the fleet's routes, the per-tenant
// read API (recordresults.Handler over a leased store), the tenant list,
// and the fleet's error→status mapping.

package cli

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/recordresults"
)

// tenantsPrefix is the path under which each store's read API is served.
const tenantsPrefix = "/api/v1/tenants/"

// The page size of GET /api/v1/tenants: limit= defaults to
// defaultTenantPage and may not exceed maxTenantPage.
const (
	defaultTenantPage = 1000
	maxTenantPage     = fleet.MaxPage
)

// fleetRouteFollow is the pattern of a tenant's follow route, whose open
// responses records_follow_clients counts.
const fleetRouteFollow = "/api/v1/tenants/{key}/streams/{stream}/follow"

// fleetRoutePatterns are the route labels of serve --fleet: its own routes
// and, under /api/v1/tenants/{key}/, every read API route serve labels.
func fleetRoutePatterns() []string {
	out := []string{"/healthz", "/metrics", "/api/v1/tenants", "/api/v1/tenants/{key}/healthz"}
	for _, p := range routePatterns {
		if rest, ok := strings.CutPrefix(p, "/api/v1/"); ok {
			out = append(out, tenantsPrefix+"{key}/"+rest)
		}
	}
	return out
}

// fleetAPI serves the fleet: GET /healthz, GET /api/v1/tenants and each
// store's read API under /api/v1/tenants/{key}/.
type fleetAPI struct {
	f *fleet.Fleet
	// routes holds the tenant routes' patterns only: a request none
	// matches is answered 404 naming its own path, before any disk work.
	routes *http.ServeMux
	log    *slog.Logger
	done   <-chan struct{}
	// maxExport caps one rows response of a tenant (0: no cap).
	maxExport int
}

// fleetHandler returns the HTTP API of f:
//
//	GET /healthz                                    {"status":"ok"}, with "replica" (fleet.ReplicaHealth) while it ships stores
//	GET /api/v1/tenants[?after=KEY&limit=N]         {"tenants":[{key,path,size}...],"next":KEY}
//	    /api/v1/tenants/{key}/healthz               the store's /healthz
//	    /api/v1/tenants/{key}/<route>               the store's /api/v1/<route>
//
// {key} is a key as fleet list prints it (tenant:acme, slot:00042), or a
// tenant id (tenant fleet) or routing key (slot fleet) alone. Each tenant
// request leases its store for its whole length (a follow while it
// streams), opening it on first use; a missing store is never created.
// Closing done ends follow responses (and batch waits) at shutdown.
// Failures are the read API's JSON error bodies, with the fleet's codes
// mapped by fleetHTTPStatus. Nothing here writes to a store.
func fleetHandler(f *fleet.Fleet, log *slog.Logger, done <-chan struct{}, maxExport int) http.Handler {
	h := &fleetAPI{f: f, log: log, done: done, maxExport: maxExport, routes: http.NewServeMux()}
	for _, p := range fleetRoutePatterns() {
		if strings.HasPrefix(p, tenantsPrefix) {
			h.routes.Handle(p, http.NotFoundHandler())
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		body := map[string]any{"status": "ok"}
		if rh := f.ReplicaHealth(); rh.Replicating > 0 {
			body["replica"] = rh // the stores this process owns and ships (--replica)
		}
		writeFleetJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("GET /api/v1/tenants", h.tenants)
	mux.HandleFunc(tenantsPrefix+"{key}", h.tenant)
	mux.HandleFunc(tenantsPrefix+"{key}/{rest...}", h.tenant)
	mux.HandleFunc("/", h.noRoute)
	return mux
}

// key reads a tenant request's key: a key as list prints it when it has a
// ':', else a tenant id or routing key of the fleet's mode. Only syntax is
// checked: nothing on disk is looked at.
func (h *fleetAPI) key(s string) (fleet.Key, error) {
	if strings.Contains(s, ":") {
		return h.f.ParseKey(s)
	}
	return h.f.KeyFor(s)
}

// tenant answers a request under /api/v1/tenants/{key}/ with the store's
// read API, the store leased for the length of the request.
func (h *fleetAPI) tenant(w http.ResponseWriter, r *http.Request) {
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
	api := recordresults.Handler(st.Backend(), recordresults.HandlerOptions{
		Logger: h.log.With("tenant", k.String()), Status: st.Status, Batches: st,
		Done: endWhenGone(r.Context(), h.done, lease.Gone()), MaxExportRows: h.maxExport,
	})
	inner := r.Clone(r.Context())
	inner.URL = target
	inner.RequestURI = target.RequestURI()
	api.ServeHTTP(w, inner)
}

// endWhenGone returns a channel closed when done is (serve shuts down) or
// gone is (the store was deleted by another process: see fleet.Lease.Gone),
// so that a follow of a deleted store ends, as one ends at shutdown, and
// lets its lease and the deleted file go. Its goroutine ends with ctx.
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
	esc := strings.TrimPrefix(u.EscapedPath(), tenantsPrefix)
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
// after= (a key, exclusive) and limit= (default 1000, at most 10000).
// fleet.ListPage walks the tree by name and opens only the page's files.
func (h *fleetAPI) tenants(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := defaultTenantPage
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxTenantPage {
			h.fail(w, r, recordstore.Invalidf("query parameter limit=%q: want 1 to %d", cutQuoted(s), maxTenantPage))
			return
		}
		limit = n
	}
	p, err := h.f.ListPage(r.Context(), q.Get("after"), limit)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	page := tenantPage{Tenants: p.Stores, Next: p.Next}
	writeFleetJSON(w, http.StatusOK, page)
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
func (h *fleetAPI) noRoute(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" || r.URL.Path == "/api/v1/tenants" {
		w.Header().Set("Allow", "GET, HEAD")
		h.failStatus(w, r, http.StatusMethodNotAllowed, recordstore.Errorf(recordstore.ErrUnsupported,
			"method %s is not allowed on %s; the API only reads: GET or HEAD", r.Method, r.URL.Path))
		return
	}
	h.fail(w, r, recordstore.Errorf(recordstore.ErrNotFound, "no route for %s %s", r.Method, r.URL.Path))
}

// fleetHTTPStatus returns the HTTP status of an error code of a fleet
// request: the read API's (recordresults.HTTPStatus: 400 invalid, 404
// not_found, 503 catalog_version, ...) and the fleet's own: 409 for a key
// that exists, a store in use or misplaced (its file records another
// key), 403 for a store path outside the root, 410 for a store being
// deleted, 503 when the fleet is closed (shutting down).
func fleetHTTPStatus(code string) int {
	switch code {
	case "exists", "in_use", "misplaced":
		return http.StatusConflict
	case "outside_root":
		return http.StatusForbidden
	case "deleting":
		return http.StatusGone
	case "closed":
		return http.StatusServiceUnavailable
	}
	return recordresults.HTTPStatus(code)
}

// fail answers err as the read API answers its errors.
func (h *fleetAPI) fail(w http.ResponseWriter, r *http.Request, err error) {
	h.failStatus(w, r, fleetHTTPStatus(recordstore.Code(err)), err)
}

// failStatus answers err with status: {"error":{"code","message"}}. An
// internal error is logged, since the client sees only its text.
func (h *fleetAPI) failStatus(w http.ResponseWriter, r *http.Request, status int, err error) {
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	body.Error.Code = recordstore.Code(err)
	body.Error.Message = recordstore.Message(err)
	if status == http.StatusInternalServerError {
		h.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	} else {
		h.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", status, "code", body.Error.Code)
	}
	writeFleetJSON(w, status, body)
}

// writeFleetJSON answers with v as a JSON document.
func writeFleetJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client may be gone; nothing to do then
}
