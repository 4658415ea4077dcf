// A spooled append large enough to stream its rows into the batch's data
// file gets the answers of one that holds them: the rows in the catalog's
// order, a repeated key refused by the same message, nothing left behind.

package main_test

import (
	"fmt"
	"strings"

	"github.com/fb46ecde/records/recordstore/spool"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("query append through the spool of 5 000 keyed rows", Label("integration"), func() {
	const keyed = `{"kinds":[{"name":"kv","columns":[{"name":"k","type":"string"},{"name":"v","type":"integer"}],"key":["k"]}]}`

	// rows is 5 000 rows {"k":"key-N","v":N}; dup, when not zero, gives
	// row dup (from 1) the key of row 1.
	rows := func(dup int) string {
		var b strings.Builder
		for i := 1; i <= 5000; i++ {
			k := i
			if i == dup {
				k = 1
			}
			fmt.Fprintf(&b, "{\"v\":%d,\"k\":\"key-%d\"}\n", i, k)
		}
		return b.String()
	}

	var s *store
	BeforeEach(func() {
		s = newStore()
		s.ok("", "kind", "apply", writeFile(s.dir, "kv.json", keyed))
		session, _ := startServe(s)
		Eventually(logOf(session)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))
	})

	It("appends them with the catalog's declaration, every row as it was read", func() {
		Expect(s.one(rows(0), "append", "--stream", "k1", "--kind", "kv")).To(And(
			HaveKeyWithValue("appended", num("5000")), HaveKeyWithValue("role", "spooled")))
		got := s.lines("", "scan", "--stream", "k1")
		Expect(got).To(HaveLen(5000))
		Expect(got[4999]).To(And(HaveKeyWithValue("k", "key-5000"), HaveKeyWithValue("v", num("5000"))))
	})

	It("refuses a key repeated 4 999 rows apart as a held append does, publishing nothing", func() {
		r := s.run(rows(5000), "append", "--stream", "k1", "--kind", "kv")
		Expect(r.code).To(Equal(1), r.stderr)
		Expect(r.stderr).To(Equal("query: invalid: append to k1: kind kv: rows 1 and 5000 have the same key\n"))
		Expect(s.entries(spool.StateIncoming)).To(BeEmpty())
		Expect(s.entries(spool.StateFailed)).To(BeEmpty())
		Expect(s.entries(spool.StateTmp)).To(BeEmpty())
		Expect(s.run("", "scan", "--stream", "k1").stderr).To(ContainSubstring("not_found"))
	})
})
