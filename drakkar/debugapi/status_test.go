package debugapi_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/archive"
	"github.com/fb46ecde/records/drakkar/debugapi"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// refusing fails creations and renames under a folder with EACCES while
// on is set, as a history folder on a mount refusing writes does.
type refusing struct {
	fsutil.OS
	under string
	on    atomic.Bool
}

func (f *refusing) hit(p string) error {
	if f.on.Load() && strings.HasPrefix(p, f.under) {
		return &os.PathError{Op: "write", Path: p, Err: syscall.EACCES}
	}
	return nil
}

func (f *refusing) OpenFile(name string, flag int, perm os.FileMode) (fsutil.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE) != 0 {
		if err := f.hit(name); err != nil {
			return nil, err
		}
	}
	return f.OS.OpenFile(name, flag, perm)
}

func (f *refusing) Rename(oldpath, newpath string) error {
	if err := f.hit(newpath); err != nil {
		return err
	}
	return f.OS.Rename(oldpath, newpath)
}

func (f *refusing) Mkdir(name string, perm os.FileMode) error {
	if err := f.hit(name); err != nil {
		return err
	}
	return f.OS.Mkdir(name, perm)
}

var _ = Describe("GET /api/v1/debug/status", func() {
	It("shows the backlog and why each file is in it, the last seal, the next rotation and the last archive pass", func() {
		storage, shared := tempDirs()
		fs := &refusing{under: filepath.Join(shared, "history")}
		rec, err := recorder.Open(ctx, recConfig(storage, shared, "w1"), recorder.Options{Mover: &recorder.Mover{FS: fs}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = rec.Close(context.Background()) })
		h := newAPI(debugapi.Options{Config: apiConfig(storage, shared, "w1"), Recorder: rec})
		status := func() map[string]any {
			a := get(h, debugapi.StatusPath)
			Expect(a.Status).To(Equal(200), string(a.Body))
			return a.JSON().(map[string]any)
		}
		recStatus := func() map[string]any { return status()["recorder"].(map[string]any) }

		st := status()
		Expect(st).To(HaveKeyWithValue("worker", "w1"))
		Expect(st).To(HaveKeyWithValue("peers", BeEmpty()))
		Expect(st).To(HaveKeyWithValue("archive", HaveKeyWithValue("last", BeNil())))
		Expect(st["recorder"]).To(HaveKeyWithValue("backlog", BeEmpty()))
		Expect(st["recorder"]).To(HaveKeyWithValue("last_seal", BeNil()))
		next, err := time.Parse(time.RFC3339Nano, st["recorder"].(map[string]any)["next_rotation"].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(next).To(BeTemporally(">", time.Now().Add(23*time.Hour)), "rotation every 24 h")

		fs.on.Store(true)
		rec.Record(started("a", 1, 1, nil))
		old := rec.LiveFile()
		Expect(rec.Rotate(ctx)).To(Succeed())
		Eventually(func() []any { return recStatus()["backlog"].([]any) }, "30s", "20ms").Should(ConsistOf(And(
			HaveKeyWithValue("path", old), HaveKeyWithValue("reason", "publish"), HaveKeyWithValue("sealed", true),
			HaveKeyWithValue("error", Not(BeEmpty())), HaveKeyWithValue("failed_at", Not(BeEmpty())))))
		Expect(recStatus()["last_seal"]).To(And(HaveKeyWithValue("ok", false), HaveKeyWithValue("stage", "publish"),
			HaveKeyWithValue("path", old)))

		fs.on.Store(false)
		Expect(rec.Rotate(ctx)).To(Succeed()) // wakes the background job
		Eventually(func() []any { return recStatus()["backlog"].([]any) }, "30s", "20ms").Should(BeEmpty())
		Eventually(func() any { return recStatus()["last_seal"] }, "30s", "20ms").Should(And(HaveKeyWithValue("ok", true),
			HaveKeyWithValue("destination", HavePrefix(filepath.Join(shared, "history", "search_hot")+string(filepath.Separator)))))

		_, err = archive.Pass(ctx, archive.DefaultConfig(), archive.Options{Shared: shared, Cluster: cluster, Worker: "w1"})
		Expect(err).NotTo(HaveOccurred())
		Expect(status()["archive"]).To(HaveKeyWithValue("last", HaveKeyWithValue("report", HaveKeyWithValue("locked", true))))
	})
})
