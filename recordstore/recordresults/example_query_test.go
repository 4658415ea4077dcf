// Example of the query model from Go: a filtered, sorted, paged read.

package recordresults_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
)

func ExampleReader_Page() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "records-example-")
	defer os.RemoveAll(dir)
	st, err := records.Open(ctx, filepath.Join(dir, "records.sqlite"), records.Options{SweepInterval: -1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	jobs := recordstore.Kind{Name: "jobs", Columns: []recordstore.Column{
		{Name: "host", Type: recordstore.TypeString},
		{Name: "tries", Type: recordstore.TypeInteger},
	}, Indexes: [][]string{{"tries"}}}
	_, _ = st.Backend().DeclareKind(ctx, jobs)
	_, _ = st.Backend().Append(ctx, "j", "jobs", []recordstore.Row{
		{"host": "web-1", "tries": 3}, {"host": "db-1", "tries": 5}, {"host": "Web-2", "tries": 1}, {"host": "web-3", "tries": 4},
	})

	rd := recordresults.NewReader(st.Backend())
	where, _ := recordresults.ParseFilter("tries>=2")
	q := recordresults.Query{Stream: "j", Text: "WEB", Where: []recordresults.Filter{where}, Sort: "-tries", PageSize: 1}
	for {
		page, err := rd.Page(ctx, q)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range page.Rows {
			fmt.Println(r.Seq, r.Values["host"], r.Values["tries"])
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	// Output:
	// 4 web-3 4
	// 1 web-1 3
}
