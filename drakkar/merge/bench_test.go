// BenchmarkMerge: events/s of Merge over 8 sealed files of 100k events,
// against the better of two plain baselines measured in the same
// iteration, alternating: an ATTACH + INSERT … SELECT of the same files
// into the same merged DDL with its indexes created first, and the same
// creating them after the rows, as Merge does.

package merge_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/merge"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstoretest/benchdata"
)

const (
	benchFiles  = 8
	benchEvents = 100_000
	benchStates = 120 // one every 30 s over an hour
)

// benchSources are the sealed files every BenchmarkMerge call reads,
// built once per test binary and removed by TestMain.
var benchSources struct {
	once  sync.Once
	dir   string
	paths []string
	err   error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchSources.dir != "" {
		_ = os.RemoveAll(benchSources.dir)
	}
	os.Exit(code)
}

// BenchmarkMerge merges the sources with Merge and with the two plain
// baselines of rawMerge (indexes first, indexes last) in each iteration,
// the three in an order rotated from one iteration to the next (each
// goes first, second and last once in three iterations), in one
// process and so with the same GOMAXPROCS (Merge runs on its caller's
// goroutine, as the baselines do). vs_raw is the better baseline's time
// over Merge's, the better taken in each iteration (above 1: Merge is
// faster than the best plain code); vs_raw_p50 the median of the
// per-iteration ratios; vs_raw_index_first and vs_raw_index_last each
// baseline's own ratio.
func BenchmarkMerge(b *testing.B) {
	benchSources.once.Do(buildBenchSources)
	if benchSources.err != nil {
		b.Fatal(benchSources.err)
	}
	srcs := benchSources.paths
	dir := b.TempDir()
	var first, last []time.Duration
	var best benchdata.Pair
	var events int64
	b.ResetTimer()
	for i := range b.N {
		var tFirst, tLast, tMerge time.Duration
		steps := []func() error{
			func() error { // the baseline, indexes created before the rows
				t0 := time.Now()
				err := rawMerge(filepath.Join(dir, "raw.db"), srcs, false)
				tFirst = time.Since(t0)
				return err
			},
			func() error { // the baseline, indexes created after the rows
				t0 := time.Now()
				err := rawMerge(filepath.Join(dir, "late.db"), srcs, true)
				tLast = time.Since(t0)
				return err
			},
			func() error {
				t0 := time.Now()
				res, err := merge.Merge(context.Background(), filepath.Join(dir, "merged.db"), srcs, merge.Options{})
				tMerge = time.Since(t0)
				events += res.Events
				if err == nil && res.Events != benchFiles*benchEvents {
					err = fmt.Errorf("merged %d events", res.Events)
				}
				return err
			},
		}
		for j := range steps {
			if err := steps[(i+j)%len(steps)](); err != nil {
				b.Fatal(err)
			}
		}
		first, last = append(first, tFirst), append(last, tLast)
		best.Add(tMerge, min(tFirst, tLast))
		// Each output is some 340 MB: keep one iteration's at a time.
		for _, name := range []string{"raw.db", "late.db", "merged.db"} {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	sum := func(ds []time.Duration) (t time.Duration) {
		for _, d := range ds {
			t += d
		}
		return t
	}
	mergeTime, _ := best.Total()
	b.ReportMetric(float64(events)/mergeTime.Seconds(), "events/s")
	best.Report(b, "vs_raw")
	b.ReportMetric(sum(first).Seconds()/mergeTime.Seconds(), "vs_raw_index_first")
	b.ReportMetric(sum(last).Seconds()/mergeTime.Seconds(), "vs_raw_index_last")
	b.ReportMetric(0, "ns/op")
}

// buildBenchSources writes the benchmark's sealed recorder files.
func buildBenchSources() {
	dir, err := os.MkdirTemp("", "merge-bench-")
	if err != nil {
		benchSources.err = err
		return
	}
	benchSources.dir = dir
	for i := range benchFiles {
		name := fmt.Sprintf("worker-%d-2026-10-13__08_00_00.db", i)
		p := filepath.Join(dir, name)
		if err := buildBenchRecorder(p, fmt.Sprintf("worker-%d", i)); err != nil {
			benchSources.err = fmt.Errorf("build %s: %w", name, err)
			return
		}
		benchSources.paths = append(benchSources.paths, p)
	}
}

// buildBenchRecorder writes one sealed recorder file: the recorder DDL,
// a worker_config row, benchEvents realistic events and benchStates
// states, journal DELETE.
func buildBenchRecorder(path, worker string) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	stmts := append([]string{"PRAGMA journal_mode=DELETE", "PRAGMA synchronous=OFF", "BEGIN"}, dbfiles.RecorderTableDDL...)
	stmts = append(stmts, dbfiles.RecorderIndexDDL...)
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return err
		}
	}
	if _, err := db.Exec(`INSERT INTO worker_config (id, worker_name, cluster_name, ip_address, debug_port,
		max_executors, created_at, created_at_dt) VALUES (1, ?, 'search', '10.0.0.7', 8080, 4, ?, '2026-10-13 08:00:00.000')`,
		worker, baseTS); err != nil {
		return err
	}
	q := strings.NewReplacer("{COLS}", ", origin, client_name, request_id",
		"{VALS}", ", CASE WHEN i % 5 = 0 THEN 'http' ELSE 'kafka' END, NULL, NULL").Replace(eventsSQL)
	if _, err := db.Exec(q, worker, benchEvents, baseTS); err != nil {
		return err
	}
	if _, err := db.Exec(`INSERT INTO worker_state (uptime_seconds, assigned_partitions, partition_count,
		pool_active, pool_max, consumed_count, completed_count, health_state, loop_lag_ms, updated_at, updated_at_dt)
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
		SELECT i * 30.0, '[0,1,2]', 3, 2, 4, i * 800, i * 790, 'healthy', 1.5, ? + i * 30.0, '2026-10-13 08:00:00.000' FROM n`,
		benchStates, baseTS); err != nil {
		return err
	}
	_, err = db.Exec("COMMIT")
	return err
}

// rawMerge is the baseline: one connection, the merged DDL (tables and
// indexes) first, then per file ATTACH and one INSERT … SELECT per table,
// with the same pragmas as Merge and an fsync at the end. With lateIndex
// the indexes are created after the rows, as Merge does.
func rawMerge(out string, srcs []string, lateIndex bool) error {
	db, err := sql.Open("sqlite", out+"?_pragma=journal_mode(DELETE)&_pragma=synchronous(OFF)&_pragma=cache_size(-32768)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ddl, late := dbfiles.MergedDDL, []string(nil)
	if lateIndex {
		ddl, late = dbfiles.MergedDDL[:3], dbfiles.MergedDDL[3:]
	}
	for _, s := range ddl {
		if _, err := db.Exec(s); err != nil {
			return err
		}
	}
	wcols := "worker_name, cluster_name, ip_address, debug_port, debug_url, kafka_brokers, source_topic, consumer_group, binary_path, max_executors, task_timeout_seconds, max_retries, window_size, sinks_json, env_vars_json, created_at, created_at_dt"
	ecols := "ts, dt, event, partition, offset, task_id, args, stdout_size, stdout, stderr, exit_code, duration, output_topic, metadata, pid, labels, origin, client_name, request_id"
	scols := "uptime_seconds, assigned_partitions, partition_count, pool_active, pool_max, total_queued, consumed_count, completed_count, failed_count, produced_count, committed_count, paused, health_state, loop_lag_ms, throughput, updated_at, updated_at_dt"
	for _, p := range srcs {
		steps := []string{
			"ATTACH DATABASE 'file:" + p + "?mode=ro&immutable=1' AS s",
			"BEGIN",
			"INSERT INTO workers (" + wcols + ", source_file) SELECT " + wcols + ", '" + filepath.Base(p) + "' FROM s.worker_config",
			"INSERT INTO events (worker_id, " + ecols + ") SELECT (SELECT max(id) FROM workers), " + ecols + " FROM s.events ORDER BY ts",
			"INSERT INTO worker_states (worker_id, " + scols + ") SELECT (SELECT max(id) FROM workers), " + scols + " FROM s.worker_state ORDER BY updated_at",
			"COMMIT",
			"DETACH DATABASE s",
		}
		for _, s := range steps {
			if _, err := db.Exec(s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
	}
	for _, s := range late {
		if _, err := db.Exec(s); err != nil {
			return err
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	return fsutil.SyncFile(out)
}
