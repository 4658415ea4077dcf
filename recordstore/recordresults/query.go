// The query model of the read side: one Query type that Go callers fill
// in, that ParseQuery reads from HTTP parameters and the CLI from flags
// (docs/reading.md is its contract).

package recordresults

import (
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// Page sizes of a paged read.
const (
	// DefaultPageSize is the page size when a query gives none.
	DefaultPageSize = 100
	// MaxPageSize is the largest page size a query may ask for.
	MaxPageSize = 1000
)

// MaxFilters is the most column filters (Where) a query may hold: each is
// one more term of the SQL the store runs, whose expression depth SQLite
// bounds (1000), so a longer list is refused, as ErrInvalid, before any SQL.
const MaxFilters = 100

// Query is a read of one stream's current generation: the rows with
// After < seq ≤ To (To 0: no bound), whose kind's time column lies in
// [From, Until) (zero: no bound), that contain Text in a search column,
// and that pass every Where filter; ordered by Sort ("" or "_seq": seq;
// "-col": descending); at most Limit rows in all (0: no cap). A paged
// read returns PageSize rows (0: DefaultPageSize) from Cursor on. The
// zero Query but Stream reads a whole stream in seq order.
type Query struct {
	Stream   string
	After    int64
	To       int64
	From     time.Time
	Until    time.Time
	Text     string
	Where    []Filter
	Sort     string
	Limit    int
	PageSize int
	Cursor   string
}

// Filter is one column filter: Column Op Value, Value as text in the form
// the column's type reads (see docs/reading.md).
type Filter struct {
	Column string
	Op     recordstore.CondOp
	Value  string
}

// String returns the filter as ParseFilter reads it: "attempts>=3".
func (f Filter) String() string { return f.Column + string(f.Op) + f.Value }

// filterOps are the operators of a filter, longest first so that ">="
// is not read as ">" followed by "=3".
var filterOps = []recordstore.CondOp{
	recordstore.OpGe, recordstore.OpLe, recordstore.OpNe,
	recordstore.OpEq, recordstore.OpLt, recordstore.OpGt, recordstore.OpContains,
}

// ParseFilter reads one filter, COLUMN OP VALUE with OP one of = != < <=
// > >= ~ (see docs/reading.md). The column name runs up to the first
// character that is not a letter, digit or '_'; an empty name or a missing
// operator is ErrInvalid. The value is checked against the column's type
// when the query runs.
func ParseFilter(s string) (Filter, error) {
	i := 0
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	if i == 0 {
		return Filter{}, recordstore.Invalidf("filter %s: want COLUMN OP VALUE, e.g. status=failed or attempts>=3", recordstore.Quote(s))
	}
	rest := s[i:]
	for _, op := range filterOps {
		if strings.HasPrefix(rest, string(op)) {
			return Filter{Column: s[:i], Op: op, Value: rest[len(op):]}, nil
		}
	}
	return Filter{}, recordstore.Invalidf("filter %s: no operator after column %s; want one of = != < <= > >= ~", recordstore.Quote(s), s[:i])
}

func isNameByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// ParseQuery reads the query parameters of docs/reading.md (after, to,
// from, until, q, where, sort, limit, page_size, cursor) for stream.
// Other parameters are left to the caller. A malformed one is ErrInvalid
// naming it.
func ParseQuery(stream string, v url.Values) (Query, error) {
	q := Query{Stream: stream, Text: v.Get("q"), Sort: v.Get("sort"), Cursor: v.Get("cursor")}
	var err error
	if q.After, err = int64Param(v, "after"); err != nil {
		return Query{}, err
	}
	if q.To, err = int64Param(v, "to"); err != nil {
		return Query{}, err
	}
	if q.From, err = timeParam(v, "from"); err != nil {
		return Query{}, err
	}
	if q.Until, err = timeParam(v, "until"); err != nil {
		return Query{}, err
	}
	limit, err := int64Param(v, "limit")
	if err != nil {
		return Query{}, err
	}
	q.Limit = int(min(limit, 1<<31-1))
	size, err := int64Param(v, "page_size")
	if err != nil {
		return Query{}, err
	}
	q.PageSize = int(min(size, 1<<31-1))
	if n := len(v["where"]); n > MaxFilters {
		return Query{}, tooManyFilters(n)
	}
	for _, w := range v["where"] {
		f, err := ParseFilter(w)
		if err != nil {
			return Query{}, err
		}
		q.Where = append(q.Where, f)
	}
	return q, q.check()
}

// Values returns the query as HTTP parameters, the inverse of ParseQuery
// (Stream is the caller's: it goes in the path).
func (q Query) Values() url.Values {
	v := url.Values{}
	setInt := func(name string, n int64) {
		if n != 0 {
			v.Set(name, strconv.FormatInt(n, 10))
		}
	}
	setInt("after", q.After)
	setInt("to", q.To)
	setInt("limit", int64(q.Limit))
	setInt("page_size", int64(q.PageSize))
	if !q.From.IsZero() {
		v.Set("from", q.From.UTC().Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.UTC().Format(time.RFC3339Nano))
	}
	for name, s := range map[string]string{"q": q.Text, "sort": q.Sort, "cursor": q.Cursor} {
		if s != "" {
			v.Set(name, s)
		}
	}
	for _, f := range q.Where {
		v.Add("where", f.String())
	}
	return v
}

// check refuses what is wrong whatever the kind: negative numbers, a
// window that ends before it starts, a page size out of range.
func (q *Query) check() error {
	if err := recordstore.ValidateStreamID(q.Stream); err != nil {
		return err
	}
	switch {
	case q.After < 0 || q.To < 0:
		return recordstore.Invalidf("after=%d, to=%d: seqs must not be negative", q.After, q.To)
	case q.To > 0 && q.To <= q.After:
		return recordstore.Invalidf("to=%d must be greater than after=%d", q.To, q.After)
	case q.Limit < 0:
		return recordstore.Invalidf("limit=%d must not be negative", q.Limit)
	case q.PageSize < 0 || q.PageSize > MaxPageSize:
		return recordstore.Invalidf("page_size=%d: want 1 to %d (default %d)", q.PageSize, MaxPageSize, DefaultPageSize)
	case !q.From.IsZero() && !q.Until.IsZero() && !q.Until.After(q.From):
		return recordstore.Invalidf("until=%s must be after from=%s", recordstore.FormatDatetime(q.Until), recordstore.FormatDatetime(q.From))
	}
	if len(q.Where) > MaxFilters {
		return tooManyFilters(len(q.Where))
	}
	for _, f := range q.Where {
		if f.Column == "" {
			return recordstore.Invalidf("filter %s: no column", recordstore.Quote(f.String()))
		}
	}
	return nil
}

// pageSize is the query's page size, DefaultPageSize when unset.
func (q *Query) pageSize() int {
	if q.PageSize == 0 {
		return DefaultPageSize
	}
	return q.PageSize
}

// tooManyFilters is the error of a query with n filters, over MaxFilters.
func tooManyFilters(n int) error {
	return recordstore.Invalidf("%d filters (where=): a query takes at most %d", n, MaxFilters)
}

func int64Param(v url.Values, name string) (int64, error) {
	s := v.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-") {
		return 0, recordstore.Invalidf("query parameter %s=%q: too large; want 0 to %d", name, s, int64(math.MaxInt64))
	}
	if err != nil || n < 0 {
		return 0, recordstore.Invalidf("query parameter %s=%q: want a non-negative integer", name, s)
	}
	return n, nil
}

func timeParam(v url.Values, name string) (time.Time, error) {
	s := v.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := recordstore.ParseDatetime(s)
	if err != nil {
		return time.Time{}, recordstore.Invalidf("query parameter %s=%q: want an RFC 3339 datetime like 2026-12-01T10:00:00Z", name, s)
	}
	return t, nil
}
