// Fuzz targets of drakkar/archive (listed in FUZZ_TARGETS, seeds in
// testdata/fuzz).

package archive_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fb46ecde/records/drakkar/archive"
	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// FuzzFileStart: a name that parses is exactly the name its worker writes
// for its start time, and the start falls in its own window.
func FuzzFileStart(f *testing.F) {
	f.Add("w1-2026-10-13__08_00_00.db", int64(3600))
	f.Fuzz(func(t *testing.T, name string, widthSec int64) {
		start, ok := archive.FileStart(name)
		if !ok {
			return
		}
		worker := name[:len(name)-len("-2026-10-13__08_00_00.db")]
		if strings.HasPrefix(name, ".") || dbfiles.RecorderFileName(worker, start) != name {
			t.Fatalf("%q parsed to %v, which worker %q writes as %q", name, start, worker, dbfiles.RecorderFileName(worker, start))
		}
		if widthSec <= 0 || widthSec > 1<<32 {
			return
		}
		w := archive.WindowOf(start, time.Duration(widthSec)*time.Second)
		if start.Before(w.From) || !start.Before(w.To) {
			t.Fatalf("%v is outside its window %v–%v", start, w.From, w.To)
		}
	})
}
