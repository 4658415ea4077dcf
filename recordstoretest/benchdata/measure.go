package benchdata

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Pair times a measured function ("ours") and its baseline alternately:
// iteration i runs ours first when i is even and the baseline first when
// it is odd, so that a machine whose speed drifts, or a step that leaves
// work behind for the next one (a checkpoint, a writeback), weighs on both
// alike. The zero value is ready to use.
type Pair struct {
	Ours, Base []time.Duration // one per Run, in order
}

// Run times one iteration of both, in the order i gives, and fails tb on
// the first error either returns.
func (p *Pair) Run(tb testing.TB, i int, ours, base func() error) {
	tb.Helper()
	timeIt := func(f func() error) time.Duration {
		t0 := time.Now()
		if err := f(); err != nil {
			tb.Fatal(err)
		}
		return time.Since(t0)
	}
	var o, r time.Duration
	if i%2 == 0 {
		o, r = timeIt(ours), timeIt(base)
	} else {
		r, o = timeIt(base), timeIt(ours)
	}
	p.Ours, p.Base = append(p.Ours, o), append(p.Base, r)
}

// Add records one iteration timed by the caller.
func (p *Pair) Add(ours, base time.Duration) {
	p.Ours, p.Base = append(p.Ours, ours), append(p.Base, base)
}

// Total returns the summed time of ours and of the baseline.
func (p *Pair) Total() (ours, base time.Duration) {
	for i := range p.Ours {
		ours, base = ours+p.Ours[i], base+p.Base[i]
	}
	return ours, base
}

// Ratio returns baseline time / our time over every iteration (above 1:
// ours is faster), 0 before the first Run.
func (p *Pair) Ratio() float64 {
	o, r := p.Total()
	if o <= 0 {
		return 0
	}
	return r.Seconds() / o.Seconds()
}

// RatioP50 returns the median of the per-iteration ratios baseline /
// ours, which a busy minute disturbs less than Ratio; 0 before the first
// Run.
func (p *Pair) RatioP50() float64 {
	if len(p.Ours) == 0 {
		return 0
	}
	rs := make([]float64, len(p.Ours))
	for i := range rs {
		rs[i] = p.Base[i].Seconds() / p.Ours[i].Seconds()
	}
	slices.Sort(rs)
	return rs[len(rs)/2]
}

// Report writes name (Ratio) and name+"_p50" (RatioP50).
func (p *Pair) Report(b *testing.B, name string) {
	b.ReportMetric(p.Ratio(), name)
	b.ReportMetric(p.RatioP50(), name+"_p50")
}

// FsyncMs returns the disk's bare fsync time in milliseconds: the median
// of 15 rounds of creating a file in dir, writing 4 KiB to it and fsyncing
// it (block allocation and a journal commit, as a spool batch's or a state
// file's first fsync), the cheapest durable new file a store can make
// there. An fsync-bound figure means little without it: the same code is
// several times slower on a disk whose flush is. Each round's file is
// removed, untimed; on failure tb fails and one file may be left in dir.
func FsyncMs(tb testing.TB, dir string) float64 {
	tb.Helper()
	block := make([]byte, 4096)
	const rounds = 15
	ds := make([]time.Duration, rounds)
	for i := range ds {
		block[0] = byte(i)
		t0 := time.Now()
		f, err := os.CreateTemp(dir, "fsync-probe-")
		if err != nil {
			tb.Fatal(err)
		}
		_, err = f.Write(block)
		if err == nil {
			err = f.Sync()
		}
		ds[i] = time.Since(t0)
		_ = f.Close()
		_ = os.Remove(f.Name())
		if err != nil {
			tb.Fatal(err)
		}
	}
	slices.Sort(ds)
	return float64(ds[rounds/2].Microseconds()) / 1000
}

// ReportFsync measures FsyncMs in dir, untimed, and reports it as the
// metric fsync_ms. Call it after the timed loop, so that it measures the
// disk as the benchmark left it.
func ReportFsync(b *testing.B, dir string) {
	b.Helper()
	b.StopTimer()
	b.ReportMetric(FsyncMs(b, filepath.Clean(dir)), "fsync_ms")
}
