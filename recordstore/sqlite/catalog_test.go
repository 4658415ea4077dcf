// Specs for the kind catalog: case-insensitive table names, reserved
// prefixes, additive ALTER, keyed and declared indexes.

package sqlite_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("the kind catalog", func() {
	It("refuses a second kind that differs only in case, writing nothing", func() {
		b := openStore(newClock())
		k := eventsKind()
		k.Name = "Jobs"
		Expect(declare(b, k)).To(Equal(recordstore.KindCreated))
		k.Name = "jobs"
		_, err := b.DeclareKind(ctx, k)
		Expect(errors.Is(err, recordstore.ErrSchemaConflict)).To(BeTrue(), "%v", err)
		kinds, err := b.Kinds(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(kinds).To(HaveLen(1))
		Expect(kinds[0].Name).To(Equal("Jobs"))
		_, err = b.Kind(ctx, "jobs")
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue())
	})

	DescribeTable("refuses kind names that would collide with SQLite's or our own tables",
		func(name string) {
			b := openStore(newClock())
			k := eventsKind()
			k.Name = name
			_, err := b.DeclareKind(ctx, k)
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)
		},
		Entry("record_streams", "record_streams"),
		Entry("Record_x", "Record_x"),
		Entry("sqlite_master", "sqlite_master"),
	)

	It("adds a column with ALTER TABLE and keeps old rows, null in the new column", func() {
		b := openStore(newClock())
		declare(b, eventsKind())
		mustAppend(b, "s", "events", recordstore.Row{"name": "old"})
		k := eventsKind()
		k.Columns = append(k.Columns, recordstore.Column{Name: "extra", Type: recordstore.TypeInteger})
		Expect(declare(b, k)).To(Equal(recordstore.KindUpdated))
		mustAppend(b, "s", "events", recordstore.Row{"name": "new", "extra": 7})

		recs := mustScan(b, "s")
		Expect(recs).To(HaveLen(2))
		Expect(recs[0].Values).To(HaveKeyWithValue("extra", BeNil()))
		Expect(recs[1].Values).To(HaveKeyWithValue("extra", int64(7)))
		db := rawDB(b)
		Expect(rawCount(db, `SELECT count(*) FROM events WHERE extra IS NULL`)).To(BeEquivalentTo(1))
		stored, err := b.Kind(ctx, "events")
		Expect(err).NotTo(HaveOccurred())
		Expect(stored.Columns).To(HaveLen(7))
		Expect(declare(b, k)).To(Equal(recordstore.KindUnchanged))
	})

	It("refuses a changed column type with ErrSchemaConflict and keeps the table", func() {
		b := openStore(newClock())
		declare(b, eventsKind())
		k := eventsKind()
		k.Columns[1].Type = recordstore.TypeString
		_, err := b.DeclareKind(ctx, k)
		Expect(errors.Is(err, recordstore.ErrSchemaConflict)).To(BeTrue())
		Expect(rawCount(rawDB(b), `SELECT count(*) FROM pragma_table_info('events') WHERE name = 'n' AND type = 'INTEGER'`)).To(BeEquivalentTo(1))
	})

	It("indexes the key per stream and creates the declared indexes", func() {
		b := openStore(newClock())
		k := keyedKind("users", recordstore.ConflictSkip)
		k.Indexes = [][]string{{"v"}, {"ver", "tie"}}
		declare(b, k)
		db := rawDB(b)
		Expect(rawCount(db, `SELECT count(*) FROM pragma_index_list('users') WHERE "unique" = 1 AND name = 'users:key'`)).To(BeEquivalentTo(1))
		Expect(rawCount(db, `SELECT count(*) FROM pragma_index_info('users:key')`)).To(BeEquivalentTo(2))
		Expect(rawCount(db, `SELECT count(*) FROM pragma_index_info('users:ix2')`)).To(BeEquivalentTo(2))
		var detail string
		Expect(db.QueryRow(`EXPLAIN QUERY PLAN SELECT * FROM users WHERE _seq_stream = 1 AND id = 'x'`).Scan(new(int), new(int), new(int), &detail)).To(Succeed())
		Expect(detail).To(ContainSubstring("users:key"))
	})

	It("lists kinds sorted by name", func() {
		b := openStore(newClock())
		for _, n := range []string{"zeta", "Alpha", "mid"} {
			k := eventsKind()
			k.Name = n
			declare(b, k)
		}
		kinds, err := b.Kinds(ctx)
		Expect(err).NotTo(HaveOccurred())
		names := []string{}
		for _, k := range kinds {
			names = append(names, k.Name)
		}
		Expect(names).To(Equal([]string{"Alpha", "mid", "zeta"}))
	})
})
