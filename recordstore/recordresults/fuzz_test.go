// Fuzz targets of the query model's decoders: query parameters, the
// filters checked against a kind, and the cursor text a client sends back.

package recordresults_test

import (
	"context"
	"errors"
	"math"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
)

// FuzzParseQuery: any query string either parses or is ErrInvalid, and a
// parsed query written back with Values parses to the same parameters.
func FuzzParseQuery(f *testing.F) {
	f.Add("after=1&to=9&q=web&where=attempts%3E%3D3&where=host~db&sort=-at&page_size=10")
	f.Add("from=2026-12-01T00:00:00Z&until=2026-12-02T00:00:00%2B02:00&limit=5")
	f.Add("limit=99999999999999999999&after=9223372036854775807")
	f.Add("where=_seq%3E5&where=score%3ENaN&where=score%3C-Infinity")
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := recordresults.ParseQuery("s", v)
		if err != nil {
			if !errors.Is(err, recordstore.ErrInvalid) {
				t.Fatalf("ParseQuery(%q): %v is not invalid", raw, err)
			}
			return
		}
		again, err := recordresults.ParseQuery("s", q.Values())
		if err != nil {
			t.Fatalf("ParseQuery of %q written back as %q: %v", raw, q.Values().Encode(), err)
		}
		if a, b := q.Values().Encode(), again.Values().Encode(); a != b {
			t.Fatalf("%q parsed as %q, then as %q", raw, a, b)
		}
	})
}

// FuzzCursor: any cursor text given to a paged read either continues it
// or is ErrInvalid; never another failure.
func FuzzCursor(f *testing.F) {
	ctx := context.Background()
	st, err := records.Open(ctx, filepath.Join(f.TempDir(), "records.sqlite"), records.Options{SweepInterval: -1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = st.Close() })
	k := recordstore.Kind{Name: "k", Columns: []recordstore.Column{{Name: "n", Type: recordstore.TypeInteger}, {Name: "s", Type: recordstore.TypeString}}, Indexes: [][]string{{"n"}, {"s"}}}
	if _, err := st.Backend().DeclareKind(ctx, k); err != nil {
		f.Fatal(err)
	}
	rows := make([]recordstore.Row, 20)
	for i := range rows {
		rows[i] = recordstore.Row{"n": int64(i % 7), "s": string(rune('a' + i%5))}
	}
	if _, err := st.Backend().Append(ctx, "c", "k", rows); err != nil {
		f.Fatal(err)
	}
	rd := recordresults.NewReader(st.Backend())
	for _, sort := range []string{"", "n", "-s"} {
		p, err := rd.Page(ctx, recordresults.Query{Stream: "c", Sort: sort, PageSize: 3})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(sort, p.Next)
	}
	f.Fuzz(func(t *testing.T, sort, cursor string) {
		if sort != "" && sort != "n" && sort != "-s" {
			return
		}
		_, err := rd.Page(ctx, recordresults.Query{Stream: "c", Sort: sort, PageSize: 3, Cursor: cursor})
		if err != nil && !errors.Is(err, recordstore.ErrInvalid) {
			t.Fatalf("cursor %q (sort %q): %v is not invalid", cursor, sort, err)
		}
	})
}

// FuzzFilter: any list of filters given to a read of a kind with a column
// of every type is either run or ErrInvalid — never another failure, such
// as SQL the store refuses — and a number filter that runs compares to a
// finite number.
func FuzzFilter(f *testing.F) {
	ctx := context.Background()
	st, err := records.Open(ctx, filepath.Join(f.TempDir(), "records.sqlite"), records.Options{SweepInterval: -1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = st.Close() })
	k := recordstore.Kind{Name: "k", Columns: []recordstore.Column{
		{Name: "n", Type: recordstore.TypeInteger}, {Name: "x", Type: recordstore.TypeNumber},
		{Name: "s", Type: recordstore.TypeString}, {Name: "b", Type: recordstore.TypeBool},
		{Name: "at", Type: recordstore.TypeDatetime}, {Name: "doc", Type: recordstore.TypeJSON}}}
	if _, err := st.Backend().DeclareKind(ctx, k); err != nil {
		f.Fatal(err)
	}
	if _, err := st.Backend().Append(ctx, "c", "k", []recordstore.Row{{"n": 1, "x": 1.5, "s": "a", "b": true}}); err != nil {
		f.Fatal(err)
	}
	rd := recordresults.NewReader(st.Backend())
	for _, w := range []string{"x>NaN", "x<-Inf", "x=+infinity", "x>=1e308", "n>3", "_seq>5", "s~a", "at<2026-12-01T00:00:00Z", "b=true"} {
		f.Add(w, 1)
	}
	f.Add("n>0", maxFilters+1)
	f.Fuzz(func(t *testing.T, where string, n int) {
		if n < 1 || n > 2*maxFilters {
			return
		}
		fl, err := recordresults.ParseFilter(where)
		if err != nil {
			return
		}
		q := recordresults.Query{Stream: "c", Where: make([]recordresults.Filter, n)}
		for i := range q.Where {
			q.Where[i] = fl
		}
		_, err = rd.Page(ctx, q)
		if err != nil && !errors.Is(err, recordstore.ErrInvalid) {
			t.Fatalf("%d filters %q: %v is not invalid", n, where, err)
		}
		if err == nil && fl.Column == "x" {
			if v, perr := strconv.ParseFloat(fl.Value, 64); perr == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
				t.Fatalf("filter %q on a number column ran", where)
			}
		}
		if err == nil && n > maxFilters {
			t.Fatalf("%d filters ran; at most %d are taken", n, maxFilters)
		}
	})
}

// maxFilters is recordresults.MaxFilters.
const maxFilters = recordresults.MaxFilters
