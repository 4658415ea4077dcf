// The own files beyond the live one: a recorder whose history folder
// refuses writes keeps its rotated files in its backlog, and the
// Databases page and the trace both see them.

package debugapi_test

import (
	"context"
	"os"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/debugapi"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// refusingFS fails every write under a folder with EACCES.
type refusingFS struct {
	fsutil.FS
	under string
}

func (f refusingFS) refuse(paths ...string) error {
	for _, p := range paths {
		if strings.HasPrefix(p, f.under) {
			return &os.PathError{Op: "write", Path: p, Err: syscall.EACCES}
		}
	}
	return nil
}

func (f refusingFS) OpenFile(name string, flag int, perm os.FileMode) (fsutil.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE) != 0 {
		if err := f.refuse(name); err != nil {
			return nil, err
		}
	}
	return f.FS.OpenFile(name, flag, perm)
}

func (f refusingFS) Rename(o, n string) error {
	if err := f.refuse(o, n); err != nil {
		return err
	}
	return f.FS.Rename(o, n)
}

func (f refusingFS) Mkdir(name string, perm os.FileMode) error {
	if err := f.refuse(name); err != nil {
		return err
	}
	return f.FS.Mkdir(name, perm)
}

var _ = Describe("own files in the backlog", func() {
	It("lists the live file and the backlog with their statistics, and traces through both", func() {
		storage, shared := tempDirs()
		mover := &recorder.Mover{FS: refusingFS{FS: fsutil.OS{}, under: shared}}
		rec, err := recorder.Open(ctx, recConfig(storage, shared, "w1"), recorder.Options{Mover: mover})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = rec.Close(context.Background()) })
		rec.Record(started("old", 7, 70, nil))
		rec.Record(started("old2", 7, 71, nil))
		Expect(rec.Rotate(ctx)).To(Succeed())
		rec.Record(started("new", 7, 70, nil))
		Expect(rec.Flush(ctx)).To(Succeed())
		Expect(rec.OwnClosedFiles()).To(HaveLen(1))

		h := newAPI(debugapi.Options{Config: apiConfig(storage, shared, "w1"), Recorder: rec})
		own := get(h, "/api/v1/debug/databases").JSON().(map[string]any)["own"].([]any)
		Expect(own).To(HaveLen(2))
		kinds := map[string]float64{}
		for _, o := range own {
			m := o.(map[string]any)
			kinds[m["kind"].(string)] = m["stats"].(map[string]any)["event_count"].(float64)
		}
		Expect(kinds).To(Equal(map[string]float64{"live": 1, "backlog": 2}))

		a := get(h, "/api/v1/debug/trace?partition=7&offset=70")
		Expect(a.Status).To(Equal(200))
		Expect(field(a.JSON(), "task_id")).To(Equal([]any{"old", "new"}))
		Expect(a.Header.Get("X-Drakkar-Trace-Files-Searched")).To(Equal("2"))
	})
})
