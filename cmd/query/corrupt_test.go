// query status of a store whose owner met a damaged live file: a real
// damaged page read by query serve, the damage answered over the socket
// and recorded in the state file's heartbeat, and status failing on it.

package main_test

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	_ "modernc.org/sqlite"
)

// damagedRows rows are appended to the stream whose page is damaged; the
// damaged one, damagedRow, is far from the first page of the table.
const (
	damagedRows = 3000
	damagedRow  = 2500
)

// paddedMsg is the msg of row i: unique bytes in the live file, and long
// enough that the rows fill many pages.
func paddedMsg(i int) string { return fmt.Sprintf("row-%05d-%s", i, strings.Repeat("x", 80)) }

// overwritePageOf checkpoints the live file's WAL into it, then overwrites
// with 0xff the page that holds marker.
func overwritePageOf(live, marker string) {
	db, err := sql.Open("sqlite", live)
	Expect(err).NotTo(HaveOccurred())
	var busy, frames, moved int64
	Expect(db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &moved)).To(Succeed())
	Expect(busy).To(BeZero(), "no other process has the file open")
	Expect(db.Close()).To(Succeed())
	data, err := os.ReadFile(live)
	Expect(err).NotTo(HaveOccurred())
	at := bytes.Index(data, []byte(marker))
	Expect(at).To(BeNumerically(">", 0), "the row is in the live file")
	size := int(binary.BigEndian.Uint16(data[16:18])) // the header's page size; 1 means 65536
	if size == 1 {
		size = 65536
	}
	f, err := os.OpenFile(live, os.O_WRONLY, 0)
	Expect(err).NotTo(HaveOccurred())
	_, err = f.WriteAt(bytes.Repeat([]byte{0xff}, size), int64(at/size*size))
	Expect(err).NotTo(HaveOccurred())
	Expect(f.Close()).To(Succeed())
}

// stateCorrupt returns the corrupt field of the store's state file, nil
// when it has none.
func stateCorrupt(s *store) func() map[string]any {
	return func() map[string]any {
		raw, err := os.ReadFile(s.path + ".owner.json")
		Expect(err).NotTo(HaveOccurred())
		var st struct {
			Corrupt map[string]any `json:"corrupt"`
		}
		Expect(json.Unmarshal(raw, &st)).To(Succeed())
		return st.Corrupt
	}
}

var _ = Describe("query status of a store whose owner met a damaged live file", func() {
	It("prints the damage as corrupt and exits 1, whether the owner answers or only its state file does", func() {
		s := newStore()
		s.ok("", "kind", "apply", kindsFile())
		var rows strings.Builder
		for i := 1; i <= damagedRows; i++ {
			fmt.Fprintf(&rows, `{"msg":%q}`+"\n", paddedMsg(i))
		}
		s.ok(rows.String(), "append", "--stream", "big", "--kind", "events")
		overwritePageOf(filepath.Join(s.dir, "v1", "records.sqlite"), paddedMsg(damagedRow))

		session, base := startServe(s)
		healthy := s.one("", "status")
		Expect(keys(healthy)).To(ConsistOf(statusKeys), "no corrupt field before the owner meets the damage")

		By("the owner reads the damaged page")
		resp, err := client.Get(base + "/api/v1/streams/big/rows")
		Expect(err).NotTo(HaveOccurred())
		_, _ = io.Copy(io.Discard, resp.Body) // cut short when the page is met: the error is not the point
		resp.Body.Close()
		code, _, _ := get(base + "/healthz")
		Expect(code).To(Equal(503), "the owner met the damage")

		By("status asks the owner over its socket")
		r := s.run("", "status")
		Expect(r.code).To(Equal(1), r.stderr)
		Expect(r.stderr).To(HavePrefix("query: corrupt: "))
		Expect(r.stderr).To(ContainSubstring("damaged live file"))
		st := decodeLines(r.stdout)
		Expect(st).To(HaveLen(1), "the status is printed before it fails")
		Expect(keys(st[0])).To(ConsistOf(append(statusKeys, "corrupt")))
		Expect(st[0]).To(HaveKeyWithValue("socketAlive", true))
		Expect(st[0]["corrupt"]).To(ContainSubstring("malformed"))
		damage := st[0]["corrupt"]

		By("the state file records it at the next heartbeat, and status reads it there once the owner is gone")
		Eventually(stateCorrupt(s)).WithTimeout(liveness).Should(HaveKeyWithValue("code", "corrupt"))
		Expect(stateCorrupt(s)()).To(HaveKeyWithValue("message", damage))
		session.Kill()
		Eventually(session).WithTimeout(liveness).Should(gexec.Exit())
		r = s.run("", "status")
		Expect(r.code).To(Equal(1), r.stderr)
		Expect(r.stderr).To(HavePrefix("query: corrupt: "))
		st = decodeLines(r.stdout)
		Expect(st).To(HaveLen(1))
		Expect(st[0]).To(HaveKeyWithValue("socketAlive", false))
		Expect(st[0]).To(HaveKeyWithValue("corrupt", damage))
	})
})
