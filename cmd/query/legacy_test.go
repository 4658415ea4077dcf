// A kind an earlier build stored under looser rules (here, a json key
// column): it still loads, kind apply of it as it is says unchanged, and
// appends to it go on — directly and, with query serve owning the store,
// through the spool with its schema.

package main_test

import (
	"database/sql"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	_ "modernc.org/sqlite"
)

const (
	// legacyKinds is the kind as an earlier build accepted it: its key is
	// a json column.
	legacyKinds = `{"kinds":[{"name":"legacy","columns":[{"name":"doc","type":"json"},{"name":"n","type":"integer"}],"key":["doc"]}]}`
	// legacyAsString is the same kind with a string key, which today's
	// rules accept; its table is the same (string and json are TEXT).
	legacyAsString = `{"kinds":[{"name":"legacy","columns":[{"name":"doc","type":"string"},{"name":"n","type":"integer"}],"key":["doc"]}]}`
)

// storeLegacyKind declares kind legacy with a string key, then rewrites
// its stored declaration to the json key an earlier build would have
// stored.
func storeLegacyKind(s *store) {
	GinkgoHelper()
	s.ok(legacyAsString, "kind", "apply", "-")
	db, err := sql.Open("sqlite", filepath.Join(s.dir, "v1", "records.sqlite"))
	Expect(err).NotTo(HaveOccurred())
	defer db.Close()
	_, err = db.Exec(`UPDATE record_kinds SET schema = replace(schema, '"type":"string"', '"type":"json"') WHERE name = 'legacy'`)
	Expect(err).NotTo(HaveOccurred())
}

var _ = Describe("a kind stored under earlier rules", func() {
	for _, served := range []bool{false, true} {
		name := "with no owner running"
		if served {
			name = "with query serve owning the store"
		}
		Context(name, func() {
			It("loads, is unchanged when applied as it is, takes appends, and refuses a change that breaks today's rules", func() {
				s := newStore()
				storeLegacyKind(s)
				if served {
					startServe(s)
				}
				Expect(s.ok("", "kind", "list")).To(ContainSubstring(`{"name":"doc","type":"json"}`))
				Expect(s.ok(legacyKinds, "kind", "apply", "-")).To(Equal(`{"name":"legacy","status":"unchanged"}` + "\n"))
				s.ok(`{"doc": {"x": 1}, "n": 1}`, "append", "--stream", "l1", "--kind", "legacy")
				Expect(strings.Count(s.ok("", "scan", "--stream", "l1"), "\n")).To(Equal(1))

				changed := strings.Replace(legacyKinds, `{"name":"n","type":"integer"}`, `{"name":"n","type":"integer"},{"name":"extra","type":"string"}`, 1)
				r := s.run(changed, "kind", "apply", "-")
				Expect(r.code).To(Equal(1))
				Expect(r.stderr).To(ContainSubstring("query: invalid: kind legacy: key column doc is json"))
				Expect(s.ok("", "kind", "list")).NotTo(ContainSubstring("extra"))
			})
		})
	}
})
