// Views: named SQL over a stream window, registered on a Reader (checked
// and compiled then), run from Go, HTTP and the CLI.

package recordresults

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/fb46ecde/records/recordstore"
)

// View is named SQL over a stream window: one SELECT reading the common
// table expression "rows" — the rows of one stream of Kind in the window,
// as the columns "_seq" and the kind's columns — e.g.
//
//	SELECT state, count(*) AS n FROM rows GROUP BY state ORDER BY n DESC
//
// Its JSON shape is the one a views file holds ({"views":[...]}).
type View struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	SQL  string `json:"sql"`
	// Columns are the result columns, known once registered.
	Columns []string `json:"columns,omitempty"`
}

// ViewFile is the JSON document of views the CLI reads: {"views": [...]}.
type ViewFile struct {
	Views []View `json:"views"`
}

var viewNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,62}$`)

// RegisterView checks v and compiles its SQL against its kind, and adds it
// to the Reader under its name (replacing a view of that name). A bad
// name, SQL that is not one read-only SELECT or does not compile are
// ErrInvalid; an undeclared kind ErrNotFound; a backend that cannot run
// SQL ErrUnsupported. It returns the view with its columns.
func (r *Reader) RegisterView(ctx context.Context, v View) (View, error) {
	if !viewNameRE.MatchString(v.Name) {
		return View{}, recordstore.Invalidf("view name %s: want ^[A-Za-z][A-Za-z0-9_-]{0,62}$", recordstore.Quote(v.Name))
	}
	vr, ok := r.b.(recordstore.ViewRunner)
	if !ok {
		return View{}, recordstore.Errorf(recordstore.ErrUnsupported, "view %s: this store does not run SQL views", v.Name)
	}
	if err := recordstore.ValidateKindName(v.Kind); err != nil {
		return View{}, fmt.Errorf("view %s: %w", v.Name, err)
	}
	cols, err := vr.CheckView(ctx, v.Kind, v.SQL)
	if err != nil {
		return View{}, fmt.Errorf("view %s: %w", v.Name, err)
	}
	v.Columns = cols
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.views[v.Name] = &v
	return v, nil
}

// Views returns the registered views, sorted by name.
func (r *Reader) Views() []View {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]View, 0, len(r.mu.views))
	for _, v := range r.mu.views {
		out = append(out, *v)
	}
	slices.SortFunc(out, func(a, b View) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ViewQuery is the window a view runs over: stream, After < seq ≤ To (To
// 0: no bound), at most Limit result rows (0: all).
type ViewQuery struct {
	Stream string
	After  int64
	To     int64
	Limit  int
}

// view returns the registered view name (ErrNotFound when none).
func (r *Reader) view(name string) (View, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.mu.views[name]
	if !ok {
		return View{}, recordstore.Errorf(recordstore.ErrNotFound, "view %s is not registered", recordstore.Quote(name))
	}
	return *v, nil
}

// RunView runs view name over q's window and calls fn with each result row,
// its values by column (int64, float64, string or nil; blobs as strings).
func (r *Reader) RunView(ctx context.Context, name string, q ViewQuery, fn func(cols []string, vals []any) error) error {
	v, err := r.view(name)
	if err != nil {
		return err
	}
	if q.After < 0 || q.To < 0 || q.Limit < 0 || q.To > 0 && q.To <= q.After {
		return recordstore.Invalidf("view %s: after=%d, to=%d, limit=%d: want non-negative numbers and to > after", name, q.After, q.To, q.Limit)
	}
	vr, ok := r.b.(recordstore.ViewRunner)
	if !ok {
		return recordstore.Errorf(recordstore.ErrUnsupported, "view %s: this store does not run SQL views", name)
	}
	return vr.RunView(ctx, v.Kind, v.SQL, q.Stream, q.After, q.To, q.Limit, func(vals []any) error {
		for i, x := range vals {
			if b, ok := x.([]byte); ok {
				vals[i] = string(b)
			}
		}
		return fn(v.Columns, vals)
	})
}

// ExportView writes the rows of view name over q's window to w: NDJSON
// (one object per row, keys in column order) or CSV (a header line of the
// columns); Parquet is ErrUnsupported (a view's column types are not
// declared). It returns the rows written; a failure after the first row
// leaves w with a partial output.
func (r *Reader) ExportView(ctx context.Context, w io.Writer, name string, q ViewQuery, f Format) (int64, error) {
	return r.ExportViewWith(ctx, w, name, q, ExportOptions{Format: f})
}

// ExportViewWith is ExportView with options: the format and the CSV guard
// (ExportOptions.CSVGuard: a text result cell a spreadsheet would take for
// a formula gets a "'" in front; integer, real and null cells never do).
// Progress is not called. What is in w on failure is as ExportView says.
func (r *Reader) ExportViewWith(ctx context.Context, w io.Writer, name string, q ViewQuery, o ExportOptions) (int64, error) {
	return r.exportView(ctx, w, name, q, o, nil)
}

// exportView writes the rows of view name as ExportViewWith does. When
// over is not nil it is asked, before each row is written, whether the
// row is one too many (given the rows written so far); if so, exportView
// stops with over's error.
func (r *Reader) exportView(ctx context.Context, w io.Writer, name string, q ViewQuery, o ExportOptions, over func(n int64) error) (int64, error) {
	f := o.format()
	if f == FormatParquet {
		return 0, recordstore.Errorf(recordstore.ErrUnsupported, "view %s: parquet export of a view is not supported; use ndjson or csv", name)
	}
	var (
		n      int64
		cw     *csv.Writer
		line   []string
		buf    bytes.Buffer
		header bool
	)
	if f == FormatCSV {
		cw = csv.NewWriter(w)
	}
	err := r.RunView(ctx, name, q, func(cols []string, vals []any) error {
		if over != nil {
			if err := over(n); err != nil {
				return err
			}
		}
		n++
		if cw != nil {
			if !header {
				header = true
				if err := cw.Write(cols); err != nil {
					return err
				}
				line = make([]string, len(cols))
			}
			for i, v := range vals {
				line[i] = csvCell(v, o.CSVGuard)
			}
			return cw.Write(line)
		}
		buf.Reset()
		buf.WriteByte('{')
		for i, c := range cols {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, _ := json.Marshal(c)
			buf.Write(k)
			buf.WriteByte(':')
			val, err := json.Marshal(vals[i])
			if err != nil {
				return fmt.Errorf("view %s column %s: %w", name, c, err)
			}
			buf.Write(val)
		}
		buf.WriteString("}\n")
		_, err := w.Write(buf.Bytes())
		return err
	})
	if cw != nil {
		if err == nil && !header {
			v, _ := r.view(name)
			err = cw.Write(v.Columns)
		}
		cw.Flush()
		if err == nil {
			err = cw.Error()
		}
	}
	return n, err
}

// checkViewRun finds what would make a run of view name over q fail before
// its first row: an unknown view, a bad window, a missing stream or one of
// another kind.
func (r *Reader) checkViewRun(ctx context.Context, name string, q ViewQuery) error {
	v, err := r.view(name)
	if err != nil {
		return err
	}
	if q.After < 0 || q.To < 0 || q.Limit < 0 || q.To > 0 && q.To <= q.After {
		return recordstore.Invalidf("view %s: after=%d, to=%d, limit=%d: want non-negative numbers and to > after", name, q.After, q.To, q.Limit)
	}
	m, err := r.b.Meta(ctx, q.Stream)
	if err != nil {
		return err
	}
	if m.Kind != v.Kind {
		return recordstore.Invalidf("stream %s is of kind %s; view %s reads kind %s", q.Stream, m.Kind, name, v.Kind)
	}
	return nil
}
