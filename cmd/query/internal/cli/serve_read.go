// The read side's options of query serve: the views it serves, the
// columns q searches per kind, and the cap on the rows of one response.

package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/spf13/cobra"
)

// DefaultMaxExportRows caps the rows one rows response (an export)
// carries unless --max-export-rows says otherwise.
const DefaultMaxExportRows = 1_000_000

// readFlags are serve's read-side flags.
type readFlags struct {
	views     string
	search    []string
	maxExport int
}

func (f *readFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.views, "views", "", `views file to serve ({"views":[{"name":..,"kind":..,"sql":..}]}, as query view run reads it)`)
	fl.StringArrayVar(&f.search, "search", nil, "KIND=COL[,COL...]: the columns q searches in KIND's streams (repeatable; default: every string column)")
	fl.IntVar(&f.maxExport, "max-export-rows", DefaultMaxExportRows, "the most rows one rows or view response (an export) carries, a larger one is refused or aborted, never cut cleanly; 0: no cap")
}

// check refuses, as usage errors, flag values that cannot be right
// whatever the store holds.
func (f *readFlags) check() error {
	if f.maxExport < 0 {
		return usagef("--max-export-rows %d: want 0 (no cap) or more", f.maxExport)
	}
	for _, s := range f.search {
		kind, cols, ok := strings.Cut(s, "=")
		if !ok || kind == "" || cols == "" {
			return usagef("--search %q: want KIND=COL[,COL...]", s)
		}
	}
	return nil
}

// options returns the handler options of the read side for backend b:
// a Reader with the search columns and views (each checked against the
// store's catalog: a column or kind it does not have, or a view that
// does not compile, fails serve before it serves), and the export cap.
func (f *readFlags) options(ctx context.Context, b recordstore.Backend) (*recordresults.Reader, int, error) {
	rd := recordresults.NewReader(b)
	for _, s := range f.search {
		kind, cols, _ := strings.Cut(s, "=")
		if err := rd.SetSearchColumns(ctx, kind, strings.Split(cols, ",")...); err != nil {
			return nil, 0, fmt.Errorf("--search %s: %w", s, err)
		}
	}
	if f.views != "" {
		views, err := readViewFile(f.views)
		if err != nil {
			return nil, 0, err
		}
		for _, v := range views {
			if _, err := rd.RegisterView(ctx, v); err != nil {
				return nil, 0, fmt.Errorf("--views %s: view %s: %w", f.views, v.Name, err)
			}
		}
	}
	return rd, f.maxExport, nil
}
