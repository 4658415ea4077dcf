// Specs: bad input and impossible requests. Each gets its sentinel and code,
// and the whole store reads the same before and after.

package recordstoretest

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// row is shorthand for a recordstore.Row literal.
type row = recordstore.Row

func (s *suite) describeRefusals() {
	Describe("refusals", func() {
		BeforeEach(func() {
			s.declare(eventKind(), itemKind(recordstore.ConflictSkip), allTypesKind())
			s.append("events", "event", events(1, 3)...)
			s.append("items", "item_skip", row{"id": "a", "v": 1}, row{"id": "b", "v": 2})
			s.append("types", "all_types", row{"s": "x"})
			s.append("sealed", "event", events(1, 1)...)
			_, err := s.b.Seal(s.ctx, "sealed")
			Expect(err).NotTo(HaveOccurred())
			s.clock.Advance(time.Minute)
		})

		appendRows := func(stream, kind string, rows ...recordstore.Row) func() error {
			return func() error {
				if k := s.kindName(kind, stream); s.streamKinds[k].Name != "" {
					kind = k // bound, the kind of a stream of its own
				}
				_, err := s.b.Append(s.ctx, stream, kind, rows)
				return err
			}
		}
		declare := func(k recordstore.Kind) func() error {
			return func() error {
				_, err := s.b.DeclareKind(s.ctx, s.bindDeclared(k))
				return err
			}
		}
		withKind := func(base recordstore.Kind, change func(*recordstore.Kind)) recordstore.Kind {
			base.Columns = append([]recordstore.Column(nil), base.Columns...)
			change(&base)
			return base
		}
		oneEvent := events(9, 1)

		DescribeTable("refuses with the right sentinel and code and changes nothing",
			func(call func() error, sentinel error, code string) {
				before := s.snapshot()
				expectRefused(call(), sentinel, code)
				s.expectUnchanged(before)
			},
			// Rows that do not fit their kind.
			Entry("an unknown column", appendRows("events", "event", row{"n": 1, "bogus": 2}), recordstore.ErrInvalid, "invalid"),
			Entry("a string in an integer column", appendRows("events", "event", row{"n": "1"}), recordstore.ErrInvalid, "invalid"),
			Entry("1.5 in an integer column", appendRows("events", "event", row{"n": 1.5}), recordstore.ErrInvalid, "invalid"),
			Entry("an integer beyond int64", appendRows("events", "event", row{"n": uint64(math.MaxUint64)}), recordstore.ErrInvalid, "invalid"),
			Entry("a bool in a string column", appendRows("events", "event", row{"n": 1, "msg": true}), recordstore.ErrInvalid, "invalid"),
			Entry("a number in a bool column", appendRows("types", "all_types", row{"b": 1}), recordstore.ErrInvalid, "invalid"),
			Entry("a datetime that is not RFC 3339", appendRows("types", "all_types", row{"t": "2024-01-02 03:04:05"}), recordstore.ErrInvalid, "invalid"),
			Entry("a datetime without a zone", appendRows("types", "all_types", row{"t": "2024-01-02T03:04:05"}), recordstore.ErrInvalid, "invalid"),
			Entry("a datetime that is not a date at all", appendRows("types", "all_types", row{"t": "yesterday"}), recordstore.ErrInvalid, "invalid"),
			Entry("malformed JSON in a json column", appendRows("types", "all_types", row{"j": json.RawMessage(`{"a":`)}), recordstore.ErrInvalid, "invalid"),
			Entry("NaN in a number column", appendRows("types", "all_types", row{"f": math.NaN()}), recordstore.ErrInvalid, "invalid"),
			Entry("a missing required column", appendRows("events", "event", row{"msg": "no n"}), recordstore.ErrInvalid, "invalid"),
			Entry("a null required column", appendRows("events", "event", row{"n": nil}), recordstore.ErrInvalid, "invalid"),
			Entry("a missing key column", appendRows("items", "item_skip", row{"v": 3}), recordstore.ErrInvalid, "invalid"),
			Entry("a bad row after good ones", appendRows("events", "event", row{"n": 4}, row{"n": 5}, row{"n": "six"}), recordstore.ErrInvalid, "invalid"),
			Entry("a key repeated inside one append", appendRows("items", "item_skip", row{"id": "c", "v": 1}, row{"id": "c", "v": 2}), recordstore.ErrInvalid, "invalid"),
			Entry("a key repeated inside an append to a new stream", appendRows("items2", "item_skip", row{"id": "c"}, row{"id": "d"}, row{"id": "c"}), recordstore.ErrInvalid, "invalid"),
			Entry("an empty append", appendRows("events", "event"), recordstore.ErrInvalid, "invalid"),
			Entry("an empty append to a new stream", func() error {
				_, err := s.b.Append(s.ctx, "fresh", "event", []recordstore.Row{})
				return err
			}, recordstore.ErrInvalid, "invalid"),

			// Names.
			Entry("a stream id with a slash", appendRows("bad/id", "event", oneEvent...), recordstore.ErrInvalid, "invalid"),
			Entry("a stream id with a space", appendRows("bad id", "event", oneEvent...), recordstore.ErrInvalid, "invalid"),
			Entry("an empty stream id", appendRows("", "event", oneEvent...), recordstore.ErrInvalid, "invalid"),
			Entry("the stream id ..", appendRows("..", "event", oneEvent...), recordstore.ErrInvalid, "invalid"),
			Entry("a stream id of 201 bytes", appendRows(strings.Repeat("s", 201), "event", oneEvent...), recordstore.ErrInvalid, "invalid"),
			Entry("an invalid kind name", appendRows("events", "9lives", oneEvent...), recordstore.ErrInvalid, "invalid"),
			Entry("an empty kind name", appendRows("events", "", oneEvent...), recordstore.ErrInvalid, "invalid"),
			Entry("meta of an invalid stream id", func() error { _, err := s.b.Meta(s.ctx, "a b"); return err }, recordstore.ErrInvalid, "invalid"),
			Entry("scan of an invalid stream id", func() error {
				_, err := s.b.Scan(s.ctx, "a/b", recordstore.ScanOptions{})
				return err
			}, recordstore.ErrInvalid, "invalid"),
			Entry("delete of an invalid stream id", func() error { return s.b.Delete(s.ctx, ".") }, recordstore.ErrInvalid, "invalid"),
			Entry("a kind lookup with an invalid name", func() error { _, err := s.b.Kind(s.ctx, "no-dash"); return err }, recordstore.ErrInvalid, "invalid"),
			Entry("a stream listing with an invalid kind name", func() error { _, err := s.b.Streams(s.ctx, "_x"); return err }, recordstore.ErrInvalid, "invalid"),

			// Things that do not exist.
			Entry("an append of an unknown kind", appendRows("new-stream", "nosuch", row{"n": 1}), recordstore.ErrNotFound, "not_found"),
			Entry("a kind lookup of an unknown kind", func() error { _, err := s.b.Kind(s.ctx, "nosuch"); return err }, recordstore.ErrNotFound, "not_found"),
			Entry("a stream listing of an unknown kind", func() error { _, err := s.b.Streams(s.ctx, "nosuch"); return err }, recordstore.ErrNotFound, "not_found"),
			Entry("meta of an unknown stream", func() error { _, err := s.b.Meta(s.ctx, "nosuch"); return err }, recordstore.ErrNotFound, "not_found"),
			Entry("scan of an unknown stream", func() error {
				_, err := s.b.Scan(s.ctx, "nosuch", recordstore.ScanOptions{})
				return err
			}, recordstore.ErrNotFound, "not_found"),
			Entry("seal of an unknown stream", func() error { _, err := s.b.Seal(s.ctx, "nosuch"); return err }, recordstore.ErrNotFound, "not_found"),
			Entry("reopen of an unknown stream", func() error { _, err := s.b.Reopen(s.ctx, "nosuch", 1); return err }, recordstore.ErrNotFound, "not_found"),
			Entry("expire of an unknown stream", func() error { _, err := s.b.Expire(s.ctx, "nosuch", time.Hour); return err }, recordstore.ErrNotFound, "not_found"),
			Entry("trim of an unknown stream", func() error { _, err := s.b.Trim(s.ctx, "nosuch", s.clock.Now()); return err }, recordstore.ErrNotFound, "not_found"),
			Entry("delete of an unknown stream", func() error { return s.b.Delete(s.ctx, "nosuch") }, recordstore.ErrNotFound, "not_found"),
			Entry("reopen with a generation that is not the current one", func() error { _, err := s.b.Reopen(s.ctx, "sealed", 2); return err }, recordstore.ErrNotFound, "not_found"),
			Entry("reopen with generation 0", func() error { _, err := s.b.Reopen(s.ctx, "sealed", 0); return err }, recordstore.ErrNotFound, "not_found"),

			// Requests that conflict with what is stored.
			Entry("rows of another kind into an existing stream", appendRows("events", "all_types", row{"s": "x"}), recordstore.ErrSchemaConflict, "schema_conflict"),
			Entry("a kind redeclared with a changed column type", declare(withKind(eventKind(), func(k *recordstore.Kind) {
				k.Columns[0].Type = recordstore.TypeString
			})), recordstore.ErrSchemaConflict, "schema_conflict"),
			Entry("a kind redeclared with a changed key", declare(withKind(itemKind(recordstore.ConflictSkip), func(k *recordstore.Kind) {
				k.Key = []string{"v"}
			})), recordstore.ErrSchemaConflict, "schema_conflict"),
			Entry("a kind redeclared with a changed policy", declare(withKind(itemKind(recordstore.ConflictSkip), func(k *recordstore.Kind) {
				k.Name, k.OnConflict = "item_skip", recordstore.ConflictReplace
			})), recordstore.ErrSchemaConflict, "schema_conflict"),
			Entry("an append to a sealed stream", appendRows("sealed", "event", events(2, 1)...), recordstore.ErrSealed, "sealed"),

			// Arguments out of range.
			Entry("expire with a ttl of 0", func() error { _, err := s.b.Expire(s.ctx, "events", 0); return err }, recordstore.ErrInvalid, "invalid"),
			Entry("expire with a negative ttl", func() error { _, err := s.b.Expire(s.ctx, "events", -time.Second); return err }, recordstore.ErrInvalid, "invalid"),
			Entry("a scan with a negative limit", func() error {
				_, err := s.b.Scan(s.ctx, "events", recordstore.ScanOptions{Limit: -1})
				return err
			}, recordstore.ErrInvalid, "invalid"),
			Entry("a scan after a negative seq", func() error {
				_, err := s.b.Scan(s.ctx, "events", recordstore.ScanOptions{After: -1})
				return err
			}, recordstore.ErrInvalid, "invalid"),

			// Declarations that are not valid kinds.
			Entry("a kind named with a leading digit", declare(withKind(eventKind(), func(k *recordstore.Kind) { k.Name = "1event" })), recordstore.ErrInvalid, "invalid"),
			Entry("a kind with no columns", declare(recordstore.Kind{Name: "bare"}), recordstore.ErrInvalid, "invalid"),
			Entry("a kind with an unknown column type", declare(withKind(eventKind(), func(k *recordstore.Kind) {
				k.Name, k.Columns[1].Type = "odd", "blob"
			})), recordstore.ErrInvalid, "invalid"),
			Entry("a kind with a reserved column name", declare(withKind(eventKind(), func(k *recordstore.Kind) {
				k.Name, k.Columns[1].Name = "odd", "_seq"
			})), recordstore.ErrInvalid, "invalid"),
			Entry("a kind whose key names an unknown column", declare(withKind(eventKind(), func(k *recordstore.Kind) {
				k.Name, k.Key = "odd", []string{"missing"}
			})), recordstore.ErrInvalid, "invalid"),
			Entry("a replace kind without a key", declare(withKind(eventKind(), func(k *recordstore.Kind) {
				k.Name, k.OnConflict = "odd", recordstore.ConflictReplace
			})), recordstore.ErrInvalid, "invalid"),
			Entry("an lww kind without a version column", declare(withKind(lwwKind(), func(k *recordstore.Kind) {
				k.Name, k.LWW = "odd", nil
			})), recordstore.ErrInvalid, "invalid"),
			Entry("a kind with a retention ttl of 0", declare(withKind(eventKind(), func(k *recordstore.Kind) {
				k.Name, k.Retention = "odd", &recordstore.Retention{Mode: recordstore.RetainRows}
			})), recordstore.ErrInvalid, "invalid"),
		)

		It("refuses a large append whose last row is bad, writing none of it", func() {
			bigNew := s.ensureKind("event", "big-new") // bound, a kind of its own
			before := s.snapshot()
			rows := events(4, 5000)
			rows[len(rows)-1] = row{"n": "last"}
			_, err := s.b.Append(s.ctx, "events", "event", rows)
			expectRefused(err, recordstore.ErrInvalid, "invalid")
			Expect(err).To(MatchError(ContainSubstring("row 5000")), "rows are counted from 1")
			_, err = s.b.Append(s.ctx, "big-new", bigNew, rows)
			expectRefused(err, recordstore.ErrInvalid, "invalid")
			s.expectUnchanged(before)
		})

		It("refuses a replace append with a bad row without replacing anything", func() {
			s.requirePolicy(recordstore.ConflictReplace)
			s.declare(itemKind(recordstore.ConflictReplace))
			s.append("repl", "item_replace", row{"id": "a", "v": 1})
			before := s.snapshot()
			_, err := s.b.Append(s.ctx, "repl", "item_replace", []recordstore.Row{{"id": "a", "v": 2}, {"id": "b", "v": "two"}})
			expectRefused(err, recordstore.ErrInvalid, "invalid")
			s.expectUnchanged(before)
		})

		It("refuses an append to a sealed stream even when every row would be skipped", func() {
			_, err := s.b.Seal(s.ctx, "items")
			Expect(err).NotTo(HaveOccurred())
			before := s.snapshot()
			_, err = s.b.Append(s.ctx, "items", "item_skip", []recordstore.Row{{"id": "a", "v": 9}})
			expectRefused(err, recordstore.ErrSealed, "sealed")
			s.expectUnchanged(before)
		})

		It("writes nothing when the context is already canceled", func() {
			brandNew := s.ensureKind("event", "brand-new") // bound, a kind of its own
			before := s.snapshot()
			ctx, cancel := context.WithCancel(s.ctx)
			cancel()
			_, err := s.b.Append(ctx, "events", "event", events(4, 2))
			Expect(err).To(MatchError(context.Canceled))
			_, err = s.b.Append(ctx, "brand-new", brandNew, events(1, 1))
			Expect(err).To(MatchError(context.Canceled))
			s.expectUnchanged(before)
		})

		It("does not use up a generation on a refused append", func() {
			Expect(s.b.Delete(s.ctx, "events")).To(Succeed())
			_, err := s.b.Append(s.ctx, "events", "event", []recordstore.Row{{"n": "bad"}})
			expectRefused(err, recordstore.ErrInvalid, "invalid")
			expectNotFound(func() error { _, err := s.b.Meta(s.ctx, "events"); return err }())
			s.append("events", "event", events(1, 1)...)
			Expect(s.meta("events").Generation).To(Equal(int64(2)))
		})

		It("refuses a write over a configured limit with ErrCapacity and changes nothing", func() {
			hook := s.h.Capacity
			if hook == nil {
				Skip("the harness configures no capacity limit")
			}
			b, err := hook.Open(s.ctx, s.clock)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(b.Close)
			_, err = b.DeclareKind(s.ctx, s.bindDeclared(eventKind()))
			Expect(err).NotTo(HaveOccurred())
			_, err = b.Append(s.ctx, "capacity", "event", events(1, 3))
			Expect(err).NotTo(HaveOccurred())
			before := takeSnapshot(s.ctx, b)
			expectRefused(hook.Exceed(s.ctx, b, "capacity", "event"), recordstore.ErrCapacity, "capacity")
			Expect(takeSnapshot(s.ctx, b)).To(Equal(before))
		})
	})
}
