// Reader: running Queries over a backend — a page with its cursor, or every
// matching row as an iterator — and the per-kind search columns.

package recordresults

import (
	"context"
	"iter"
	"slices"
	"sync"

	"github.com/fb46ecde/records/recordstore"
)

// Reader runs Queries over a backend. It is safe for concurrent use; it
// only reads the store.
type Reader struct {
	b recordstore.Backend

	mu struct {
		sync.RWMutex
		search map[string][]string // kind → search columns set by SetSearchColumns
		views  map[string]*View    // by name (RegisterView)
	}
}

// NewReader returns a Reader over b. With a backend that implements
// recordstore.RowQuerier (sqlite.Backend) every query runs in the store;
// with another, queries sorted by anything but seq ascending are
// ErrUnsupported and the rest are filtered in Go.
func NewReader(b recordstore.Backend) *Reader {
	r := &Reader{b: b}
	r.mu.search = map[string][]string{}
	r.mu.views = map[string]*View{}
	return r
}

// Backend returns the backend the Reader reads.
func (r *Reader) Backend() recordstore.Backend { return r.b }

// SetSearchColumns names the columns q searches in kind's streams, instead
// of the default (every string column). Each must be a string or json
// column of the declared kind (ErrInvalid otherwise; ErrNotFound for an
// undeclared kind). No columns restores the default.
func (r *Reader) SetSearchColumns(ctx context.Context, kind string, cols ...string) error {
	k, err := r.b.Kind(ctx, kind)
	if err != nil {
		return err
	}
	for _, name := range cols {
		c, ok := k.Column(name)
		if !ok {
			return recordstore.Invalidf("search columns of kind %s: no column %s", kind, recordstore.Quote(name))
		}
		if c.Type != recordstore.TypeString && c.Type != recordstore.TypeJSON {
			return recordstore.Invalidf("search columns of kind %s: %s is %s; want string or json", kind, name, c.Type)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(cols) == 0 {
		delete(r.mu.search, kind)
	} else {
		r.mu.search[kind] = slices.Clone(cols)
	}
	return nil
}

// searchColumns returns the search columns of kind k.
func (r *Reader) searchColumns(k *recordstore.Kind) []string {
	r.mu.RLock()
	cols, ok := r.mu.search[k.Name]
	r.mu.RUnlock()
	if ok {
		return slices.Clone(cols)
	}
	var out []string
	for _, c := range k.Columns {
		if c.Type == recordstore.TypeString {
			out = append(out, c.Name)
		}
	}
	return out
}

// KindInfo describes a kind to a reader: its declaration and what a query
// of it may search and sort by.
type KindInfo struct {
	Kind          recordstore.Kind `json:"kind"`
	SearchColumns []string         `json:"searchColumns"`
	SortColumns   []string         `json:"sortColumns"`
	TimeColumn    string           `json:"timeColumn,omitempty"`
}

// KindInfo returns the KindInfo of a declared kind (ErrNotFound if not).
func (r *Reader) KindInfo(ctx context.Context, kind string) (KindInfo, error) {
	k, err := r.b.Kind(ctx, kind)
	if err != nil {
		return KindInfo{}, err
	}
	search := r.searchColumns(&k)
	if search == nil {
		search = []string{}
	}
	return KindInfo{Kind: k, SearchColumns: search, SortColumns: SortColumns(&k), TimeColumn: k.TimeColumn}, nil
}

// Page is one page of a paged read.
type Page struct {
	Stream string               `json:"stream"`
	Kind   string               `json:"kind"`
	Rows   []recordstore.Record `json:"rows"`
	// Next continues the read (Query.Cursor); "" when it is exhausted.
	Next string `json:"next"`
}

// Page returns one page of q: up to q.PageSize rows (DefaultPageSize when
// 0) from q.Cursor on, and the cursor of the next page. Bad parameters are
// ErrInvalid; a missing stream ErrNotFound.
func (r *Reader) Page(ctx context.Context, q Query) (Page, error) {
	p, err := r.plan(ctx, q)
	if err != nil {
		return Page{}, err
	}
	recs, more, err := p.fetch(ctx, r.b, q.pageSize())
	if err != nil {
		return Page{}, err
	}
	if recs == nil {
		recs = []recordstore.Record{}
	}
	out := Page{Stream: q.Stream, Kind: p.kind.Name, Rows: recs}
	if more {
		out.Next = p.cursor()
	}
	return out, nil
}

// Rows returns every row q selects (from q.Cursor on, when set), at most
// q.Limit of them (0: all), read a page at a time (see pages): memory
// stays flat whatever the stream's size. The read is pinned as a paged read is
// (rows appended after it began are not part of it). A failure is yielded
// once, as the last pair; bad parameters fail before any row.
func (r *Reader) Rows(ctx context.Context, q Query) iter.Seq2[recordstore.Record, error] {
	return func(yield func(recordstore.Record, error) bool) {
		p, err := r.plan(ctx, q)
		if err != nil {
			yield(recordstore.Record{}, err)
			return
		}
		for recs, err := range r.pages(ctx, p, q.Limit) {
			if err != nil {
				yield(recordstore.Record{}, err)
				return
			}
			for _, rec := range recs {
				if !yield(rec, nil) {
					return
				}
			}
		}
	}
}

// maxReadPage is the most rows Rows and Export read at a time. Each read
// costs a read transaction, the stream's lookup and a statement: about a
// tenth of the time of a read of MaxPageSize small rows.
const maxReadPage = 8 * MaxPageSize

// pages yields the rows of a planned read a page at a time, at most limit
// rows in all (0: no cap); a failure ends it. The first page is
// MaxPageSize rows, so that the first rows come as soon as a paged read's
// would; each page after it twice the one before, up to maxReadPage.
func (r *Reader) pages(ctx context.Context, p *plan, limit int) iter.Seq2[[]recordstore.Record, error] {
	return func(yield func([]recordstore.Record, error) bool) {
		g := &pager{b: r.b, p: p, limit: limit}
		for {
			recs, err := g.next(ctx)
			if err != nil {
				yield(nil, err)
				return
			}
			if len(recs) > 0 && !yield(recs, nil) {
				return
			}
			if g.ended {
				return
			}
		}
	}
}

// pager reads a planned read a page at a time (MaxPageSize rows first,
// then twice the page before, up to maxReadPage), at most limit rows in
// all (0: no cap), and knows whether the limit cut it.
type pager struct {
	b     recordstore.Backend
	p     *plan
	limit int
	sent  int  // rows returned so far
	size  int  // the next page's size; 0 before the first page
	ended bool // the last fetch saw no row past its page, or the limit is reached
}

// nextSize returns the next page's size — MaxPageSize first, then twice
// the page before, up to most — cut to what the limit leaves (0 once it
// is reached).
func (g *pager) nextSize(most int) int {
	if g.size == 0 {
		g.size = MaxPageSize
	}
	n := g.size
	g.size = min(2*g.size, most)
	if g.limit > 0 {
		n = min(n, g.limit-g.sent)
	}
	return n
}

// next returns the next page, empty once the read or the limit is done.
func (g *pager) next(ctx context.Context) ([]recordstore.Record, error) {
	n := g.nextSize(maxReadPage)
	if n == 0 || g.ended {
		g.ended = true
		return nil, nil
	}
	recs, more, err := g.p.fetch(ctx, g.b, n)
	if err != nil {
		return nil, err
	}
	g.sent += len(recs)
	if !more || (g.limit > 0 && g.sent == g.limit) {
		g.ended = true
	}
	return recs, nil
}

// cut reports whether the read has rows past the limit: limit rows were
// returned and the last fetch saw more (a fetch reads one row past what it
// returns).
func (g *pager) cut() bool {
	return g.limit > 0 && g.sent == g.limit && !g.p.done
}

// CreateSearchIndex indexes kind's search columns (see SetSearchColumns)
// in the store, so that q searches of 3 bytes or more read the index
// instead of every row of the stream: the rows are the same either way.
// Only the owner's backend writes it (ErrReadOnly elsewhere); a backend
// without the capability is ErrUnsupported.
func (r *Reader) CreateSearchIndex(ctx context.Context, kind string) error {
	si, ok := r.b.(recordstore.SearchIndexer)
	if !ok {
		return recordstore.Errorf(recordstore.ErrUnsupported, "search index of kind %s: this store has none", kind)
	}
	k, err := r.b.Kind(ctx, kind)
	if err != nil {
		return err
	}
	cols := r.searchColumns(&k)
	if len(cols) == 0 {
		return recordstore.Invalidf("search index of kind %s: it has no search columns", kind)
	}
	return si.CreateSearchIndex(ctx, kind, cols)
}
