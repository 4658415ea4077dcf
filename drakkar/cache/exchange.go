// The exchange route: GET /api/v1/peer/cache/changes, exactly as the
// spec's table says — parameter checks in order, the four 400 texts, 404
// when the exchange is off, 503 when the read takes too long.

package cache

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// ChangesPath is the route's path.
const ChangesPath = "/api/v1/peer/cache/changes"

// The route's limits.
const (
	DefaultPageLimit = 500
	MaxPageLimit     = 1000
)

// The route's error texts (the spec's, byte for byte).
const (
	ErrTextScopes  = "scopes must be cluster, global or both"
	ErrTextCursor  = "after_ms and after_key must be given together"
	ErrTextAfterMS = "after_ms must be an integer"
	ErrTextLimit   = "limit must be an integer from 1 to 1000"
	ErrTextOff     = "The cache exchange is off on this worker"
	ErrTextTimeout = "The cache did not answer in time"
)

// ChangesQuery is a parsed request of the route.
type ChangesQuery struct {
	Scopes []Scope
	// After is the cursor; nil: from the start.
	After *Cursor
	Limit int
}

// Page is the route's answer.
type Page struct {
	Rows []Entry `json:"rows"`
	More bool    `json:"more"`
}

var integerText = regexp.MustCompile(`^-?[0-9]+$`)

// last returns the last value of a parameter and whether it was given.
func last(q url.Values, name string) (string, bool) {
	v, ok := q[name]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[len(v)-1], true
}

// ParseChangesQuery checks a request's parameters in the spec's order and
// returns the first failure's text ("" when the query is good).
func ParseChangesQuery(q url.Values) (ChangesQuery, string) {
	var out ChangesQuery
	scopes, ok := last(q, "scopes")
	if !ok || scopes == "" {
		return out, ErrTextScopes
	}
	seen := map[Scope]bool{}
	for _, s := range strings.Split(scopes, ",") {
		sc := Scope(s)
		if sc != ScopeCluster && sc != ScopeGlobal {
			return out, ErrTextScopes
		}
		if !seen[sc] {
			seen[sc] = true
			out.Scopes = append(out.Scopes, sc)
		}
	}
	ms, hasMS := last(q, "after_ms")
	key, hasKey := last(q, "after_key")
	if hasMS != hasKey {
		return out, ErrTextCursor
	}
	if hasMS {
		if !integerText.MatchString(ms) {
			return out, ErrTextAfterMS
		}
		n, err := strconv.ParseInt(ms, 10, 64)
		if err != nil {
			return out, ErrTextAfterMS
		}
		out.After = &Cursor{MS: n, Key: key}
	}
	out.Limit = DefaultPageLimit
	if l, ok := last(q, "limit"); ok {
		n, err := strconv.Atoi(l)
		if !integerText.MatchString(l) || err != nil || n < 1 || n > MaxPageLimit {
			return out, ErrTextLimit
		}
		out.Limit = n
	}
	return out, ""
}

// Changes returns one page of the rows this worker originated in the
// query's scopes, not expired now, after its cursor, in cursor order: at
// most Limit rows, More when others remain. ErrOff when the engine is off.
func (c *Cache) Changes(ctx context.Context, q ChangesQuery) (Page, error) {
	if !c.Engine() || !c.Owner() {
		return Page{}, ErrOff
	}
	if c.faults.page != nil {
		c.faults.page(ctx)
	}
	rows, err := c.rd.page(ctx, q.Scopes, q.After, c.cfg.WorkerName, c.nowMS(), q.Limit, c.faults.betweenScopes)
	if err != nil {
		return Page{}, err
	}
	p := Page{Rows: rows, More: len(rows) > q.Limit}
	if p.More {
		p.Rows = rows[:q.Limit]
	}
	if p.Rows == nil {
		p.Rows = []Entry{}
	}
	return p, nil
}

// ExchangeHandler serves the route (GET only; it needs no token). The
// parameter checks run first, so a bad request answers 400 even when the
// exchange is off (404); a read longer than Options.ExchangeTimeout
// answers 503.
func (c *Cache) ExchangeHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"})
			return
		}
		q, bad := ParseChangesQuery(r.URL.Query())
		if bad != "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": bad})
			return
		}
		if !c.cfg.Exchange {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": ErrTextOff})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), c.opts.ExchangeTimeout)
		defer cancel()
		p, err := c.Changes(ctx, q)
		switch {
		case errors.Is(err, ErrOff) || (err != nil && !c.Engine()):
			writeJSON(w, http.StatusNotFound, map[string]string{"error": ErrTextOff})
		case err != nil && ctx.Err() != nil:
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": ErrTextTimeout})
		case err != nil:
			c.log.Warn("cache_exchange_failed", "error", err)
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "The cache could not be read"})
		default:
			c.met.pagesServed.Inc()
			writeJSON(w, http.StatusOK, p)
		}
	})
}

// writeJSON writes v as the answer (no HTML escaping).
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
