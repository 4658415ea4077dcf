// Test helpers: sealed recorder files built with the spec's DDL and plain
// SQL (as a Python worker writes them), their meta files, and readers of
// archives.

package archive_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/archive"
	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// day13 is 2026-10-13 00:00 UTC, the start of the windows most specs use.
var day13 = time.Date(2026, 10, 13, 0, 0, 0, 0, time.UTC)

// sealedName is worker's file name for a file started at t.
func sealedName(worker string, t time.Time) string { return dbfiles.RecorderFileName(worker, t) }

// buildSealed writes a sealed recorder file (journal DELETE, the spec's
// DDL, one worker_config row, n events with task ids "<name>/t<i>") and its
// meta file into dir, and returns its path. The file is built under a
// dot-prefixed name and renamed in, as a mover does.
func buildSealed(dir, name string, n int) string {
	Expect(os.MkdirAll(dir, 0o700)).To(Succeed())
	tmp := filepath.Join(dir, "."+name+".build")
	db, err := sql.Open("sqlite", sqlite.FileURI(tmp, nil))
	Expect(err).NotTo(HaveOccurred())
	db.SetMaxOpenConns(1)
	stmts := append([]string{"PRAGMA journal_mode=DELETE", "BEGIN"}, dbfiles.RecorderTableDDL...)
	stmts = append(stmts, dbfiles.RecorderIndexDDL...)
	for _, s := range stmts {
		_, err := db.Exec(s)
		Expect(err).NotTo(HaveOccurred(), s)
	}
	worker := strings.TrimSuffix(name, name[len(name)-len("-2026-10-13__08_00_00.db"):])
	_, err = db.Exec(`INSERT INTO worker_config (id, worker_name, cluster_name, ip_address, debug_port,
		max_executors, created_at, created_at_dt) VALUES (1, ?, 'c1', '10.0.0.7', 8080, 4, 1760342400, '2026-10-13 08:00:00.000')`, worker)
	Expect(err).NotTo(HaveOccurred())
	if n > 0 {
		_, err = db.Exec(`INSERT INTO events (ts, dt, event, task_id, stdout)
			WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < ?2 - 1)
			SELECT 1760342400 + i * 0.5, strftime('%Y-%m-%d %H:%M:%f', 1760342400 + i * 0.5, 'unixepoch'),
				'task_completed', ?1 || '/t' || i, 'processed record ' || i || ' and wrote it to the sink' FROM k`, name, n)
		Expect(err).NotTo(HaveOccurred())
	}
	_, err = db.Exec(`INSERT INTO worker_state (uptime_seconds, pool_active, updated_at, updated_at_dt)
		VALUES (1.0, 2, 1760342400, '2026-10-13 08:00:00.000')`)
	Expect(err).NotTo(HaveOccurred())
	_, err = db.Exec("COMMIT")
	Expect(err).NotTo(HaveOccurred())
	Expect(db.Close()).To(Succeed())
	path := filepath.Join(dir, name)
	fi, err := os.Stat(tmp)
	Expect(err).NotTo(HaveOccurred())
	Expect(dbfiles.WriteMeta(path+dbfiles.MetaSuffix, dbfiles.Meta{
		Worker: worker, Instance: "0123456789abcdef", Cluster: "c1", SealedAt: day13, SizeBytes: fi.Size(),
		Tables:     map[string]int64{"events": int64(n), "worker_config": 1, "worker_state": 1},
		EventTypes: map[string]int64{"task_completed": int64(n)},
	})).To(Succeed())
	Expect(os.Rename(tmp, path)).To(Succeed())
	return path
}

// taskIDs lists the task ids a sealed file of name with n events holds.
func taskIDs(name string, n int) []string {
	out := make([]string, n)
	for i := range n {
		out[i] = name + "/t" + itoa(i)
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

// gunzipTo decompresses the archive at gz into a new file in a temp
// folder and returns its path.
func gunzipTo(gz string) string {
	b, err := os.ReadFile(gz)
	Expect(err).NotTo(HaveOccurred())
	zr, err := gzip.NewReader(bytes.NewReader(b))
	Expect(err).NotTo(HaveOccurred())
	var out bytes.Buffer
	_, err = out.ReadFrom(zr)
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(GinkgoT().TempDir(), filepath.Base(gz)+".db")
	Expect(os.WriteFile(path, out.Bytes(), 0o600)).To(Succeed())
	return path
}

// archiveContent is what an archive holds: its event task ids (sorted,
// duplicates kept) and its workers.source_file values (sorted).
type archiveContent struct {
	tasks, sources []string
}

// readArchive reads the archive at gz.
func readArchive(gz string) archiveContent {
	db, err := sql.Open("sqlite", sqlite.FileURI(gunzipTo(gz), url.Values{"mode": {"ro"}}))
	Expect(err).NotTo(HaveOccurred())
	defer db.Close()
	return archiveContent{
		tasks:   column(db, "SELECT task_id FROM events"),
		sources: column(db, "SELECT source_file FROM workers"),
	}
}

// column runs q and returns its text column, sorted.
func column(db *sql.DB, q string) []string {
	rows, err := db.Query(q)
	Expect(err).NotTo(HaveOccurred())
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		Expect(rows.Scan(&s)).To(Succeed())
		out = append(out, s.String)
	}
	Expect(rows.Err()).NotTo(HaveOccurred())
	sort.Strings(out)
	return out
}

// names lists dir's entries.
func names(dir string) []string {
	ents, err := os.ReadDir(dir)
	Expect(err).NotTo(HaveOccurred())
	out := []string{}
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// testConfig is DefaultConfig with one-minute windows due after a minute,
// a rotation interval that allows them, and small stale ages.
func testConfig() archive.Config {
	c := archive.DefaultConfig()
	c.RotationInterval = time.Minute
	c.Window = time.Hour
	c.DueAfter = time.Hour
	c.Retention = 0
	c.LockStale = 2 * time.Second
	return c
}

// fixedClock is a Clock answering t.
func fixedClock(t time.Time) archive.Clock {
	return func(_ context.Context, _ string) (time.Time, error) { return t, nil }
}
