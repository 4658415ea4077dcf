package recorder_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/recordstoretest/benchdata"
)

// benchEvents are n task_completed-like events of a realistic size.
func benchEvents(n int) []recorder.Event {
	out := make([]recorder.Event, n)
	for i := range out {
		e := recorder.NewEvent(recorder.KindTaskCompleted, time.Now())
		e.TaskID = recorder.Ptr("task-" + strconv.Itoa(i))
		e.Partition = recorder.Ptr(int64(i % 16))
		e.Offset = recorder.Ptr(int64(i))
		e.Stdout = recorder.Ptr(strings.Repeat("o", 120))
		e.StdoutSize = 120
		e.ExitCode = recorder.Ptr(int64(0))
		e.Args = []any{"--input", "x" + strconv.Itoa(i)}
		out[i] = e
	}
	return out
}

// rawEvents opens a SQLite file with the events DDL on one connection
// (WAL, synchronous=NORMAL, as the recorder's writer) and returns an
// insert of rows as multi-row INSERTs in one transaction.
func rawEvents(b *testing.B, dir string) (insert func(rows [][]any), closeDB func()) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "raw.db")+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, s := range append([]string{dbfiles.EventsDDL}, dbfiles.RecorderIndexDDL[:8]...) {
		if _, err := db.Exec(s); err != nil {
			b.Fatal(err)
		}
	}
	const per = 50
	cols := recorder.EventColumns[1:]
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	stmt, err := db.Prepare("INSERT INTO events (" + strings.Join(quoteAll(cols), ", ") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(row+",", per), ","))
	if err != nil {
		b.Fatal(err)
	}
	one, err := db.Prepare("INSERT INTO events (" + strings.Join(quoteAll(cols), ", ") + ") VALUES " + row)
	if err != nil {
		b.Fatal(err)
	}
	return func(rows [][]any) {
			tx, err := db.Begin()
			if err != nil {
				b.Fatal(err)
			}
			args := make([]any, 0, per*len(cols))
			i := 0
			for ; i+per <= len(rows); i += per {
				args = args[:0]
				for _, r := range rows[i : i+per] {
					args = append(args, r...)
				}
				if _, err := tx.Stmt(stmt).Exec(args...); err != nil {
					b.Fatal(err)
				}
			}
			for ; i < len(rows); i++ {
				if _, err := tx.Stmt(one).Exec(rows[i]...); err != nil {
					b.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
		}, func() {
			stmt.Close()
			one.Close()
			db.Close()
		}
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = `"` + n + `"`
	}
	return out
}

// BenchmarkRecord measures events recorded through Record and written by
// one Flush, against a raw multi-row INSERT of the same rows (converted
// beforehand) into the same DDL on one connection with the recorder's
// pragmas, the two alternating in order iteration by iteration
// (benchdata.Pair), in one process and so with the same GOMAXPROCS.
// vs_raw = raw time / recorder time (goal ≥ 0.8); vs_raw_p50 is the
// median of the per-iteration ratios.
func BenchmarkRecord(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) {
			dir := b.TempDir()
			cfg := recorder.DefaultConfig()
			cfg.StorageDir, cfg.WorkerName = filepath.Join(dir, "storage"), "bench"
			cfg.FlushInterval = time.Hour
			cfg.RotationInterval = 24 * time.Hour
			cfg.StateSyncInterval = time.Hour
			cfg.MaxBuffer = max(1000, 2*n)
			ctx := context.Background()
			rec, err := recorder.Open(ctx, cfg, recorder.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer rec.Close(ctx)
			insert, closeRaw := rawEvents(b, dir)
			defer closeRaw()
			events := benchEvents(n)
			rows := make([][]any, n)
			for i, e := range events {
				v, err := e.Values()
				if err != nil {
					b.Fatal(err)
				}
				rows[i] = v
			}
			ours := func() error {
				for _, e := range events {
					rec.Record(e)
				}
				return rec.Flush(ctx)
			}
			base := func() error {
				insert(rows)
				return nil
			}
			var p benchdata.Pair
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p.Run(b, i, ours, base)
			}
			b.StopTimer()
			o, _ := p.Total()
			b.ReportMetric(float64(n*b.N)/o.Seconds(), "events/s")
			p.Report(b, "vs_raw")
		})
	}
}

// BenchmarkSeal measures the seal and the cross-file-system move of a
// live file of about 100 MB (storage.dir on /dev/shm, the history folder
// on the temp folder's disk), against cp + fsync of the same file between
// the same folders. vs_copy = recorder time / copy time (goal ≤ 1.5).
func BenchmarkSeal(b *testing.B) {
	shm, err := os.MkdirTemp("/dev/shm", "recorder-bench-")
	if err != nil {
		b.Skip("no /dev/shm: ", err)
	}
	defer os.RemoveAll(shm)
	ctx := context.Background()
	var ours, cp time.Duration
	var size int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cfg := recorder.DefaultConfig()
		cfg.StorageDir = filepath.Join(shm, "s"+strconv.Itoa(i))
		cfg.SharedDir = filepath.Join(b.TempDir(), "shared")
		cfg.WorkerName = "bench"
		cfg.FlushInterval, cfg.RotationInterval, cfg.StateSyncInterval = time.Hour, 24*time.Hour, time.Hour
		rec, err := recorder.Open(ctx, cfg, recorder.Options{})
		if err != nil {
			b.Fatal(err)
		}
		live := rec.LiveFile()
		events := benchEvents(5000)
		for {
			if _, err := rec.Write(ctx, events); err != nil {
				b.Fatal(err)
			}
			fi, err := os.Stat(live)
			if err != nil {
				b.Fatal(err)
			}
			wal, _ := os.Stat(live + "-wal")
			if fi.Size()+sizeOf(wal) >= 100<<20 {
				break
			}
		}
		// The copy baseline: the live file as it is, copied and fsynced.
		cpDir := filepath.Join(b.TempDir(), "cp")
		if err := os.MkdirAll(cpDir, 0o700); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		if err := rec.Close(ctx); err != nil { // final flush, seal, move
			b.Fatal(err)
		}
		t1 := time.Now()
		sealed := filepath.Join(cfg.HistoryDir(), filepath.Base(live))
		if err := copySync(sealed, filepath.Join(cpDir, "copy.db")); err != nil {
			b.Fatal(err)
		}
		cp += time.Since(t1)
		ours += t1.Sub(t0)
		fi, err := os.Stat(sealed)
		if err != nil {
			b.Fatal(err)
		}
		size = fi.Size()
	}
	b.ReportMetric(float64(ours.Milliseconds())/float64(b.N), "seal_ms")
	b.ReportMetric(float64(size)/(1<<20), "MB")
	b.ReportMetric(ours.Seconds()/cp.Seconds(), "vs_copy")
}

func sizeOf(fi os.FileInfo) int64 {
	if fi == nil {
		return 0
	}
	return fi.Size()
}

// copySync is the baseline: cp, then fsync the copy and its folder.
func copySync(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(dst))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// BenchmarkRecordSpooled measures one event recorded by another process
// with the same worker name, through the owner's spool, to its committed
// result: the child records b.N events one Write at a time and reports
// the latencies; p50_ms and p99_ms are reported.
func BenchmarkRecordSpooled(b *testing.B) {
	dir := b.TempDir()
	cfg := recorder.DefaultConfig()
	cfg.StorageDir, cfg.WorkerName = filepath.Join(dir, "storage"), "bench"
	cfg.FlushInterval, cfg.RotationInterval, cfg.StateSyncInterval = time.Hour, 24*time.Hour, time.Hour
	ctx := context.Background()
	rec, err := recorder.Open(ctx, cfg, recorder.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close(ctx)
	c := exec.Command(os.Args[0])
	c.Env = append(os.Environ(), childEnv+"=latency", childConfig+"="+mustJSON(cfg), childCount+"="+strconv.Itoa(b.N))
	c.Stderr = os.Stderr
	b.ResetTimer()
	out, err := c.Output()
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	var lat []float64
	for _, f := range strings.Fields(string(out)) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			b.Fatal(fmt.Errorf("child output %q: %w", f, err))
		}
		lat = append(lat, v)
	}
	if len(lat) != b.N {
		b.Fatalf("child reported %d latencies, want %d", len(lat), b.N)
	}
	sort.Float64s(lat)
	b.ReportMetric(lat[len(lat)/2], "p50_ms")
	b.ReportMetric(lat[len(lat)*99/100], "p99_ms")
}
