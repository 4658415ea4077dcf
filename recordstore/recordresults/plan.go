// Planning a Query: checking it against the stream's kind and turning it
// into the recordstore.RowQuery a backend runs, then fetching it a page at
// a time, by the backend's RowQuerier or by Scan and Match.

package recordresults

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fb46ecde/records/recordstore"
)

// plan is a checked query and where its read has got to.
type plan struct {
	stream string
	kind   recordstore.Kind
	rq     recordstore.RowQuery
	gen    int64  // the generation read (0 before the first fetch)
	fp     uint64 // the query's fingerprint (see fingerprint)
	done   bool   // the read is exhausted
}

// plan checks q against its stream's kind and returns its plan. Every
// error is ErrInvalid but a missing stream or kind (ErrNotFound) and the
// store's own.
func (r *Reader) plan(ctx context.Context, q Query) (*plan, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	m, err := r.b.Meta(ctx, q.Stream)
	if err != nil {
		return nil, err
	}
	k, err := r.b.Kind(ctx, m.Kind)
	if err != nil {
		return nil, fmt.Errorf("read kind %s of stream %s: %w", m.Kind, q.Stream, err)
	}
	p := &plan{stream: q.Stream, kind: k, fp: fingerprint(q)}
	p.rq = recordstore.RowQuery{After: q.After, To: q.To, From: q.From, Until: q.Until, Text: q.Text}
	if err := p.timeWindow(); err != nil {
		return nil, err
	}
	if q.Text != "" {
		if p.rq.Search = r.searchColumns(&k); len(p.rq.Search) == 0 {
			return nil, recordstore.Invalidf("q=%s: kind %s has no search columns (string columns, or ones named with SetSearchColumns)", recordstore.Quote(q.Text), k.Name)
		}
	}
	for _, f := range q.Where {
		c, err := condition(&k, f)
		if err != nil {
			return nil, err
		}
		p.rq.Where = append(p.rq.Where, c)
	}
	if err := p.sort(q.Sort); err != nil {
		return nil, err
	}
	if q.Cursor != "" {
		if err := p.resume(q.Cursor); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// timeWindow sets the time column when the query has a time window.
func (p *plan) timeWindow() error {
	if p.rq.From.IsZero() && p.rq.Until.IsZero() {
		return nil
	}
	tc := p.kind.TimeColumn
	if c, ok := p.kind.Column(tc); !ok || c.Type != recordstore.TypeDatetime {
		return recordstore.Invalidf("from/until: kind %s has no datetime time column (timeColumn)", p.kind.Name)
	}
	p.rq.TimeColumn = tc
	return nil
}

// sort sets the query's order: "" or "_seq" (seq), "col" or "-col" for
// a sortable column (SortColumns).
func (p *plan) sort(s string) error {
	col, desc := strings.CutPrefix(s, "-")
	if col == "" && s == "" {
		col = "_seq"
	}
	if !slices.Contains(SortColumns(&p.kind), col) {
		return recordstore.Invalidf("sort=%s: kind %s sorts only by %s (an indexed column, '-' for descending)",
			recordstore.Quote(s), p.kind.Name, strings.Join(SortColumns(&p.kind), ", "))
	}
	p.rq.Sort, p.rq.Desc = col, desc
	return nil
}

// SortColumns returns the columns a query of kind k may sort by: _seq, the
// first column of its key and of each declared index.
func SortColumns(k *recordstore.Kind) []string {
	out := []string{"_seq"}
	add := func(cols []string) {
		if len(cols) > 0 && !slices.Contains(out, cols[0]) {
			out = append(out, cols[0])
		}
	}
	add(k.Key)
	for _, idx := range k.Indexes {
		add(idx)
	}
	return out
}

// condition checks filter f against kind k and returns it with its value
// in the column's reader form.
func condition(k *recordstore.Kind, f Filter) (recordstore.Condition, error) {
	col, ok := k.Column(f.Column)
	if !ok && strings.EqualFold(f.Column, "_seq") {
		return recordstore.Condition{}, recordstore.Invalidf("filter %s: _seq is not a column to filter; select seqs with after= and to= (CLI: --after, --to)", recordstore.Quote(f.String()))
	}
	if !ok {
		return recordstore.Condition{}, recordstore.Invalidf("filter %s: kind %s has no column %s", recordstore.Quote(f.String()), k.Name, recordstore.Quote(f.Column))
	}
	c := recordstore.Condition{Column: col.Name, Type: col.Type, Op: f.Op, Value: f.Value}
	bad := func(why string) error {
		return recordstore.Invalidf("filter %s: %s", recordstore.Quote(f.String()), why)
	}
	switch f.Op {
	case recordstore.OpContains:
		if col.Type != recordstore.TypeString && col.Type != recordstore.TypeJSON {
			return c, bad("~ (contains) needs a string or json column; " + f.Column + " is " + string(col.Type))
		}
		return c, nil
	case recordstore.OpEq, recordstore.OpNe:
	case recordstore.OpLt, recordstore.OpLe, recordstore.OpGt, recordstore.OpGe:
		if col.Type == recordstore.TypeBool {
			return c, bad("a bool column takes = and != only")
		}
	default:
		return c, bad("unknown operator " + recordstore.Quote(string(f.Op)) + "; want one of = != < <= > >= ~")
	}
	if col.Type == recordstore.TypeJSON {
		return c, bad("a json column takes ~ (contains) only")
	}
	v, err := filterValue(col, f.Value)
	if err != nil {
		return c, bad(recordstore.Message(err))
	}
	c.Value = v
	return c, nil
}

// filterValue reads a filter's value text as the column's type, in the
// reader form.
func filterValue(col recordstore.Column, s string) (any, error) {
	switch col.Type {
	case recordstore.TypeBool:
		switch s {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, recordstore.Invalidf("%s is not a bool: want true or false", recordstore.Quote(s))
	case recordstore.TypeInteger:
		v, err := recordstore.ParseIntegerText(s)
		if err != nil {
			return nil, err
		}
		n, ok := v.(int64)
		if !ok {
			return nil, recordstore.Invalidf("%s is not an integer", recordstore.Quote(s))
		}
		return n, nil
	case recordstore.TypeNumber:
		f, err := recordstore.ParseNumberText(s)
		if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			// strconv reads "NaN", "Inf", "infinity" in any case; no row
			// holds one (Normalize refuses them), so no filter compares to one.
			return nil, recordstore.Invalidf("%s is not a finite number: rows hold no NaN or infinity", recordstore.Quote(s))
		}
		return f, err
	case recordstore.TypeDatetime:
		return recordstore.ParseDatetime(s)
	}
	return s, nil
}

// fetch returns up to n more rows of the read (n > 0), and whether more may
// follow, and moves the cursor past them. The first fetch pins the read to
// the generation it met and to that generation's last seq, so that rows
// appended later do not enter it.
func (p *plan) fetch(ctx context.Context, b recordstore.Backend, n int) ([]recordstore.Record, bool, error) {
	if p.done {
		return nil, false, nil
	}
	recs, m, err := p.run(ctx, b, n+1)
	if err != nil {
		return nil, false, err
	}
	if p.gen != 0 && m.Generation != p.gen {
		return nil, false, recordstore.Invalidf("stream %s was recreated (generation %d, the read began in %d): start the read again", p.stream, m.Generation, p.gen)
	}
	p.gen = m.Generation
	if p.rq.To == 0 || p.rq.To > m.HighSeq {
		p.rq.To = m.HighSeq
		if p.rq.To <= p.rq.After {
			p.done = true
			return nil, false, nil
		}
	}
	more := len(recs) > n
	if more {
		recs = recs[:n]
	}
	if len(recs) > 0 {
		last := recs[len(recs)-1]
		p.rq.HasCursor, p.rq.CursorSeq = true, last.Seq
		if !p.rq.SortsBySeq() {
			p.rq.CursorValue = last.Values[p.rq.Sort]
		}
	}
	p.done = !more
	return recs, more, nil
}

// run reads up to limit rows after the cursor, by the backend's
// RowQuerier, or by Scan and Match (seq order only) when it has none.
func (p *plan) run(ctx context.Context, b recordstore.Backend, limit int) ([]recordstore.Record, recordstore.Meta, error) {
	rq := p.rq
	rq.Limit = limit
	if qr, ok := b.(recordstore.RowQuerier); ok {
		return qr.QueryRows(ctx, p.stream, rq)
	}
	if !rq.SortsBySeq() || rq.Desc {
		return nil, recordstore.Meta{}, recordstore.Errorf(recordstore.ErrUnsupported, "this store sorts by _seq ascending only")
	}
	m, err := b.Meta(ctx, p.stream)
	if err != nil {
		return nil, m, err
	}
	after := max(rq.After, rq.CursorSeq)
	var out []recordstore.Record
	for len(out) < limit {
		page, err := b.Scan(ctx, p.stream, recordstore.ScanOptions{After: after, Limit: recordstore.TailPage})
		if err != nil {
			return nil, m, err
		}
		for _, rec := range page {
			if rq.To > 0 && rec.Seq > rq.To || rec.Seq > m.HighSeq {
				return out, m, nil
			}
			if rq.Match(rec) {
				if out = append(out, rec); len(out) == limit {
					break
				}
			}
		}
		if len(page) < recordstore.TailPage {
			break
		}
		after = page[len(page)-1].Seq
	}
	return out, m, nil
}
