// Batch specs: the result of every kind of entry, entries refused on their
// own (rolled back alone, the rest of the batch committed), batches failed
// as a whole (Failure) and put back (Retry).

package recordstoretest

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// withoutStream returns snap without stream id, for comparing everything
// but the stream a spec's accepted entries wrote to.
func withoutStream(snap storeSnapshot, id string) storeSnapshot {
	out := storeSnapshot{Kinds: snap.Kinds, Rows: map[string]string{}}
	for _, m := range snap.Streams {
		if !strings.HasPrefix(m, `{"stream":"`+id+`",`) {
			out.Streams = append(out.Streams, m)
		}
	}
	for k, v := range snap.Rows {
		if k != id {
			out.Rows[k] = v
		}
	}
	return out
}

func (s *batchSuite) describeBatchEntries() {
	Describe("entries", func() {
		It("gives every entry its result in entry order: Append, Meta, Status, nothing for a delete", func() {
			s.ensureKind("event", "s") // declared before, so that the declare entry finds it unchanged
			s.append("t", "event", events(1, 2)...)
			s.append("gone", "event", events(1, 1)...)
			s.clock.Advance(time.Second)
			cut := s.clock.Now()
			sealAfter := s.eventEntry("s", 1, 1)
			sealAfter.Seal = true
			res := s.applyOne(s.newBatch(
				recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: s.kindAt("event", "s")},
				sealAfter,
				recordstore.BatchEntry{Op: recordstore.OpReopen, Stream: "s", Generation: 1},
				recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: "s", TTL: time.Hour},
				recordstore.BatchEntry{Op: recordstore.OpTrim, Stream: "t", Before: cut},
				recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "t"},
				recordstore.BatchEntry{Op: recordstore.OpDelete, Stream: "gone"},
				recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "empty", Kind: s.kindAt("event", "empty")},
				recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "empty-sealed", Kind: s.kindAt("event", "empty-sealed"), Seal: true},
			))
			s.expectCommitted(res)
			Expect(entryCodes(res)).To(Equal([]string{"", "", "", "", "", "", "", "", ""}))
			ops := make([]recordstore.BatchOp, len(res.Entries))
			for i, e := range res.Entries {
				ops[i] = e.Op
			}
			Expect(ops).To(Equal([]recordstore.BatchOp{recordstore.OpDeclare, recordstore.OpAppend, recordstore.OpReopen,
				recordstore.OpExpire, recordstore.OpTrim, recordstore.OpSeal, recordstore.OpDelete, recordstore.OpAppend, recordstore.OpAppend}))

			Expect(res.Entries[0].Status).To(Equal(recordstore.KindUnchanged))
			Expect(appendOf(res.Entries[1])).To(Equal(recordstore.AppendResult{Stream: "s", Kind: s.ev("s"), From: 1, To: 1, Appended: 1}))
			Expect(metaOf(res.Entries[1]).Sealed).To(BeTrue(), "an append with Seal gives the sealed stream's meta too")
			Expect(metaOf(res.Entries[2]).Sealed).To(BeFalse())
			expectMeta(metaOf(res.Entries[3]), s.meta("s"))
			Expect(metaOf(res.Entries[3]).ExpiresAt).NotTo(BeNil())
			Expect(metaOf(res.Entries[4]).Total).To(BeZero(), "trimmed")
			expectMeta(metaOf(res.Entries[5]), s.meta("t"))
			Expect(res.Entries[6].Meta).To(BeNil())
			Expect(res.Entries[6].Stream).To(Equal("gone"))
			_, err := s.b.Meta(s.ctx, "gone")
			expectNotFound(err)
			Expect(appendOf(res.Entries[7])).To(Equal(recordstore.AppendResult{Stream: "empty", Kind: s.ev("empty"), From: 1, To: 0}),
				"a zero-row append creates the stream")
			m := s.meta("empty")
			Expect([]int64{m.Generation, m.Total, m.HighSeq}).To(Equal([]int64{1, 0, 0}))
			Expect(metaOf(res.Entries[8]).Sealed).To(BeTrue(), "a zero-row append with Seal creates the stream sealed")
			Expect(s.meta("empty-sealed").Sealed).To(BeTrue())
			Expect(s.outcome(res.ID)).To(Equal(res), "the ledger's record reads exactly as the result")
		})

		It("declares and widens kinds with declare entries, strictly as DeclareKind", func() {
			s.skipBound("a bound kind's binding never changes, so it is never widened")
			jobs := itemKind(recordstore.ConflictReplace)
			batch := s.newBatch(recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: jobs.Name})
			batch.Schemas = []recordstore.Kind{jobs}
			Expect(s.applyOne(batch).Entries[0].Status).To(Equal(recordstore.KindCreated))

			wider := itemKind(recordstore.ConflictReplace)
			wider.Columns = append(wider.Columns, recordstore.Column{Name: "w", Type: recordstore.TypeNumber})
			batch = s.newBatch(recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: jobs.Name})
			batch.Schemas = []recordstore.Kind{wider}
			Expect(s.applyOne(batch).Entries[0].Status).To(Equal(recordstore.KindUpdated))
			batch = s.newBatch(recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: jobs.Name})
			batch.Schemas = []recordstore.Kind{wider}
			Expect(s.applyOne(batch).Entries[0].Status).To(Equal(recordstore.KindUnchanged))
			s.append("j", jobs.Name, recordstore.Row{"id": "a", "w": 1.5})

			By("strictly: a declare that omits a stored column is a schema conflict, and the kind stays as it is")
			before := s.snapshot()
			batch = s.newBatch(recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: jobs.Name})
			batch.Schemas = []recordstore.Kind{itemKind(recordstore.ConflictReplace)}
			res := s.applyOne(batch)
			s.expectCommitted(res)
			Expect(res.Entries[0].Err()).To(MatchError(recordstore.ErrSchemaConflict))
			s.expectUnchanged(before)
		})

		It("adds the columns a batch's schema adds, and reads its rows in that schema's column order", func() {
			s.skipBound("a bound kind's binding never changes, so it is never widened")
			foreign := recordstore.Kind{Name: "event", Columns: []recordstore.Column{
				{Name: "extra", Type: recordstore.TypeString},
				{Name: "msg", Type: recordstore.TypeString},
				{Name: "n", Type: recordstore.TypeInteger, Required: true},
			}}
			batch := s.newBatch(s.appendEntry("s", foreign, recordstore.Row{"n": 1, "msg": "m", "extra": "more"}))
			batch.Schemas = []recordstore.Kind{foreign}
			s.expectCommitted(s.applyOne(batch))
			k, err := s.b.Kind(s.ctx, "event")
			Expect(err).NotTo(HaveOccurred())
			want := eventKind()
			want.Columns = append(want.Columns, recordstore.Column{Name: "extra", Type: recordstore.TypeString})
			Expect(k.Columns).To(Equal(want.Columns), "the stored columns first, then the added one")
			Expect(s.scan("s")[0].Values).To(Equal(recordstore.Row{"n": int64(1), "msg": "m", "extra": "more"}))

			By("a batch whose schema omits a stored column appends nulls for it")
			older := s.newBatch(s.appendEntry("s", eventKind(), recordstore.Row{"n": 2}))
			older.Schemas = []recordstore.Kind{eventKind()}
			s.expectCommitted(s.applyOne(older))
			By("a batch without a schema of the kind gives its rows in the stored kind's column order")
			bare := s.newBatch(s.appendEntry("s", k, recordstore.Row{"n": 3, "extra": "x"}))
			bare.Schemas = nil
			s.expectCommitted(s.applyOne(bare))
			Expect(column(s.scan("s"), "extra")).To(Equal([]any{"more", nil, "x"}))
			Expect(column(s.scan("s"), "n")).To(Equal([]any{int64(1), int64(2), int64(3)}))
			s.append("s", "event", recordstore.Row{"n": 4, "extra": "direct"})
		})

		DescribeTable("rolls back an entry refused on its own, with its code, and commits the others around it",
			func(code string, setUp func(), refused func() recordstore.BatchEntry, schemas ...recordstore.Kind) {
				setUp()
				batch := s.newBatch(s.eventEntry("ok", 1, 1), refused(), s.eventEntry("ok", 2, 1))
				for _, k := range schemas {
					batch.Schemas = withSchema(batch.Schemas, s.streamKind(k, "k"))
				}
				s.declareKindsOf(batch)
				before := s.snapshot()
				res := s.applyOne(batch)
				s.expectCommitted(res)
				Expect(entryCodes(res)).To(Equal([]string{"", code, ""}))
				Expect(recordstore.Code(res.Err())).To(Equal(code), "the batch's Err is its first entry error")
				Expect(res.Entries[1].Err()).To(MatchError(recordstore.SentinelForCode(code)))
				Expect(res.Entries[1].Append).To(BeNil())
				Expect(res.Entries[1].Meta).To(BeNil())
				Expect(appendOf(res.Entries[2])).To(Equal(recordstore.AppendResult{Stream: "ok", Kind: s.ev("ok"), From: 2, To: 2, Appended: 1}))
				Expect(column(s.scan("ok"), "n")).To(Equal([]any{int64(1), int64(2)}))
				Expect(withoutStream(s.snapshot(), "ok")).To(Equal(withoutStream(before, "ok")), "the refused entry changed nothing")
				Expect(s.outcome(batch.ID)).To(Equal(res))
			},
			Entry("an append to a sealed stream", "sealed", func() {
				s.append("closed", "event", events(1, 1)...)
				_, err := s.b.Seal(s.ctx, "closed")
				Expect(err).NotTo(HaveOccurred())
			}, func() recordstore.BatchEntry { return s.eventEntry("closed", 2, 1) }),
			Entry("an append fenced to another generation", "not_found", func() {
				s.append("d", "event", events(1, 1)...)
				Expect(s.b.Delete(s.ctx, "d")).To(Succeed())
				s.append("d", "event", events(2, 1)...)
			}, func() recordstore.BatchEntry {
				e := s.eventEntry("d", 3, 1)
				e.Generation = 1
				return e
			}),
			Entry("a seal fenced to another generation", "not_found", func() { s.append("d", "event", events(1, 1)...) },
				func() recordstore.BatchEntry {
					return recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "d", Generation: 2}
				}),
			Entry("an expire fenced to another generation", "not_found", func() { s.append("d", "event", events(1, 1)...) },
				func() recordstore.BatchEntry {
					return recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: "d", Generation: 2, TTL: time.Hour}
				}),
			Entry("a delete fenced to another generation", "not_found", func() { s.append("d", "event", events(1, 1)...) },
				func() recordstore.BatchEntry {
					return recordstore.BatchEntry{Op: recordstore.OpDelete, Stream: "d", Generation: 3}
				}),
			Entry("an append of a kind whose batch schema changes the key", "schema_conflict", func() {
				s.declareAt("k", itemKind(recordstore.ConflictReplace))
			}, func() recordstore.BatchEntry {
				return recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "k", Kind: s.kindAt("item_replace", "k"),
					Rows: []recordstore.Values{{"a", int64(1), nil}}}
			}, changedItemKind(func(k *recordstore.Kind) { k.Key = []string{"v"} })),
			Entry("an append of a kind whose batch schema changes a column's type", "schema_conflict", func() {
				s.declareAt("k", itemKind(recordstore.ConflictReplace))
			}, func() recordstore.BatchEntry {
				return recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "k", Kind: s.kindAt("item_replace", "k"),
					Rows: []recordstore.Values{{"a", "1", nil}}}
			}, changedItemKind(func(k *recordstore.Kind) { k.Columns[1].Type = recordstore.TypeString })),
			Entry("an append of a kind whose batch schema changes the conflict policy", "schema_conflict", func() {
				s.declareAt("k", itemKind(recordstore.ConflictReplace))
			}, func() recordstore.BatchEntry {
				return recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "k", Kind: s.kindAt("item_replace", "k"),
					Rows: []recordstore.Values{{"a", int64(1), nil}}}
			}, changedItemKind(func(k *recordstore.Kind) { k.OnConflict = recordstore.ConflictSkip })),
			Entry("an append to a stream of another kind", "schema_conflict", func() {
				s.append("items", "item_skip", recordstore.Row{"id": "a"})
			}, func() recordstore.BatchEntry { return s.eventEntry("items", 1, 1) }),
			Entry("an append of an unknown kind", "not_found", func() {},
				func() recordstore.BatchEntry {
					return recordstore.BatchEntry{Op: recordstore.OpAppend, Stream: "x", Kind: "nokind", Rows: []recordstore.Values{{int64(1)}}}
				}),
			Entry("an append with a key repeated in it", "invalid", func() {}, func() recordstore.BatchEntry {
				return s.appendEntry("items", itemKind(recordstore.ConflictSkip), recordstore.Row{"id": "a"}, recordstore.Row{"id": "a"})
			}),
			Entry("an append whose last of many rows does not fit", "invalid", func() {
				s.append("many", "event", events(1, 1)...)
			}, func() recordstore.BatchEntry {
				e := s.eventEntry("many", 2, 300)
				e.Rows[299] = recordstore.Values{"not an integer", nil}
				return e
			}),
			Entry("an append to a bad stream name", "invalid", func() {}, func() recordstore.BatchEntry { return s.eventEntry("a/b", 1, 1) }),
			Entry("an expire without a ttl", "invalid", func() { s.append("e", "event", events(1, 1)...) },
				func() recordstore.BatchEntry { return recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: "e"} }),
			Entry("a reopen of another generation", "not_found", func() {
				s.append("r", "event", events(1, 1)...)
				_, err := s.b.Seal(s.ctx, "r")
				Expect(err).NotTo(HaveOccurred())
			}, func() recordstore.BatchEntry {
				return recordstore.BatchEntry{Op: recordstore.OpReopen, Stream: "r", Generation: 9}
			}),
			Entry("an unknown operation", "invalid", func() { s.append("u", "event", events(1, 1)...) },
				func() recordstore.BatchEntry { return recordstore.BatchEntry{Op: "rename", Stream: "u"} }),
			Entry("a declare whose schema is not in the batch", "invalid", func() {},
				func() recordstore.BatchEntry { return recordstore.BatchEntry{Op: recordstore.OpDeclare, Kind: "other"} }),
		)

		It("sees the effects of the entries before it in the same batch, and only the ones that applied", func() {
			sealIt := recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "s"}
			res := s.applyOne(s.newBatch(
				s.eventEntry("s", 1, 1),
				recordstore.BatchEntry{Op: recordstore.OpDelete, Stream: "s"},
				s.eventEntry("s", 2, 1),
				sealIt,
				s.eventEntry("s", 3, 1),
			))
			Expect(entryCodes(res)).To(Equal([]string{"", "", "", "", "sealed"}))
			m := s.meta("s")
			Expect(m.Generation).To(Equal(int64(2)))
			Expect(m.Sealed).To(BeTrue())
			Expect(column(s.scan("s"), "n")).To(Equal([]any{int64(2)}))
		})
	})
}

// changedItemKind returns the suite's item_replace kind changed by change,
// as a batch's own schema.
func changedItemKind(change func(k *recordstore.Kind)) recordstore.Kind {
	k := itemKind(recordstore.ConflictReplace)
	change(&k)
	return k
}

func (s *batchSuite) describeBatchFailures() {
	Describe("failed batches", func() {
		It("records a batch with Failure as failed with that error, and applies none of its entries nor its schemas", func() {
			s.append("s", "event", events(1, 1)...)
			before := s.snapshot()
			batch := s.newBatch(s.eventEntry("s", 2, 1), recordstore.BatchEntry{Op: recordstore.OpDelete, Stream: "s"})
			batch.Schemas = append(batch.Schemas, allTypesKind())
			batch.Failure = &recordstore.BatchError{Code: "invalid", Message: "e00001.ndjson: line 3: not JSON"}
			res := s.applyOne(batch)
			Expect(res.Outcome).To(Equal(recordstore.OutcomeFailed))
			Expect(res.IngestedAt).To(BeTemporally("==", s.clock.Now()))
			Expect(res.Entries).To(BeEmpty())
			Expect(res.Error).To(Equal(batch.Failure))
			Expect(res.Err()).To(MatchError(recordstore.ErrInvalid))
			s.expectUnchanged(before)
			Expect(s.outcome(batch.ID)).To(Equal(res))
		})

		It("keeps the recorded failure when the batch comes again without Retry", func() {
			batch := s.newBatch(s.eventEntry("s", 1, 1))
			batch.Failure = &recordstore.BatchError{Code: "invalid", Message: "checksum mismatch"}
			res := s.applyOne(batch)
			batch.Failure = nil
			s.clock.Advance(time.Minute)
			Expect(s.applyOne(batch)).To(Equal(res))
			_, err := s.b.Meta(s.ctx, "s")
			expectNotFound(err)
		})

		It("applies a failed batch marked Retry and records the new outcome in place of the failure", func() {
			batch := s.newBatch(s.eventEntry("s", 1, 1))
			batch.Failure = &recordstore.BatchError{Code: "invalid", Message: "checksum mismatch"}
			s.applyOne(batch)
			batch.Failure, batch.Retry = nil, true
			s.clock.Advance(time.Minute)
			res := s.applyOne(batch)
			s.expectCommitted(res)
			Expect(appendOf(res.Entries[0])).To(Equal(recordstore.AppendResult{Stream: "s", Kind: s.ev("s"), From: 1, To: 1, Appended: 1}))
			Expect(s.outcome(batch.ID)).To(Equal(res))

			By("a committed batch is never applied again, Retry or not")
			s.clock.Advance(time.Minute)
			before := s.snapshot()
			Expect(s.applyOne(batch)).To(Equal(res))
			s.expectUnchanged(before)
		})

		It("records the new failure of a retried batch that fails again", func() {
			batch := s.newBatch(s.eventEntry("s", 1, 1))
			batch.Failure = &recordstore.BatchError{Code: "invalid", Message: "first failure"}
			s.applyOne(batch)
			batch.Failure = &recordstore.BatchError{Code: "schema_conflict", Message: "second failure"}
			batch.Retry = true
			s.clock.Advance(time.Minute)
			res := s.applyOne(batch)
			Expect(res.Outcome).To(Equal(recordstore.OutcomeFailed))
			Expect(res.Err()).To(MatchError(recordstore.ErrSchemaConflict))
			Expect(res.Err().Error()).To(Equal("schema_conflict: second failure"))
			Expect(res.IngestedAt).To(BeTemporally("==", s.clock.Now()))
			Expect(s.outcome(batch.ID)).To(Equal(res))
			_, err := s.b.Meta(s.ctx, "s")
			expectNotFound(err)
		})

		It("applies a new batch marked Retry as any new batch", func() {
			batch := s.newBatch(s.eventEntry("s", 1, 1))
			batch.Retry = true
			s.expectCommitted(s.applyOne(batch))
			Expect(s.meta("s").Total).To(Equal(int64(1)))
		})
	})
}
