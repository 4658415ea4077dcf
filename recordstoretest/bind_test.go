// Specs of BindTable: the bound kind it makes of a suite kind.

package recordstoretest

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("BindTable", func() {
	DescribeTable("binds a kind to a table of its name made from its columns, a valid bound kind",
		func(k recordstore.Kind, ddl []string) {
			bound := BindTable(k)
			Expect(bound.Table).To(Equal(&recordstore.BoundTable{Name: k.Name, DDL: ddl}))
			valid := BindTable(k)
			Expect(valid.Validate()).To(Succeed())
			bound.Table = nil
			Expect(bound).To(Equal(k), "the rest of the kind as given")
		},
		Entry("an unkeyed kind: the seq column is id", eventKind(), []string{
			`CREATE TABLE event ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "n" INTEGER NOT NULL, "msg" TEXT)`}),
		Entry("a kind with a column id: the seq column is _seq, and the key a UNIQUE index", itemKind(recordstore.ConflictSkip), []string{
			`CREATE TABLE item_skip ("_seq" INTEGER PRIMARY KEY AUTOINCREMENT, "id" TEXT, "v" INTEGER, "note" TEXT)`,
			`CREATE UNIQUE INDEX item_skip_key ON item_skip ("id")`}),
		Entry("every column type by its affinity", allTypesKind(), []string{
			`CREATE TABLE all_types ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "s" TEXT, "i" INTEGER, "f" REAL, "b" INTEGER, "t" TEXT, "j" TEXT)`}),
	)

	It("leaves the kind it is given untouched", func() {
		k := itemKind(recordstore.ConflictReplace)
		before := jsonText(k)
		BindTable(k)
		Expect(jsonText(k)).To(Equal(before))
	})
})
