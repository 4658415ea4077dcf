//go:build linux

// BenchmarkDownloadLive (docs/performance.md, "Debug API"): download-live
// against the real `cp` binary on the same live file, with the page cache
// state of each side set and measured rather than left to chance.

package debugapi_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fb46ecde/records/drakkar/debugapi"
	"github.com/fb46ecde/records/drakkar/recorder"
)

// throughput keeps the MB/s (10^6 bytes) of each copy of one kind, one a
// benchmark iteration.
type throughput struct {
	rates []float64
	bytes int64
}

// add counts one copy of n bytes that took d.
func (t *throughput) add(n int64, d time.Duration) {
	t.rates = append(t.rates, float64(n)/1e6/d.Seconds())
	t.bytes += n
}

// median is the median of xs.
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// mbps is the median MB/s of the copies.
func (t *throughput) mbps() float64 { return median(t.rates) }

// ratio is the median over the iterations of t's MB/s over base's in the
// same iteration: the copies of one iteration run back to back, so they
// share the machine's load more than the medians of each do.
func (t *throughput) ratio(base *throughput) float64 {
	r := make([]float64, len(t.rates))
	for i := range r {
		r[i] = t.rates[i] / base.rates[i]
	}
	return median(r)
}

// evict writes back the dirty pages of each path (fsync) and asks the
// kernel to drop the file's pages from the page cache (POSIX_FADV_DONTNEED);
// it returns the share of paths[0]'s pages still resident afterwards.
func evict(b *testing.B, paths ...string) float64 {
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			b.Fatal(err)
		}
		_ = f.Close()
	}
	return resident(b, paths[0])
}

// warm reads each path once, so that its pages are in the page cache; it
// returns the share of paths[0]'s pages resident afterwards.
func warm(b *testing.B, paths ...string) float64 {
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, f); err != nil {
			b.Fatal(err)
		}
		_ = f.Close()
	}
	return resident(b, paths[0])
}

// resident is the share (0 to 1) of path's pages in the page cache, by
// mincore over a read-only mapping of it (which reads nothing).
func resident(b *testing.B, path string) float64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	if fi.Size() == 0 {
		return 0
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = unix.Munmap(mem) }()
	page := os.Getpagesize()
	vec := make([]byte, (len(mem)+page-1)/page)
	// x/sys/unix has no mincore wrapper on Linux.
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		b.Fatal(errno)
	}
	in := 0
	for _, v := range vec {
		in += int(v & 1)
	}
	return float64(in) / float64(len(vec))
}

// runCP copies src to dst with the cp binary and returns dst's size and
// the time cp took, its fork and exec included. dst is removed afterwards
// (untimed), so that its dirty pages are dropped rather than written back
// during the next measurement, as the snapshot's unlinked temp file's are.
func runCP(b *testing.B, src, dst string) (int64, time.Duration) {
	t := time.Now()
	if out, err := exec.Command("cp", src, dst).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v: %s", err, out)
	}
	d := time.Since(t)
	fi, err := os.Stat(dst)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Remove(dst); err != nil {
		b.Fatal(err)
	}
	return fi.Size(), d
}

// growLive records about mb MB of task_completed rows with 4 kB of stdout
// into rec, flushing every 20,000.
func growLive(b *testing.B, rec *recorder.Recorder, mb int) {
	out := strings.Repeat("o", 4000)
	for i := 0; i < mb*250; i++ {
		rec.Record(recorder.TaskCompleted(time.Now(), recorder.Task{ID: "t" + strconv.Itoa(i)},
			recorder.Completed{Stdout: out, Duration: time.Second}))
		if i%20000 == 19999 {
			if err := rec.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := rec.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkDownloadLive measures, in rotating order on each iteration:
//
//   - the download-live answer as served (snapshot into storage.dir, then
//     streamed to a counting writer), the live file in the page cache, as
//     a file being written is;
//   - the same with the live file and its -wal evicted first;
//   - a cold `cp` of the live file (evicted first): the baseline;
//   - a warm `cp` of the live file (read once first).
//
// It reports each one's median MB/s, the medians over the iterations of
// ratio (served snapshot / cold cp, the goal ≥ 0.5), ratio_warm (served /
// warm cp) and ratio_cold_both (evicted snapshot / cold cp), and the mean
// share of the live file's pages resident after eviction and after
// warming, so that a failed eviction shows.
func BenchmarkDownloadLive(b *testing.B) {
	if _, err := exec.LookPath("cp"); err != nil {
		b.Skip("no cp binary")
	}
	storage := b.TempDir()
	cfg := recorder.DefaultConfig()
	cfg.StorageDir, cfg.WorkerName, cfg.ClusterName = storage, "w1", "search hot"
	cfg.FlushInterval = 100 * time.Millisecond
	cfg.RotationInterval = 24 * time.Hour
	rec, err := recorder.Open(context.Background(), cfg, recorder.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rec.Close(context.Background()) }()
	growLive(b, rec, envInt("DEBUGAPI_BENCH_LIVE_MB", 200))
	live := rec.LiveFile()
	c := debugapi.DefaultConfig()
	c.StorageDir, c.WorkerName, c.ClusterName = storage, "w1", "search hot"
	h, err := debugapi.New(debugapi.Options{Config: c, Recorder: rec, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	// Record about 5k events/s while the copies run.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var recorded atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				for range 50 {
					rec.Record(recorder.Annotation(time.Now(), "bg", map[string]any{"n": recorded.Add(1)}))
				}
			}
		}
	}()
	var served, servedCold, coldCP, warmCP throughput
	var evicted, warmed float64
	dst := filepath.Join(b.TempDir(), "copy.db")
	snapshot := func(t *throughput) {
		start := time.Now()
		n := benchStream(b, h, "/api/v1/debug/download-live")
		t.add(n, time.Since(start))
	}
	steps := []func(){
		func() { warmed += warm(b, live, live+"-wal"); snapshot(&served) },
		func() { evicted += evict(b, live, live+"-wal"); snapshot(&servedCold) },
		func() { evicted += evict(b, live); coldCP.add(runCP(b, live, dst)) },
		func() { warmed += warm(b, live); warmCP.add(runCP(b, live, dst)) },
	}
	start := time.Now()
	b.ResetTimer()
	for i := range b.N {
		for k := range steps {
			steps[(i+k)%len(steps)]()
		}
	}
	b.StopTimer()
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	b.ReportMetric(served.mbps(), "snapshot_MB/s")
	b.ReportMetric(servedCold.mbps(), "snapshot_evicted_MB/s")
	b.ReportMetric(coldCP.mbps(), "cold_cp_MB/s")
	b.ReportMetric(warmCP.mbps(), "warm_cp_MB/s")
	b.ReportMetric(served.ratio(&coldCP), "ratio")
	b.ReportMetric(served.ratio(&warmCP), "ratio_warm")
	b.ReportMetric(servedCold.ratio(&coldCP), "ratio_cold_both")
	b.ReportMetric(100*evicted/float64(2*b.N), "resident_after_evict_%")
	b.ReportMetric(100*warmed/float64(2*b.N), "resident_after_warm_%")
	b.ReportMetric(float64(served.bytes)/float64(b.N)/1e6, "MB")
	b.ReportMetric(float64(recorded.Load())/elapsed.Seconds(), "events/s")
}
