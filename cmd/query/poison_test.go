// A poison batch met by short-lived owners: another process's batch that
// SQLite refuses every time (its kind's table was given, by hand, a
// trigger that aborts every insert) is tried by each query append, which
// still applies its own rows and exits 0, and the fifth try sends it to
// failed/.

package main_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	_ "modernc.org/sqlite"
)

// refuseInserts adds to the live file, through SQLite itself, a trigger
// that aborts every insert into table.
func refuseInserts(live, table string) {
	db, err := sql.Open("sqlite", live)
	Expect(err).NotTo(HaveOccurred())
	defer db.Close()
	_, err = db.Exec(fmt.Sprintf(`CREATE TRIGGER refuse_%[1]s BEFORE INSERT ON %[1]s BEGIN SELECT RAISE(ABORT, 'inserts refused by hand'); END`, table))
	Expect(err).NotTo(HaveOccurred())
}

var _ = Describe("a batch SQLite refuses every time, met by short-lived owners", func() {
	It("is tried by each query append, which applies its own rows and exits 0 with a warning, and is failed at the fifth try", func() {
		s := newStore()
		s.ok("", "kind", "apply", kindsFile())
		refuseInserts(filepath.Join(s.dir, "v1", "records.sqlite"), "jobs")
		bad := s.publish()
		failedDir := filepath.Join(spool.PathFor(s.path), string(spool.StateFailed))

		// Each command tries the batch at least once (twice when its retry
		// delay passes before it exits); every try is one log line.
		runs, tries := 0, 0
		for runs < owner.RepeatLimit {
			runs++
			r := s.run(fmt.Sprintf(`{"msg":"own-%d"}`, runs), "append", "--stream", "e", "--kind", "events")
			GinkgoWriter.Printf("run %d:\n%s", runs, r.stderr)
			Expect(r.code).To(Equal(0), "run %d: %s", runs, r.stderr)
			Expect(decodeLines(r.stdout)).To(HaveLen(1), "its own append's result")
			Expect(r.stderr).To(ContainSubstring("level=WARN"), "run %d warns about the other batch", runs)
			Expect(r.stderr).To(ContainSubstring("inserts refused by hand"))
			n := strings.Count(r.stderr, "batch="+bad)
			Expect(n).To(BeNumerically(">=", 1), "run %d tried the batch: %s", runs, r.stderr)
			Expect(strings.Count(r.stderr, "inserts refused by hand")).To(Equal(n), "each try logged once: %s", r.stderr)
			tries += n
			if _, err := os.Stat(filepath.Join(failedDir, bad)); err == nil {
				Expect(r.stderr).To(ContainSubstring(`msg="batch failed"`))
				break
			}
			Expect(r.stderr).To(ContainSubstring(`msg="batch failed; will retry"`))
		}
		Expect(tries).To(Equal(owner.RepeatLimit), "failed at the fifth try")
		errJSON, err := os.ReadFile(filepath.Join(failedDir, bad, "error.json"))
		Expect(err).NotTo(HaveOccurred(), "the batch is in failed/ with its error")
		Expect(string(errJSON)).To(ContainSubstring("gave up after 5 tries"))
		own := []string{}
		for i := 1; i <= runs; i++ {
			own = append(own, fmt.Sprintf("own-%d", i))
		}
		Expect(s.msgs("e")).To(Equal(own), "every command's own rows")
	})
})
