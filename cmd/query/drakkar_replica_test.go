// --replica and --lease on the drakkar commands that may own a worker's
// store, through the real binary and an S3 server on 127.0.0.1: what
// drakkar record and drakkar cache set wrote is found by query restore.

package main_test

import (
	"database/sql"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("query drakkar --replica", func() {
	var dir, storage, shared string

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		storage, shared = filepath.Join(dir, "storage"), filepath.Join(dir, "shared")
	})

	// restore restores the replica at url into a fresh store and returns
	// its live file.
	restore := func(env []string, url string) string {
		dst := filepath.Join(GinkgoT().TempDir(), "restored", "records.sqlite")
		r := runQuery(dir, env, "", "--store", dst, "restore", "--from", url)
		Expect(r.code).To(Equal(0), r.stderr)
		return sqlite.LivePath(dst)
	}
	count := func(live, q string) int {
		db, err := sql.Open("sqlite", "file:"+live+"?mode=ro")
		Expect(err).NotTo(HaveOccurred())
		defer db.Close()
		var n int
		Expect(db.QueryRow(q).Scan(&n)).To(Succeed())
		return n
	}

	It("drakkar record ships the worker's recorder under <name>/recorder, and query restore finds the events", func() {
		srv, env := s3Env()
		r := runQuery(dir, env, `{"event":"task_started","task_id":"r-1"}
{"event":"task_started","task_id":"r-2"}
`, "--replica", srv.URL("dk"), "drakkar", "record", "--storage", storage, "--shared", shared, "--name", "w1", "--cluster", "c1")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring(`"appended":2`))
		keys, err := srv.Keys("dk/")
		Expect(err).NotTo(HaveOccurred())
		Expect(keys).NotTo(BeEmpty(), r.stderr)
		for _, k := range keys {
			Expect(k).To(HavePrefix("dk/w1/recorder/"))
		}
		live := restore(env, srv.URL("dk/w1/recorder"))
		Expect(count(live, "SELECT count(*) FROM events WHERE task_id IN ('r-1', 'r-2')")).To(Equal(2))
	})

	It("drakkar cache set ships the worker's cache under <name>/cache, from $RECORDS_REPLICA too", func() {
		srv, env := s3Env()
		env = append(env, "RECORDS_REPLICA="+srv.URL("dk"))
		r := runQuery(dir, env, "", "drakkar", "cache", "set", "--storage", storage, "--name", "w1", "k1", `{"v":1}`)
		Expect(r.code).To(Equal(0), r.stderr)
		keys, err := srv.Keys("dk/")
		Expect(err).NotTo(HaveOccurred())
		Expect(keys).NotTo(BeEmpty())
		for _, k := range keys {
			Expect(k).To(HavePrefix("dk/w1/cache/"))
		}
		restore(env, srv.URL("dk/w1/cache"))
	})

	It("refuses a bad address or --lease before anything is created", func() {
		r := runQuery(dir, nil, `{"event":"annotation"}`+"\n", "--replica", "ftp://h/p", "drakkar", "record", "--storage", storage, "--shared", shared, "--name", "w1", "--cluster", "c1")
		Expect(r.code).To(Equal(1), r.stderr)
		Expect(r.stderr).To(HavePrefix("query: invalid: "))
		r = runQuery(dir, nil, `{"event":"annotation"}`+"\n", "--replica", "file://"+filepath.Join(dir, "rep"), "--lease", "s3", "drakkar", "record", "--storage", storage, "--shared", shared, "--name", "w1", "--cluster", "c1")
		Expect(r.code).To(Equal(2), r.stderr)
		Expect(r.stderr).To(ContainSubstring("--lease s3 needs an s3:// --replica"))
		Expect(storage).NotTo(BeADirectory())
	})
})
