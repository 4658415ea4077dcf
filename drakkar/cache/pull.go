// The pull: every exchange interval, the rows peers originated, page by
// page from their exchange route, each page applied through Apply (the
// one LWW rule). Cursors live in memory, one per peer.

package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fb46ecde/records/drakkar/registry"
	"github.com/fb46ecde/records/recordstore"
)

// PeerLister lists the fleet's other workers: a *registry.Registry.
type PeerLister interface {
	Peers() []registry.Peer
}

// HTTPDoer sends the pull's requests: an *http.Client.
type HTTPDoer interface {
	Do(*http.Request) (*http.Response, error)
}

// puller holds the pull's cursors.
type puller struct {
	c      *Cache
	client HTTPDoer
	mu     sync.Mutex
	cursor map[string]peerCursor // by peer worker; guarded by mu
	last   map[string]peerLast   // by peer worker; guarded by mu
}

// peerCursor is where the pull of one peer stands. It holds only for the
// peer's instance, scopes and resync count it was reached with (id).
type peerCursor struct {
	id  string
	cur Cursor
}

func newPuller(c *Cache) *puller {
	client := c.opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	return &puller{c: c, client: client, cursor: map[string]peerCursor{}, last: map[string]peerLast{}}
}

// PeerResult is what one peer's pull did.
type PeerResult struct {
	Worker string
	// Asked is false when no mark of the peer was past our cursor.
	Asked bool
	// Pages and Rows count what was applied.
	Pages, Rows int
	// Err is why the pull of this peer stopped early (nil: it ran to
	// more=false). The cursor stays at the last applied page.
	Err error
}

// Pull runs one pull cycle now, until ctx ends: every online peer with
// the exchange on its card and a URL is asked, concurrently, for its rows
// of cluster and global (same cluster) or global (another cluster) — but
// only when a mark on its card is past our cursor for it — page after
// page until more is false. A peer's failure is logged
// (cache_peer_sync_failed), counted and leaves its cursor where it was;
// it never stops the others. Without the engine, or the exchange, or a
// PeerLister, it does nothing.
func (c *Cache) Pull(ctx context.Context) []PeerResult {
	if !c.Owner() || !c.cfg.Exchange || c.opts.Peers == nil {
		return nil
	}
	peers := c.opts.Peers.Peers()
	out := make([]PeerResult, len(peers))
	var wg sync.WaitGroup
	for i, p := range peers {
		out[i].Worker = p.Worker
		if p.Worker == c.cfg.WorkerName || !p.Online || p.URL == "" || p.Features.Cache == nil {
			continue
		}
		wg.Add(1)
		go func(i int, p registry.Peer) {
			defer wg.Done()
			out[i] = c.pull.peer(ctx, p)
		}(i, p)
	}
	wg.Wait()
	return out
}

// scopesFor are the scopes pulled from p.
func (c *Cache) scopesFor(p registry.Peer) []Scope {
	if p.Cluster == c.cfg.ClusterName {
		return []Scope{ScopeCluster, ScopeGlobal}
	}
	return []Scope{ScopeGlobal}
}

// peer pulls one peer.
func (pl *puller) peer(ctx context.Context, p registry.Peer) PeerResult {
	c := pl.c
	res := PeerResult{Worker: p.Worker}
	defer func() { pl.note(p, res) }()
	scopes := c.scopesFor(p)
	// A peer that restarted (a new instance) is pulled from the start: it
	// may have lost rows a cursor passed, and stamped new ones below it.
	// So is one whose resync count changed: another process spooled rows
	// into it that may sit behind the cursor.
	id := p.Instance + "\x00" + joinScopes(scopes) + "\x00" + strconv.FormatInt(p.Features.CacheResync, 10)
	pl.mu.Lock()
	pc, has := pl.cursor[p.Worker]
	pl.mu.Unlock()
	has = has && pc.id == id
	cur := pc.cur
	if !markPast(p.Features.Cache, scopes, cur, has) {
		return res
	}
	res.Asked = true
	for {
		var after *Cursor
		if has {
			after = &cur
		}
		page, err := pl.fetch(ctx, p, scopes, after)
		if err == nil && len(page.Rows) > 0 {
			if _, aerr := c.Apply(ctx, page.Rows); aerr != nil {
				err = &pullError{reason: "apply", err: aerr}
			}
		}
		if err != nil {
			res.Err = err
			reason := "request"
			if pe, ok := err.(*pullError); ok {
				reason = pe.reason
			}
			c.met.peerFailures.WithLabelValues(reason).Inc()
			c.log.Warn("cache_peer_sync_failed", "peer", p.Worker, "url", p.URL, "reason", reason, "error", err)
			return res
		}
		res.Pages++
		res.Rows += len(page.Rows)
		c.met.pulledRows.Add(float64(len(page.Rows)))
		if len(page.Rows) > 0 {
			cur, has = cursorOf(page.Rows[len(page.Rows)-1]), true
			pl.mu.Lock()
			pl.cursor[p.Worker] = peerCursor{id: id, cur: cur}
			pl.mu.Unlock()
		}
		if !page.More || len(page.Rows) == 0 {
			return res
		}
	}
}

// markPast reports whether a mark of the scopes is past the cursor.
func markPast(marks map[string]registry.Mark, scopes []Scope, cur Cursor, has bool) bool {
	for _, s := range scopes {
		m, ok := marks[string(s)]
		if ok && (!has || cur.Less(Cursor{MS: m.MS, Key: m.Key})) {
			return true
		}
	}
	return false
}

func joinScopes(scopes []Scope) string {
	s := make([]string, len(scopes))
	for i, sc := range scopes {
		s[i] = string(sc)
	}
	return strings.Join(s, ",")
}

// pullError is a failed pull with the reason it is counted under.
type pullError struct {
	reason string
	err    error
}

func (e *pullError) Error() string { return e.reason + ": " + e.err.Error() }
func (e *pullError) Unwrap() error { return e.err }

// fetch asks p for one page and checks it.
func (pl *puller) fetch(ctx context.Context, p registry.Peer, scopes []Scope, after *Cursor) (Page, error) {
	q := url.Values{}
	q.Set("scopes", joinScopes(scopes))
	if after != nil {
		q.Set("after_ms", strconv.FormatInt(after.MS, 10))
		q.Set("after_key", after.Key)
	}
	q.Set("limit", strconv.Itoa(DefaultPageLimit))
	u := strings.TrimRight(p.URL, "/") + ChangesPath + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Page{}, &pullError{reason: "request", err: err}
	}
	resp, err := pl.client.Do(req)
	if err != nil {
		return Page{}, &pullError{reason: "request", err: err}
	}
	defer resp.Body.Close()
	max := pl.c.opts.MaxPageBytes
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return Page{}, &pullError{reason: "request", err: err}
	}
	if resp.StatusCode != http.StatusOK {
		return Page{}, &pullError{reason: "status", err: fmt.Errorf("%s answered %d", p.Worker, resp.StatusCode)}
	}
	if int64(len(body)) > max {
		return Page{}, &pullError{reason: "page", err: recordstore.Errorf(ErrBadPage, "the body is over %d bytes", max)}
	}
	page, err := decodePage(body, p.Worker, scopes, after)
	if err != nil {
		return Page{}, &pullError{reason: "page", err: err}
	}
	return page, nil
}

// decodePage reads a page strictly: the route's two keys, rows of origin
// in the scopes, each a good entry, in strictly increasing cursor order
// after the cursor, at most MaxPageLimit of them.
func decodePage(body []byte, origin string, scopes []Scope, after *Cursor) (Page, error) {
	var raw struct {
		Rows *[]Entry `json:"rows"`
		More *bool    `json:"more"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Page{}, recordstore.Errorf(ErrBadPage, "%w", err)
	}
	if raw.Rows == nil || raw.More == nil {
		return Page{}, recordstore.Errorf(ErrBadPage, "rows or more is missing")
	}
	rows := *raw.Rows
	if len(rows) > MaxPageLimit {
		return Page{}, recordstore.Errorf(ErrBadPage, "%d rows, more than %d", len(rows), MaxPageLimit)
	}
	prev, has := Cursor{}, after != nil
	if has {
		prev = *after
	}
	for _, e := range rows {
		if err := e.Check(); err != nil {
			return Page{}, recordstore.Errorf(ErrBadPage, "%w", err)
		}
		if e.OriginWorkerID != origin {
			return Page{}, recordstore.Errorf(ErrBadPage, "key %q claims origin %q, not %q", e.Key, e.OriginWorkerID, origin)
		}
		if !scopeIn(e.Scope, scopes) {
			return Page{}, recordstore.Errorf(ErrBadPage, "key %q has scope %q, which was not asked", e.Key, e.Scope)
		}
		if has && !prev.Less(cursorOf(e)) {
			return Page{}, recordstore.Errorf(ErrBadPage, "key %q is not after the cursor", e.Key)
		}
		prev, has = cursorOf(e), true
	}
	return Page{Rows: rows, More: *raw.More}, nil
}

func scopeIn(s Scope, scopes []Scope) bool {
	for _, x := range scopes {
		if x == s {
			return true
		}
	}
	return false
}
