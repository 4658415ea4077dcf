// Fuzz targets of the query model's decoders: query parameters, and the
// cursor text a client sends back.

package recordresults_test

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
)

// FuzzParseQuery: any query string either parses or is ErrInvalid, and a
// parsed query written back with Values parses to the same parameters.
func FuzzParseQuery(f *testing.F) {
	f.Add("after=1&to=9&q=web&where=attempts%3E%3D3&where=host~db&sort=-at&page_size=10")
	f.Add("from=2026-12-01T00:00:00Z&until=2026-12-02T00:00:00%2B02:00&limit=5")
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
	st, err := recordresults.Open(ctx, filepath.Join(f.TempDir(), "records.sqlite"), recordresults.Options{SweepInterval: -1})
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
