// Specs of the DDL: each schema created in a real SQLite file must leave
// exactly the hand-written sqlite_master fixture.

package dbfiles_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	_ "modernc.org/sqlite"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// createDB creates a SQLite file in a temp folder and runs stmts in it.
func createDB(stmts ...string) *sql.DB {
	db, err := sql.Open("sqlite", filepath.Join(GinkgoT().TempDir(), "x.db"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(db.Close)
	for _, s := range stmts {
		_, err := db.Exec(s)
		Expect(err).NotTo(HaveOccurred(), s)
	}
	return db
}

// renderMaster renders sqlite_master in the fixtures' form: per row, a
// "-- <type> <name> ON <tbl_name>" line, then its sql (NULL when it has
// none) and ";", rows ordered by name and separated by a blank line.
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

func fixture(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

var _ = Describe("DDL", func() {
	DescribeTable("leaves exactly the fixture's sqlite_master",
		func(stmts func() []string, fixtureName string) {
			db := createDB(stmts()...)
			Expect(renderMaster(db)).To(Equal(fixture(fixtureName)))
		},
		Entry("the recorder file", func() []string {
			return append(append([]string{}, dbfiles.RecorderTableDDL...), dbfiles.RecorderIndexDDL...)
		}, "sqlite_master_recorder.sql"),
		Entry("the cache file", func() []string { return append([]string{dbfiles.CacheEntriesDDL}, dbfiles.CacheIndexDDL...) }, "sqlite_master_cache.sql"),
		Entry("the merged format", func() []string { return dbfiles.MergedDDL }, "sqlite_master_merged.sql"),
	)

	It("can run twice, as every statement has IF NOT EXISTS", func() {
		all := append(append(append([]string{}, dbfiles.RecorderTableDDL...), dbfiles.RecorderIndexDDL...), dbfiles.RecorderTableDDL...)
		db := createDB(append(all, dbfiles.RecorderIndexDDL...)...)
		Expect(renderMaster(db)).To(Equal(fixture("sqlite_master_recorder.sql")))
	})

	DescribeTable("describes each table's columns as PRAGMA table_info reports them",
		func(ddl, table string, want []dbfiles.Column, n int) {
			db := createDB(ddl)
			rows, err := db.Query("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid", table)
			Expect(err).NotTo(HaveOccurred())
			defer rows.Close()
			var got []dbfiles.Column
			for rows.Next() {
				var c dbfiles.Column
				var dflt sql.NullString
				var pk int
				Expect(rows.Scan(&c.Name, &c.Type, &c.NotNull, &dflt, &pk)).To(Succeed())
				c.Default, c.PrimaryKey = dflt.String, pk > 0
				got = append(got, c)
			}
			Expect(got).To(Equal(want))
			Expect(want).To(HaveLen(n))
		},
		Entry("events", dbfiles.EventsDDL, "events", dbfiles.EventColumns, 20),
		Entry("worker_config", dbfiles.WorkerConfigDDL, "worker_config", dbfiles.WorkerConfigColumns, 18),
		Entry("worker_state", dbfiles.WorkerStateDDL, "worker_state", dbfiles.WorkerStateColumns, 18),
	)

	It("keeps the spec's padding and drops worker_state's comments", func() {
		Expect(dbfiles.WorkerConfigDDL).To(ContainSubstring("    max_executors     INTEGER,\n"))
		Expect(dbfiles.WorkerStateDDL).NotTo(ContainSubstring("--"))
		Expect(dbfiles.RecorderIndexDDL).To(HaveLen(9))
		Expect(dbfiles.CacheIndexDDL).To(HaveLen(2))
	})
})
