// A bound kind across processes: a producer child's spooled appends to a
// kind bound to a caller-made table land exactly once, seq = the table's
// id, and a second stream of the kind is refused as the producer's error.

package owner_test

import (
	"database/sql"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
	rt "github.com/fb46ecde/records/recordstoretest"
)

// boundEventKind is eventKind bound to table ev, whose AUTOINCREMENT id
// holds the seq.
func boundEventKind() *recordstore.Kind {
	k := eventKind()
	k.Table = &recordstore.BoundTable{Name: "ev", DDL: []string{
		"CREATE TABLE IF NOT EXISTS ev (\n    id INTEGER PRIMARY KEY AUTOINCREMENT,\n    k TEXT NOT NULL,\n    n INTEGER,\n    msg TEXT\n);",
		"CREATE INDEX IF NOT EXISTS ev_k ON ev(k);",
	}}
	return k
}

var _ = Describe("a bound kind across processes", Label("integration"), func() {
	It("lands a producer child's spooled appends exactly once, seq = id, and refuses a second stream", func() {
		path := storePath()
		own := rt.MustStartChild(rt.Script{Path: path, Steps: []rt.Step{
			open(fast()).Named("open"), waitRole(owner.RoleOwner).Named("become-owner"),
			declare(boundEventKind()).Named("declare"), hold().Named("hold"), closeStore().Named("close"),
		}})
		own.MustStepNamed("declare", wait)

		p := startProducer(path, fast(), nil,
			appendGen("w", "b", 0, 5).Named("first"), appendGen("w", "b", 5, 5).Named("again"),
			appendGen("other", "x", 0, 1).Named("second-stream"), closeStore())
		Expect(p.MustStepNamed("open", wait).Role).To(Equal(string(owner.RoleNonOwner)))
		first, again := appendResult(p.MustStepNamed("first", wait)), appendResult(p.MustStepNamed("again", wait))
		Expect([]int64{first.From, first.To, again.From, again.To}).To(Equal([]int64{1, 5, 6, 10}))
		refused, err := p.StepNamed("second-stream", wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(refused.OK).To(BeFalse())
		Expect(refused.Code).To(Equal("invalid"))
		Expect(refused.Error).To(ContainSubstring("holds stream w"))
		p.MustFinish(wait)
		Expect(own.Release()).To(Succeed())
		own.MustFinish(wait)

		recs := finalRows(path, "w")
		Expect(keyCounts(recs)).To(HaveLen(10), "each row once")
		for i, r := range recs {
			Expect(r.Seq).To(BeEquivalentTo(i + 1))
			Expect(r.Values["k"]).To(Equal(rt.GenKey("b", i)), "row %d in order", i)
		}
		db, err := sql.Open("sqlite", sqlite.LivePath(path))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(db.Close)
		var n, maxID, seq int64
		Expect(db.QueryRow(`SELECT count(*), max(id), (SELECT seq FROM sqlite_sequence WHERE name = 'ev') FROM ev`).Scan(&n, &maxID, &seq)).To(Succeed())
		Expect([]int64{n, maxID, seq}).To(Equal([]int64{10, 10, 10}))
	})
})
