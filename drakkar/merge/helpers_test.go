// Test helpers: sealed recorder files built with the dbfiles DDL and plain
// SQL, and readers of a merged file.

package merge_test

import (
	"crypto/sha256"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	_ "modernc.org/sqlite"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// rec describes a sealed recorder file to build.
type rec struct {
	name    string // file name, e.g. "w1-2026-10-13__08_00_00.db"
	worker  string // worker_config.worker_name; "" = no worker_config row
	cluster string // worker_config.cluster_name; "" = NULL
	events  int
	states  int
	oldDDL  bool // events without origin/client_name/request_id, worker_state without the runtime-health columns
}

// oldEventsDDL is an events table of an older release: no origin,
// client_name or request_id.
const oldEventsDDL = `CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, dt TEXT NOT NULL, event TEXT NOT NULL,
    partition INTEGER, offset INTEGER, task_id TEXT, args TEXT, stdout_size INTEGER DEFAULT 0,
    stdout TEXT, stderr TEXT, exit_code INTEGER, duration REAL, output_topic TEXT, metadata TEXT,
    pid INTEGER, labels TEXT)`

// oldStateDDL is a worker_state table without health_state, loop_lag_ms
// and throughput.
const oldStateDDL = `CREATE TABLE worker_state (
    id INTEGER PRIMARY KEY AUTOINCREMENT, uptime_seconds REAL, assigned_partitions TEXT,
    partition_count INTEGER, pool_active INTEGER, pool_max INTEGER, total_queued INTEGER,
    consumed_count INTEGER, completed_count INTEGER, failed_count INTEGER, produced_count INTEGER,
    committed_count INTEGER, paused INTEGER, updated_at REAL NOT NULL, updated_at_dt TEXT NOT NULL)`

// baseTS is the first event time of every built file (2026-10-13 08:00 UTC).
var baseTS = float64(time.Date(2026, 10, 13, 8, 0, 0, 0, time.UTC).Unix())

// buildRecorder writes r as a sealed recorder file (journal DELETE) in dir
// and returns its path. Events are inserted newest first, so their id
// order is the reverse of their ts order; task_id is "<name>/t<i>".
func buildRecorder(dir string, r rec) string {
	path := filepath.Join(dir, r.name)
	db, err := sql.Open("sqlite", path)
	Expect(err).NotTo(HaveOccurred())
	defer db.Close()
	db.SetMaxOpenConns(1)
	var stmts []string
	if r.oldDDL {
		stmts = []string{oldEventsDDL, dbfiles.WorkerConfigDDL, oldStateDDL}
	} else {
		stmts = append(append([]string{}, dbfiles.RecorderTableDDL...), dbfiles.RecorderIndexDDL...)
	}
	stmts = append([]string{"PRAGMA journal_mode=DELETE", "BEGIN"}, stmts...)
	for _, s := range stmts {
		_, err := db.Exec(s)
		Expect(err).NotTo(HaveOccurred(), s)
	}
	if r.worker != "" {
		var cluster any
		if r.cluster != "" {
			cluster = r.cluster
		}
		_, err := db.Exec(`INSERT INTO worker_config (id, worker_name, cluster_name, ip_address, debug_port,
			max_executors, created_at, created_at_dt) VALUES (1, ?, ?, '10.0.0.7', 8080, 4, ?, '2026-10-13 08:00:00.000')`,
			r.worker, cluster, baseTS)
		Expect(err).NotTo(HaveOccurred())
	}
	fillEvents(db, r.name, r.events, r.oldDDL)
	fillStates(db, r.states, r.oldDDL)
	_, err = db.Exec("COMMIT")
	Expect(err).NotTo(HaveOccurred())
	return path
}

// eventsSQL inserts n realistic events, newest first, tagged with ?1.
const eventsSQL = `INSERT INTO events (ts, dt, event, partition, offset, task_id, args, stdout_size,
	stdout, stderr, exit_code, duration, output_topic, metadata, pid, labels{COLS})
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?2 - 1)
SELECT ?3 + (?2 - i) * 0.25, strftime('%Y-%m-%d %H:%M:%f', ?3 + (?2 - i) * 0.25, 'unixepoch'),
	CASE i % 3 WHEN 0 THEN 'task_started' WHEN 1 THEN 'task_completed' ELSE 'consumed' END,
	i % 12, 1000 + i, ?1 || '/t' || i, '["--input","s3://bucket/in/' || i || '.json"]', 96,
	'processed record ' || i || ' in 12 ms; wrote 3 rows to the sink', NULL, 0, 0.012 + (i % 7) * 0.001,
	'results', '{"attempt":1,"shard":' || (i % 4) || '}', 4242, CASE WHEN i % 10 = 0 THEN '{"tier":"gold"}' END{VALS}
FROM n`

// fillEvents inserts n events tagged with tag.
func fillEvents(db *sql.DB, tag string, n int, old bool) {
	if n == 0 {
		return
	}
	cols, vals := ", origin, client_name, request_id", ", CASE WHEN i % 5 = 0 THEN 'http' ELSE 'kafka' END, NULL, NULL"
	if old {
		cols, vals = "", ""
	}
	q := strings.NewReplacer("{COLS}", cols, "{VALS}", vals).Replace(eventsSQL)
	_, err := db.Exec(q, tag, n, baseTS)
	Expect(err).NotTo(HaveOccurred())
}

// fillStates inserts n worker_state rows, newest first.
func fillStates(db *sql.DB, n int, old bool) {
	for i := range n {
		ts := baseTS + float64(n-i)*30
		if old {
			_, err := db.Exec(`INSERT INTO worker_state (uptime_seconds, pool_active, updated_at, updated_at_dt)
				VALUES (?, 2, ?, '2026-10-13 08:00:00.000')`, float64(i), ts)
			Expect(err).NotTo(HaveOccurred())
			continue
		}
		_, err := db.Exec(`INSERT INTO worker_state (uptime_seconds, pool_active, health_state, loop_lag_ms,
			updated_at, updated_at_dt) VALUES (?, 2, 'healthy', 1.5, ?, '2026-10-13 08:00:00.000')`, float64(i), ts)
		Expect(err).NotTo(HaveOccurred())
	}
}

// openRO opens a merged file read-only for assertions.
func openRO(path string) *sql.DB {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(db.Close)
	return db
}

// queryStrings runs q and returns its single text column.
func queryStrings(db *sql.DB, q string, args ...any) []string {
	rows, err := db.Query(q, args...)
	Expect(err).NotTo(HaveOccurred())
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		Expect(rows.Scan(&s)).To(Succeed())
		out = append(out, s.String)
	}
	Expect(rows.Err()).NotTo(HaveOccurred())
	return out
}

// queryInt runs q and returns its single integer.
func queryInt(db *sql.DB, q string, args ...any) int64 {
	var n int64
	Expect(db.QueryRow(q, args...).Scan(&n)).To(Succeed())
	return n
}

// renderMaster renders sqlite_master like dbfiles' fixtures: per row a
// "-- <type> <name> ON <tbl_name>" line, its sql and ";", by name,
// separated by blank lines.
func renderMaster(db *sql.DB) string {
	rows, err := db.Query("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name")
	Expect(err).NotTo(HaveOccurred())
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var typ, name, tbl string
		var text sql.NullString
		Expect(rows.Scan(&typ, &name, &tbl, &text)).To(Succeed())
		body := "NULL"
		if text.Valid {
			body = text.String
		}
		parts = append(parts, "-- "+typ+" "+name+" ON "+tbl+"\n"+body+";\n")
	}
	Expect(rows.Err()).NotTo(HaveOccurred())
	return strings.Join(parts, "\n")
}

// fileState is what must not change when a source is read.
type fileState struct {
	mtime time.Time
	sum   [32]byte
}

// stateOf reads path's modification time and checksum.
func stateOf(path string) fileState {
	fi, err := os.Stat(path)
	Expect(err).NotTo(HaveOccurred())
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	return fileState{mtime: fi.ModTime(), sum: sha256.Sum256(b)}
}

// names lists the entries of dir.
func names(dir string) []string {
	ents, err := os.ReadDir(dir)
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
