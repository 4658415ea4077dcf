package recordstore_test

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// bound returns a kind "k" with a text column a, bound to table t by ddl.
func bound(ddl ...string) recordstore.Kind {
	return recordstore.Kind{Name: "k", Columns: []recordstore.Column{{Name: "a", Type: recordstore.TypeString}},
		Table: &recordstore.BoundTable{Name: "t", DDL: ddl}}
}

var _ = Describe("Bound kinds", func() {
	It("read and write the table binding as JSON", func() {
		src := `{"name":"k","columns":[{"name":"a","type":"string"}],"table":{"name":"t","ddl":["CREATE TABLE t (a TEXT)","CREATE INDEX i ON t(a)"]}}`
		var k recordstore.Kind
		Expect(json.Unmarshal([]byte(src), &k)).To(Succeed())
		Expect(k.Validate()).To(Succeed())
		Expect(k.Table).To(Equal(&recordstore.BoundTable{Name: "t", DDL: []string{"CREATE TABLE t (a TEXT)", "CREATE INDEX i ON t(a)"}}))
		out, err := json.Marshal(k)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(out)).To(ContainSubstring(`"table":{"name":"t","ddl":["CREATE TABLE t (a TEXT)","CREATE INDEX i ON t(a)"]}`))
		plain, err := json.Marshal(jobs())
		Expect(err).NotTo(HaveOccurred())
		Expect(string(plain)).NotTo(ContainSubstring(`"table"`))
	})

	It("clone their binding deeply", func() {
		k := bound("CREATE TABLE t (a TEXT)")
		c := k.Clone()
		c.Table.DDL[0] = "changed"
		c.Table.Name = "u"
		Expect(k.Table).To(Equal(&recordstore.BoundTable{Name: "t", DDL: []string{"CREATE TABLE t (a TEXT)"}}))
	})

	DescribeTable("accept DDL that only creates their table and its indexes",
		func(ddl ...string) {
			k := bound(ddl...)
			Expect(k.Validate()).To(Succeed())
		},
		Entry("a plain CREATE TABLE", "CREATE TABLE t (a TEXT)"),
		Entry("IF NOT EXISTS, a final semicolon and comments after it",
			"create table if not exists t (a TEXT); -- the table\n/* done */ "),
		Entry("a quoted table name, in another case", `CREATE TABLE "T" (a TEXT)`),
		Entry("a semicolon inside a string and an identifier",
			"CREATE TABLE [t] (a TEXT DEFAULT ';', \"b;c\" TEXT)"),
		Entry("indexes, unique and partial",
			"CREATE TABLE t (a TEXT)", "CREATE UNIQUE INDEX IF NOT EXISTS i ON t(a)", "CREATE INDEX j\n    ON `t`(a) WHERE a IS NOT NULL;"),
	)

	DescribeTable("refuse with ErrInvalid, naming the kind and the statement,",
		func(k recordstore.Kind, says string) {
			err := k.Validate()
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err.Error()).To(ContainSubstring("kind k"))
			Expect(err.Error()).To(ContainSubstring(says))
		},
		Entry("no DDL", bound(), "want 1 to"),
		Entry("two statements", bound("CREATE TABLE t (a TEXT); DROP TABLE x"), "statement 1"),
		Entry("two statements without spaces", bound("CREATE TABLE t (a TEXT);ATTACH 'x' AS y"), "more than one statement"),
		Entry("an empty statement", bound("CREATE TABLE t (a TEXT)", " ; "), "empty statement"),
		Entry("DROP", bound("CREATE TABLE t (a TEXT)", "DROP TABLE t"), "statement 2"),
		Entry("ATTACH", bound("ATTACH DATABASE 'x' AS t"), "want CREATE TABLE"),
		Entry("a first statement that is an index", bound("CREATE INDEX i ON t(a)"), "first statement must be CREATE TABLE"),
		Entry("a second CREATE TABLE", bound("CREATE TABLE t (a TEXT)", "CREATE TABLE u (a TEXT)"), "want CREATE [UNIQUE] INDEX"),
		Entry("another table", bound("CREATE TABLE u (a TEXT)"), "want CREATE TABLE t"),
		Entry("a temporary table", bound("CREATE TEMP TABLE t (a TEXT)"), "must be CREATE TABLE t"),
		Entry("a schema-qualified table", bound(`CREATE TABLE main."t" (a TEXT)`), "want CREATE TABLE t"),
		Entry("a schema-qualified index", bound("CREATE TABLE t (a TEXT)", "CREATE INDEX temp.i ON t(a)"), "INDEX <name> ON t"),
		Entry("an index on another table", bound("CREATE TABLE t (a TEXT)", "CREATE INDEX i ON u(a)"), "ON t"),
		Entry("a table made by a SELECT", bound("CREATE TABLE t AS SELECT 1 AS a"), "column list"),
		Entry("an unterminated string", bound("CREATE TABLE t (a TEXT DEFAULT 'x)"), "unterminated"),
		Entry("a reserved table name", func() recordstore.Kind {
			k := bound("CREATE TABLE sqlite_t (a TEXT)")
			k.Table.Name = "sqlite_t"
			return k
		}(), "reserved"),
		Entry("a malformed table name", func() recordstore.Kind {
			k := bound(`CREATE TABLE "a b" (a TEXT)`)
			k.Table.Name = "a b"
			return k
		}(), "table name"),
		Entry("retention", func() recordstore.Kind {
			k := bound("CREATE TABLE t (a TEXT)")
			k.Retention = &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(3600e9)}
			return k
		}(), "no retention"),
		Entry("indexes", func() recordstore.Kind {
			k := bound("CREATE TABLE t (a TEXT)")
			k.Indexes = [][]string{{"a"}}
			return k
		}(), "no indexes"),
	)

	It("refuse another binding, or added columns, as a schema change", func() {
		stored := bound("CREATE TABLE t (a TEXT)")
		_, st, err := recordstore.Reconcile(stored, bound("CREATE TABLE t (a TEXT)"), false)
		Expect(err).NotTo(HaveOccurred())
		Expect(st).To(Equal(recordstore.KindUnchanged))

		_, _, err = recordstore.Reconcile(stored, bound("CREATE TABLE t ( a TEXT )"), false)
		Expect(err).To(MatchError(recordstore.ErrSchemaConflict))
		unbound := stored.Clone()
		unbound.Table = nil
		_, _, err = recordstore.Reconcile(stored, unbound, false)
		Expect(err).To(MatchError(recordstore.ErrSchemaConflict))
		wider := stored.Clone()
		wider.Columns = append(wider.Columns, recordstore.Column{Name: "b", Type: recordstore.TypeString})
		_, _, err = recordstore.Reconcile(stored, wider, false)
		Expect(err).To(MatchError(recordstore.ErrSchemaConflict))
	})
})
