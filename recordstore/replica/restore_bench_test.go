package replica_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/benbjohnson/litestream"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// benchMB is the size of BenchmarkRestore's store (RESTORE_BENCH_MB,
// default 200).
func benchMB(b *testing.B) int {
	if s := os.Getenv("RESTORE_BENCH_MB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("RESTORE_BENCH_MB=%q", s)
		}
		return n
	}
	return 200
}

// BenchmarkRestore restores a store of RESTORE_BENCH_MB megabytes (rows of
// incompressible text) from a file replica, and copies the same live file
// with cp, alternately in the same run: MB/s of each, and ratio = cp time
// / restore time (1 would be a restore as fast as a plain copy; a restore
// also merges the replica's files, verifies every checksum, and runs
// integrity_check and the engine's checks).
func BenchmarkRestore(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	store := filepath.Join(dir, "src", "records.sqlite")
	url := "file://" + filepath.Join(dir, "replica")
	be, err := sqlite.Open(ctx, store, sqlite.Options{SweepInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := be.DeclareKind(ctx, eventKind); err != nil {
		b.Fatal(err)
	}
	raw := make([]byte, 512)
	rows := make([]recordstore.Row, 1000)
	target := int64(benchMB(b)) << 20
	for n := 0; ; n++ {
		for i := range rows {
			_, _ = rand.Read(raw)
			rows[i] = recordstore.Row{"n": int64(n*len(rows) + i), "body": hex.EncodeToString(raw)}
		}
		if _, err := be.Append(ctx, "s"+strconv.Itoa(n%8), eventKind.Name, rows); err != nil {
			b.Fatal(err)
		}
		if n%5 == 0 {
			var size int64
			for _, p := range []string{sqlite.LivePath(store), sqlite.LivePath(store) + "-wal"} {
				if fi, err := os.Stat(p); err == nil {
					size += fi.Size()
				}
			}
			if size >= target {
				break
			}
		}
	}
	client, err := replica.NewClient(url)
	if err != nil {
		b.Fatal(err)
	}
	db := litestream.NewDB(sqlite.LivePath(store))
	db.MonitorInterval = 0
	db.Replica = litestream.NewReplicaWithClient(db, client)
	db.Replica.MonitorEnabled = false
	if err := db.Open(); err != nil {
		b.Fatal(err)
	}
	if err := db.SyncAndWait(ctx); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(ctx); err != nil {
		b.Fatal(err)
	}
	if err := be.Close(); err != nil {
		b.Fatal(err)
	}
	live := sqlite.LivePath(store)
	fi, err := os.Stat(live)
	if err != nil {
		b.Fatal(err)
	}
	size := fi.Size()

	var restoreT, cpT time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		dst := filepath.Join(dir, "dst"+strconv.Itoa(i), "records.sqlite")
		start := time.Now()
		if _, err := replica.Restore(ctx, dst, replica.RestoreOptions{From: url}); err != nil {
			b.Fatal(err)
		}
		restoreT += time.Since(start)

		cp := filepath.Join(dir, "cp"+strconv.Itoa(i))
		start = time.Now()
		if out, err := exec.Command("cp", live, cp).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v %s", err, out)
		}
		cpT += time.Since(start)

		b.StopTimer()
		_ = os.RemoveAll(filepath.Dir(filepath.Dir(sqlite.LivePath(dst))))
		_ = os.Remove(cp)
		b.StartTimer()
	}
	n := float64(b.N)
	mb := float64(size) / (1 << 20)
	b.ReportMetric(mb, "store_MB")
	b.ReportMetric(mb/(restoreT.Seconds()/n), "restore_MB/s")
	b.ReportMetric(mb/(cpT.Seconds()/n), "cp_MB/s")
	b.ReportMetric(cpT.Seconds()/restoreT.Seconds(), "ratio")
}
