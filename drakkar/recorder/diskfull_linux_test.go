//go:build linux

// The flight recorder on a file system that fills up: a tmpfs of a few
// MiB mounted for each spec (this needs root; elsewhere the specs are
// skipped), filled by a file the spec then removes, as an operator frees
// space.

package recorder_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/recordstore"
)

// mountTmpfs mounts a tmpfs of size (mount's size= option) on a new
// folder, unmounted (and the folder removed) when the spec ends; it skips
// the spec when this process may not mount.
func mountTmpfs(size string) string {
	dir, err := os.MkdirTemp("", "recorder-full-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.Remove, dir)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		Skip("cannot mount a tmpfs here (needs root): " + err.Error())
	}
	DeferCleanup(syscall.Unmount, dir, syscall.MNT_DETACH)
	return dir
}

// fill writes a file in dir until the file system has no space left, then
// gives back leave bytes of it; it returns the file's path.
func fill(dir string, leave int64) string {
	path := filepath.Join(dir, "filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	chunk := make([]byte, 16<<10)
	var size int64
	for {
		n, err := f.Write(chunk)
		size += int64(n)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(f.Truncate(max(size-leave, 0))).To(Succeed())
	return path
}

// logTo is a debug logger writing to buf and to the spec's output.
func logTo(buf *gbytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.MultiWriter(buf, GinkgoWriter), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// eventsIn counts, over the sealed files of hist, the events whose task
// id starts with prefix followed by "-".
func eventsIn(hist, prefix string) int64 {
	var n int64
	for _, f := range sealedFiles(hist) {
		n += count(openSealed(f), `SELECT count(*) FROM events WHERE task_id LIKE ?`, prefix+"-%")
	}
	return n
}

var _ = Describe("the flight recorder on a full disk", Label("integration"), func() {
	var mnt, storage, shared, hist string
	ctx := context.Background()

	BeforeEach(func() {
		mnt = mountTmpfs("8m")
		storage, shared = filepath.Join(mnt, "storage"), filepath.Join(mnt, "shared")
		hist = filepath.Join(shared, "history", "search_hot")
	})

	It("fails writes with a typed disk_full error and a log, stops without false alarms, and starts again once space returns, keeping every acknowledged event", func() {
		logs := gbytes.NewBuffer()
		cfg := testConfig(storage, shared)
		cfg.FlushInterval = time.Hour
		rec, err := recorder.Open(ctx, cfg, recorder.Options{Logger: logTo(logs)})
		Expect(err).NotTo(HaveOccurred())
		filler := fill(mnt, 1<<20)

		// A batch larger than the space left fails inside its insert, where
		// SQLite rolls the transaction back itself: nothing is stored, and
		// no rollback is reported failed.
		big := strings.Repeat("x", 2000)
		evs := taskEvents("big", 3000)
		for i := range evs {
			evs[i].Stdout = &big
		}
		_, err = rec.Write(ctx, evs)
		Expect(err).To(MatchError(recordstore.ErrDiskFull), "%v", err)
		Expect(string(logs.Contents())).NotTo(ContainSubstring("rollback failed"))

		acked := 0
		var werr error
		for ; acked < 10_000; acked++ {
			if _, werr = rec.Write(ctx, taskEvents(fmt.Sprintf("k%d", acked), 20)); werr != nil {
				break
			}
		}
		Expect(acked).To(BeNumerically(">", 0), "some batches fit before the disk filled")
		Expect(werr).To(MatchError(recordstore.ErrDiskFull), "%v", werr)
		Expect(recordstore.Code(werr)).To(Equal("disk_full"))

		for _, e := range taskEvents("buffered", 20) {
			rec.Record(e)
		}
		ferr := rec.Flush(ctx)
		Expect(ferr).To(MatchError(recordstore.ErrDiskFull), "%v", ferr)
		Expect(logs).To(gbytes.Say(`msg=recorder_flush_failed .*code=disk_full`))

		cerr := rec.Close(ctx)
		GinkgoWriter.Printf("close on a full disk: %v\n", cerr)
		Expect(string(logs.Contents())).NotTo(ContainSubstring("rollback failed"))
		Expect(filepath.Join(storage, dbfiles.WatchdogFileName("w1"))).NotTo(BeAnExistingFile(), "a clean stop, even on a full disk")

		Expect(os.Remove(filler)).To(Succeed())
		logs2 := gbytes.NewBuffer()
		reg := prometheus.NewRegistry()
		rec, err = recorder.Open(ctx, cfg, recorder.Options{Logger: logTo(logs2), Registerer: reg, LeftoverDelay: time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		Expect(gauge(reg, "drakkar_recorder_previous_run_killed_total")).To(BeZero())
		Eventually(func() float64 { return gauge(reg, "drakkar_recorder_unsealed_files") }, "60s", "20ms").Should(BeZero())
		Expect(rec.Close(ctx)).To(Succeed())
		Expect(string(logs2.Contents())).NotTo(ContainSubstring("recorder_previous_run_killed"))
		Expect(string(logs2.Contents())).NotTo(ContainSubstring("rollback failed"))

		for b := 0; b < acked; b++ {
			Expect(eventsIn(hist, fmt.Sprintf("k%d", b))).To(Equal(int64(20)), "acknowledged batch %d, once", b)
		}
		Expect(eventsIn(hist, fmt.Sprintf("k%d", acked))).To(BeZero(), "the refused batch")
		Expect(eventsIn(hist, "big")).To(BeZero(), "the refused big batch")
	})

	DescribeTable("fails a start on a full disk with a typed error, leaving nothing that makes the next start, once space returns, report a killed run",
		func(leave int64) {
			Expect(os.MkdirAll(storage, 0o700)).To(Succeed())
			filler := fill(mnt, leave)
			logs := gbytes.NewBuffer()
			cfg := testConfig(storage, shared)
			rec, err := recorder.Open(ctx, cfg, recorder.Options{Logger: logTo(logs)})
			if err == nil { // it fit: the stop, on the full disk, is clean all the same
				cerr := rec.Close(ctx)
				GinkgoWriter.Printf("the start fit in %d bytes; close: %v\n", leave, cerr)
			} else {
				Expect(err).To(MatchError(recordstore.ErrDiskFull), "%v", err)
				Expect(recordstore.Code(err)).To(Equal("disk_full"))
			}
			Expect(string(logs.Contents())).NotTo(ContainSubstring("rollback failed"))
			Expect(filepath.Join(storage, dbfiles.WatchdogFileName("w1"))).NotTo(BeAnExistingFile())

			Expect(os.Remove(filler)).To(Succeed())
			logs2 := gbytes.NewBuffer()
			reg := prometheus.NewRegistry()
			rec, err = recorder.Open(ctx, cfg, recorder.Options{Logger: logTo(logs2), Registerer: reg, LeftoverDelay: time.Millisecond})
			Expect(err).NotTo(HaveOccurred())
			Expect(gauge(reg, "drakkar_recorder_previous_run_killed_total")).To(BeZero())
			_, err = rec.Write(ctx, taskEvents("after", 1))
			Expect(err).NotTo(HaveOccurred())
			Eventually(func() float64 { return gauge(reg, "drakkar_recorder_unsealed_files") }, "60s", "20ms").Should(BeZero())
			Expect(rec.Close(ctx)).To(Succeed())
			Expect(string(logs2.Contents())).NotTo(ContainSubstring("recorder_previous_run_killed"))
			Expect(string(logs2.Contents())).NotTo(ContainSubstring("rollback failed"))
			Expect(eventsIn(hist, "after")).To(Equal(int64(1)))
		},
		Entry("no byte left", int64(0)),
		Entry("4 KiB left", int64(4<<10)),
		Entry("12 KiB left", int64(12<<10)),
		Entry("24 KiB left", int64(24<<10)),
		Entry("40 KiB left", int64(40<<10)),
		Entry("64 KiB left", int64(64<<10)),
		Entry("128 KiB left", int64(128<<10)),
	)
})
