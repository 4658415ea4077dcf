// Row queries: a resolved read of one stream — seq and time windows, a
// substring search, column conditions, a sort and a cursor — that a
// backend may run itself (RowQuerier) and that Match evaluates in Go.

package recordstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"time"
)

// CondOp is the operator of a column condition.
type CondOp string

// The condition operators. Comparisons follow SQL: a null column satisfies
// none of them.
const (
	OpEq       CondOp = "="
	OpNe       CondOp = "!="
	OpLt       CondOp = "<"
	OpLe       CondOp = "<="
	OpGt       CondOp = ">"
	OpGe       CondOp = ">="
	OpContains CondOp = "~" // case-insensitive (ASCII) substring of the column's text
)

// Condition is one column condition of a RowQuery. Value is in the reader
// form of the column's type (see DecodeValue): int64, float64, bool,
// string, or time.Time; a string for OpContains.
type Condition struct {
	Column string
	Type   ColumnType
	Op     CondOp
	Value  any
}

// RowQuery is a checked read of one stream's current generation: the rows
// with After < seq ≤ To (To 0: no bound), whose TimeColumn lies in
// [From, Until) when those are set, that contain Text (ASCII
// case-insensitively) in one of the Search columns when Text is not "",
// and that satisfy every condition of Where; ordered by Sort ("" or
// "_seq": the seq) ascending, or descending when Desc, ties broken by seq
// in the same direction; starting strictly after the cursor position
// (CursorValue, CursorSeq) in that order when HasCursor; at most Limit
// rows (0: no cap). Callers (recordresults) check it against the kind
// before a backend sees it.
type RowQuery struct {
	After, To   int64
	TimeColumn  string
	From, Until time.Time // zero: no bound
	Text        string
	Search      []string
	Where       []Condition
	Sort        string
	Desc        bool
	HasCursor   bool
	CursorValue any // the sort column's value (reader form) of the last row returned; nil for null
	CursorSeq   int64
	Limit       int
}

// RowQuerier is the optional capability of a backend that runs a RowQuery
// itself (sqlite.Backend does, in SQL). It returns the matching rows and
// the stream's Meta read in the same snapshot (ErrNotFound when the stream
// does not exist). Backends without it are read through Scan and Match.
type RowQuerier interface {
	QueryRows(ctx context.Context, stream string, q RowQuery) ([]Record, Meta, error)
}

// SortsBySeq reports whether the query is ordered by seq alone.
func (q *RowQuery) SortsBySeq() bool { return q.Sort == "" || q.Sort == "_seq" }

// Match reports whether rec satisfies the query's windows, search and
// conditions (not its cursor, sort or limit).
func (q *RowQuery) Match(rec Record) bool {
	if rec.Seq <= q.After || q.To > 0 && rec.Seq > q.To {
		return false
	}
	if q.TimeColumn != "" && (!q.From.IsZero() || !q.Until.IsZero()) {
		t, ok := rec.Values[q.TimeColumn].(time.Time)
		if !ok || !q.From.IsZero() && t.Before(q.From) || !q.Until.IsZero() && !t.Before(q.Until) {
			return false
		}
	}
	if q.Text != "" && !q.matchText(rec) {
		return false
	}
	for _, c := range q.Where {
		if !c.Match(rec.Values[c.Column]) {
			return false
		}
	}
	return true
}

func (q *RowQuery) matchText(rec Record) bool {
	needle := FoldASCII(q.Text)
	for _, col := range q.Search {
		if s, ok := textOf(rec.Values[col]); ok && strings.Contains(FoldASCII(s), needle) {
			return true
		}
	}
	return false
}

// AfterCursor reports whether rec comes strictly after the cursor position in
// the query's order (always true without a cursor).
func (q *RowQuery) AfterCursor(rec Record) bool {
	if !q.HasCursor {
		return true
	}
	c := 0
	if !q.SortsBySeq() {
		c = CompareValues(rec.Values[q.Sort], q.CursorValue)
	}
	if c == 0 {
		c = cmp.Compare(rec.Seq, q.CursorSeq)
	}
	if q.Desc {
		return c < 0
	}
	return c > 0
}

// Match reports whether v (reader form) satisfies the condition.
func (c Condition) Match(v any) bool {
	if v == nil {
		return false
	}
	if c.Op == OpContains {
		s, ok := textOf(v)
		want, _ := c.Value.(string)
		return ok && strings.Contains(FoldASCII(s), FoldASCII(want))
	}
	r := CompareValues(v, c.Value)
	switch c.Op {
	case OpEq:
		return r == 0
	case OpNe:
		return r != 0
	case OpLt:
		return r < 0
	case OpLe:
		return r <= 0
	case OpGt:
		return r > 0
	case OpGe:
		return r >= 0
	}
	return false
}

// CompareValues orders two reader-form values of one column as SQLite
// orders their stored forms: null first, then numbers (integers and
// floats together, bools as 0 and 1), then text (datetimes in their stored
// form), byte by byte.
func CompareValues(a, b any) int {
	ra, rb := sqlRank(a), sqlRank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch ra {
	case 0:
		return 0
	case 1:
		return compareNumbers(a, b)
	}
	sa, _ := textOf(a)
	sb, _ := textOf(b)
	return strings.Compare(sa, sb)
}

// sqlRank is the storage class order of SQLite: null, number, text.
func sqlRank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case int64, float64, bool:
		return 1
	}
	return 2
}

func compareNumbers(a, b any) int {
	ia, aInt := intOf(a)
	ib, bInt := intOf(b)
	if aInt && bInt {
		return cmp.Compare(ia, ib)
	}
	return cmp.Compare(floatOf(a), floatOf(b))
}

func intOf(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case bool:
		if n {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func floatOf(v any) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	i, _ := intOf(v)
	return float64(i)
}

// textOf is the stored text of a text-class value: a string, a datetime in
// its stored form, a json value's compact text.
func textOf(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case time.Time:
		return FormatDatetime(s), true
	case json.RawMessage:
		return string(s), true
	case []byte:
		return string(s), true
	}
	return "", false
}

// FoldASCII lowers ASCII letters only, as SQLite's lower() and LIKE do
// without ICU: a search is case-insensitive for A-Z alone.
func FoldASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// StoredValue is the value SQLite stores for a reader-form value:
// datetimes as their stored text, bools as 0 or 1, json as its text.
func StoredValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		return FormatDatetime(x)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case json.RawMessage:
		return string(bytes.TrimSpace(x))
	}
	return v
}

// ViewRunner is the optional capability of a backend that runs named SQL
// over a stream window (sqlite.Backend does). A view's SQL is one SELECT
// that reads a common table expression named "rows": the rows of one
// stream of kind with After < seq ≤ To, as the columns "_seq" and the
// kind's columns.
type ViewRunner interface {
	// CheckView compiles sql as a view of kind and returns its result
	// columns; SQL that is not a single read-only SELECT, or that does not
	// compile, is ErrInvalid.
	CheckView(ctx context.Context, kind, sql string) ([]string, error)
	// RunView runs a checked view over stream's window (to 0: no bound)
	// and calls fn with each result row's values (SQLite's: int64,
	// float64, string, []byte or nil), at most limit rows (0: all). A
	// stream of another kind is ErrInvalid.
	RunView(ctx context.Context, kind, sql, stream string, after, to int64, limit int, fn func(vals []any) error) error
}

// SearchIndexer is the optional capability of a backend that can index a
// kind's search columns for q (sqlite.Backend: an FTS5 trigram index).
// Queries give the same rows with or without the index; only their speed
// differs.
type SearchIndexer interface {
	// CreateSearchIndex indexes cols of kind (replacing an index of
	// other columns) and fills the index from the stored rows.
	CreateSearchIndex(ctx context.Context, kind string, cols []string) error
}
