// The limits of one append from the command line: the same input is
// refused alike whether query append owns the store or writes through the
// spool to a query serve, and the refusal says how to append it anyway.

package main_test

import (
	"fmt"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// tinyRows is n NDJSON rows {"i":0}...
func tinyRows(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "{\"i\":%d}\n", i)
	}
	return b.String()
}

var _ = Describe("query append past the limits of one append", Label("integration"), func() {
	const tinyKinds = `{"kinds":[{"name":"tiny","columns":[{"name":"i","type":"integer"}]}]}`

	DescribeTable("refuses 1 000 001 rows in either role, naming the line, suggesting --batch-rows, and writes nothing",
		func(withServe bool) {
			s := newStore()
			schema := writeFile(s.dir, "tiny.json", tinyKinds)
			if withServe {
				session, _ := startServe(s)
				Eventually(logOf(session)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))
			}
			r := s.run(tinyRows(1_000_001), "append", "--stream", "t1", "--kind", "tiny", "--schema", schema)
			Expect(r.code).To(Equal(1), r.stderr)
			Expect(r.stderr).To(HavePrefix("query: capacity: "))
			Expect(r.stderr).To(ContainSubstring("stdin line 1000001: "))
			Expect(r.stderr).To(ContainSubstring("more than 1000000 rows in one append"))
			Expect(r.stderr).To(ContainSubstring("pass --batch-rows N"))
			Expect(s.run("", "scan", "--stream", "t1").stderr).To(ContainSubstring("not_found"))
			Expect(s.ok("", "kind", "list")).NotTo(ContainSubstring("tiny"), "the kind --schema declares is not declared either")

			res := s.one(tinyRows(1_000_001), "append", "--stream", "t1", "--kind", "tiny", "--schema", schema, "--batch-rows", "500000")
			Expect(res).To(HaveKeyWithValue("appended", num("1000001")))
			Expect(res).To(HaveKeyWithValue("batches", num("3")))
		},
		Entry("as the owner", false),
		Entry("through the spool, query serve owning the store", true),
	)
})

var _ = Describe("query append of a long input with a bad row near its end", Label("integration"), func() {
	const tinyKinds = `{"kinds":[{"name":"tiny","columns":[{"name":"i","type":"integer"}]}]}`

	DescribeTable("refuses the whole append in either role, naming the line, and leaves nothing: no rows, no kind, no scratch file",
		func(withServe bool) {
			s := newStore()
			schema := writeFile(s.dir, "tiny.json", tinyKinds)
			if withServe {
				session, _ := startServe(s)
				Eventually(logOf(session)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))
			}
			lines := strings.SplitAfter(tinyRows(950_000), "\n")
			lines[899_999] = "{\"i\":\"not a number\"}\n"
			r := s.run(strings.Join(lines, ""), "append", "--stream", "t1", "--kind", "tiny", "--schema", schema)
			Expect(r.code).To(Equal(1), r.stderr)
			Expect(r.stderr).To(HavePrefix("query: invalid: "))
			Expect(r.stderr).To(ContainSubstring("stdin line 900000: "))
			Expect(s.run("", "scan", "--stream", "t1").stderr).To(ContainSubstring("not_found"))
			Expect(s.ok("", "kind", "list")).NotTo(ContainSubstring("tiny"), "the kind --schema declares is not declared either")
			spills, err := filepath.Glob(filepath.Join(s.dir, ".rows-*"))
			Expect(err).NotTo(HaveOccurred())
			Expect(spills).To(BeEmpty())
		},
		Entry("as the owner", false),
		Entry("through the spool, query serve owning the store", true),
	)
})
