// FuzzParseExportOptions: the rows route's format and csv_guard
// parameters, from any query string.

package recordresults

import (
	"errors"
	"net/url"
	"testing"

	"github.com/fb46ecde/records/recordstore"
)

// FuzzParseExportOptions: any query string either gives options of a known
// format, guarded exactly when csv_guard is 1, or is ErrInvalid.
func FuzzParseExportOptions(f *testing.F) {
	for _, s := range []string{"", "format=csv&csv_guard=1", "csv_guard=0", "csv_guard=yes", "format=parquet&csv_guard=1", "format=xml", "csv_guard=1&csv_guard=0", "csv_guard=%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		o, err := parseExportOptions(v)
		if err != nil {
			if !errors.Is(err, recordstore.ErrInvalid) {
				t.Fatalf("parseExportOptions(%q): %v is not ErrInvalid", raw, err)
			}
			return
		}
		if _, err := ParseFormat(string(o.Format)); err != nil || o.Format == "" {
			t.Fatalf("parseExportOptions(%q): format %q", raw, o.Format)
		}
		if o.CSVGuard != (v.Get("csv_guard") == "1") {
			t.Fatalf("parseExportOptions(%q): CSVGuard %v", raw, o.CSVGuard)
		}
	})
}
