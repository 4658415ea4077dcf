// Specs: declaring kinds — created, unchanged, updated by added columns, and
// every change that is a schema conflict.

package recordstoretest

import (
	"encoding/json"
	"reflect"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

func (s *suite) describeKinds() {
	Describe("kinds", func() {
		It("creates a kind and returns it with its conflict policy filled in", func() {
			st, err := s.b.DeclareKind(s.ctx, s.bindDeclared(eventKind()))
			Expect(err).NotTo(HaveOccurred())
			Expect(st).To(Equal(recordstore.KindCreated))
			got, err := s.b.Kind(s.ctx, "event")
			Expect(err).NotTo(HaveOccurred())
			want := s.bindDeclared(eventKind())
			want.OnConflict = recordstore.ConflictSkip
			Expect(got.String()).To(Equal(want.String()))
		})

		It("keeps every part of a declaration", func() {
			k := recordstore.Kind{Name: "full", Columns: []recordstore.Column{
				{Name: "id", Type: recordstore.TypeString},
				{Name: "ver", Type: recordstore.TypeInteger, Required: true},
				{Name: "node", Type: recordstore.TypeString},
				{Name: "at", Type: recordstore.TypeDatetime},
			}, Key: []string{"id"}, OnConflict: recordstore.ConflictLWW,
				LWW:        &recordstore.LWW{Version: "ver", Tiebreak: "node"},
				Retention:  &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(time.Hour)},
				TimeColumn: "at", Indexes: [][]string{{"at"}, {"node", "ver"}}}
			if !s.h.supports(recordstore.ConflictLWW) {
				k.OnConflict, k.LWW = recordstore.ConflictSkip, nil
			}
			s.declare(k)
			got, err := s.b.Kind(s.ctx, "full")
			Expect(err).NotTo(HaveOccurred())
			Expect(got.String()).To(Equal(k.String()))
		})

		It("lists declared kinds by name in byte order", func() {
			for _, name := range []string{"zeta", "alpha", "Mid"} {
				k := eventKind()
				k.Name = name
				s.declare(k)
			}
			kinds, err := s.b.Kinds(s.ctx)
			Expect(err).NotTo(HaveOccurred())
			names := []string{}
			for _, k := range kinds {
				names = append(names, k.Name)
			}
			Expect(names).To(Equal([]string{"Mid", "alpha", "zeta"}))
		})

		It("reports an identical declaration as unchanged, an unset policy matching skip", func() {
			s.declare(eventKind())
			again := eventKind()
			again.OnConflict = recordstore.ConflictSkip
			for _, k := range []recordstore.Kind{eventKind(), again} {
				st, err := s.b.DeclareKind(s.ctx, s.bindDeclared(k))
				Expect(err).NotTo(HaveOccurred())
				Expect(st).To(Equal(recordstore.KindUnchanged))
			}
		})

		It("adds columns: updated, stored after the old ones, null in old rows, writable in new ones", func() {
			s.skipBound("a bound kind's binding never changes, so it is never widened")
			s.declare(eventKind())
			s.append("orders", "event", events(1, 1)...)
			wider := eventKind()
			wider.Columns = append(wider.Columns, recordstore.Column{Name: "extra", Type: recordstore.TypeJSON})
			st, err := s.b.DeclareKind(s.ctx, wider)
			Expect(err).NotTo(HaveOccurred())
			Expect(st).To(Equal(recordstore.KindUpdated))
			got, err := s.b.Kind(s.ctx, "event")
			Expect(err).NotTo(HaveOccurred())
			wider.OnConflict = recordstore.ConflictSkip
			Expect(got.String()).To(Equal(wider.String()))

			s.append("orders", "event", recordstore.Row{"n": 2, "extra": map[string]any{"a": 1}})
			recs := s.scan("orders")
			Expect(recs[0].Values).To(HaveKeyWithValue("extra", BeNil()))
			Expect(string(recs[1].Values["extra"].(json.RawMessage))).To(Equal(`{"a":1}`))

			st, err = s.b.DeclareKind(s.ctx, wider)
			Expect(err).NotTo(HaveOccurred())
			Expect(st).To(Equal(recordstore.KindUnchanged))
		})

		DescribeTable("refuses a redeclaration that changes anything but added columns, keeping the stored kind",
			func(change func(*recordstore.Kind)) {
				base := itemKind(recordstore.ConflictSkip)
				base.Retention = &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(time.Hour)}
				base.Indexes = [][]string{{"v"}}
				changed := base
				changed.Columns = append([]recordstore.Column(nil), base.Columns...)
				change(&changed)
				if s.bound() {
					if !reflect.DeepEqual(changed.Retention, base.Retention) || !reflect.DeepEqual(changed.Indexes, base.Indexes) {
						Skip("bound kinds: a bound kind has no retention or indexes to change")
					}
					base.Retention, base.Indexes, changed.Retention, changed.Indexes = nil, nil, nil, nil
				}
				s.declare(base)
				before := s.snapshot()
				_, err := s.b.DeclareKind(s.ctx, s.bindDeclared(changed))
				expectRefused(err, recordstore.ErrSchemaConflict, "schema_conflict")
				s.expectUnchanged(before)
			},
			Entry("a column's type", func(k *recordstore.Kind) { k.Columns[1].Type = recordstore.TypeString }),
			Entry("a column made required", func(k *recordstore.Kind) { k.Columns[2].Required = true }),
			Entry("a column dropped", func(k *recordstore.Kind) { k.Columns = k.Columns[:2] }),
			Entry("the key", func(k *recordstore.Kind) { k.Key = []string{"id", "v"} }),
			Entry("the key removed", func(k *recordstore.Kind) { k.Key = nil }),
			Entry("the conflict policy", func(k *recordstore.Kind) { k.OnConflict = recordstore.ConflictReplace }),
			Entry("the retention ttl", func(k *recordstore.Kind) {
				k.Retention = &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(2 * time.Hour)}
			}),
			Entry("the retention mode", func(k *recordstore.Kind) {
				k.Retention = &recordstore.Retention{Mode: recordstore.RetainStream, TTL: recordstore.Duration(time.Hour)}
			}),
			Entry("the retention removed", func(k *recordstore.Kind) { k.Retention = nil }),
			Entry("the indexes", func(k *recordstore.Kind) { k.Indexes = [][]string{{"note"}} }),
		)

		It("refuses to change the lww columns of a kind", func() {
			s.requirePolicy(recordstore.ConflictLWW)
			s.declare(lwwKind())
			before := s.snapshot()
			changed := lwwKind()
			changed.LWW = &recordstore.LWW{Version: "v", Tiebreak: "node"}
			_, err := s.b.DeclareKind(s.ctx, s.bindDeclared(changed))
			expectRefused(err, recordstore.ErrSchemaConflict, "schema_conflict")
			s.expectUnchanged(before)
		})

		It("refuses a declaration with a policy the backend does not implement", func() {
			if len(s.h.Unsupported) == 0 {
				Skip("the backend implements every conflict policy")
			}
			before := s.snapshot()
			for _, p := range s.h.Unsupported {
				k := itemKind(p)
				if p == recordstore.ConflictLWW {
					k = lwwKind()
				}
				_, err := s.b.DeclareKind(s.ctx, k)
				expectRefused(err, recordstore.ErrUnsupported, "unsupported")
			}
			s.expectUnchanged(before)
		})
	})
}
