// The crash matrix, ingest: crashes between the ledger commit and the
// trash, foreign schemas, entry isolation, generation fences, per-producer
// order, refused and poison batches, and every codec across processes.

package owner_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	_ "github.com/fb46ecde/records/recordstore/spool/parquet" // the parquet codec, in parents and children
	rt "github.com/fb46ecde/records/recordstoretest"
)

var _ = Describe("ingest across processes", Label("crash"), func() {
	DescribeTable("applies a batch once when the owner dies between its ledger commit and its trash",
		func(name string, hit int) {
			path := storePath()
			own := startOwner(path, fast(), []rt.FailpointRule{{Name: name, Action: rt.ActKill, Hit: hit}})
			p := startProducer(path, fast(), nil,
				publishGen("s", "c0", 0, 10), publishGen("s", "c1", 0, 10), publishGen("s", "c2", 0, 10),
				awaitAll().Named("await"), waitRole(owner.RoleOwner).Named("take-over"), scan("s").Named("scan"), closeStore())
			fp := own.MustEvent(rt.EventFailpoint, wait)
			Expect(fp.Name).To(Equal(name))
			_, err := own.Wait(wait)
			Expect(err).NotTo(HaveOccurred())
			Expect(own.Killed()).To(BeTrue())

			var results []recordstore.BatchResult
			Expect(p.MustStepNamed("await", wait).Decode(&results)).To(Succeed())
			Expect(results).To(HaveLen(3))
			for _, r := range results {
				Expect(r.Outcome).To(Equal(recordstore.OutcomeCommitted))
				Expect(r.Entries).To(HaveLen(1))
				Expect(r.Entries[0].Append.Appended).To(BeEquivalentTo(10))
			}
			p.MustStepNamed("take-over", wait)
			recs, err := p.MustStepNamed("scan", wait).Records()
			Expect(err).NotTo(HaveOccurred())
			Expect(recs).To(HaveLen(30), "each batch applied exactly once")
			p.MustFinish(wait)
			Expect(incoming(path)).To(BeEmpty(), "the new owner moved the re-seen batches to trash")
			Expect(finalRows(path, "s")).To(HaveLen(30))
		},
		Entry("after-ledger-commit", owner.FailAfterLedger, 1),
		Entry("before-trash, the second batch trashed", owner.FailBeforeTrash, 2),
	)

	It("widens a kind for a producer with an extra column and refuses one that changed a type", func() {
		path := storePath()
		own := startOwner(path, fast(), nil, scan("s").Named("scan"))
		wide := eventKind()
		wide.Columns = append(wide.Columns, recordstore.Column{Name: "extra", Type: recordstore.TypeString})
		changed := eventKind()
		changed.Columns[1].Type = recordstore.TypeString
		p1 := startProducer(path, fast(), nil,
			rt.Step{Op: rt.OpPublish, Stream: "s", Kind: "event", Schema: wide, Rows: []recordstore.Row{{"k": "w", "n": 1, "extra": "x"}}},
			awaitAll().Named("await-wide"), closeStore())
		p2 := startProducer(path, fast(), nil,
			rt.Step{Op: rt.OpPublish, Stream: "s", Kind: "event", Schema: changed, Rows: []recordstore.Row{{"k": "c", "n": "one"}}},
			awaitAll().Named("await-changed"), closeStore())
		p1.MustStepNamed("await-wide", wait)
		l, err := p2.StepNamed("await-changed", wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.OK).To(BeFalse())
		Expect(l.Code).To(Equal("schema_conflict"), "%s", l)
		p1.MustFinish(wait)
		p2.MustFinish(wait)

		Expect(own.Release()).To(Succeed())
		recs, err := own.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(1))
		Expect(recs[0]).To(HaveKeyWithValue("extra", "x"))
		Expect(recs[0]).To(HaveKeyWithValue("k", "w"))
		own.MustFinish(wait)
		s := openHere(path)
		k, err := s.Backend().Kind(context.Background(), "event")
		Expect(err).NotTo(HaveOccurred())
		Expect(k.Columns).To(HaveLen(4))
		Expect(k.Columns[1].Type).To(Equal(recordstore.TypeInteger))
	})

	It("commits the other entries of a batch when one targets a sealed stream", func() {
		path := storePath()
		startOwner(path, fast(), nil)
		rows := func(prefix string, n int) *rt.Gen { return &rt.Gen{Prefix: prefix, Count: n} }
		p := startProducer(path, fast(), nil,
			appendGen("closed", "old", 0, 1),
			rt.Step{Op: rt.OpSeal, Stream: "closed"},
			rt.Step{Op: rt.OpPublish, Name: "publish-three-entries", Entries: []rt.PublishEntry{
				{Op: recordstore.OpAppend, Stream: "s1", Kind: "event", Gen: rows("a", 2)},
				{Op: recordstore.OpAppend, Stream: "closed", Kind: "event", Gen: rows("b", 1)},
				{Op: recordstore.OpAppend, Stream: "s2", Kind: "event", Gen: rows("c", 3)},
			}},
			awaitAll().Named("await"), scan("s1").Named("scan-s1"), scan("s2").Named("scan-s2"),
			rt.Step{Op: rt.OpMeta, Name: "meta-closed", Stream: "closed"})
		l, err := p.StepNamed("await", wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Code).To(Equal("sealed"), "%s", l)
		var results []recordstore.BatchResult
		Expect(l.Decode(&results)).To(Succeed())
		Expect(results).To(HaveLen(1))
		res := results[0]
		Expect(res.Outcome).To(Equal(recordstore.OutcomeCommitted))
		Expect(res.Entries).To(HaveLen(3))
		Expect(res.Entries[0].Error).To(BeNil())
		Expect(*res.Entries[0].Append).To(Equal(recordstore.AppendResult{Stream: "s1", Kind: "event", From: 1, To: 2, Appended: 2}))
		Expect(res.Entries[1].Error).NotTo(BeNil())
		Expect(res.Entries[1].Error.Code).To(Equal("sealed"))
		Expect(*res.Entries[2].Append).To(Equal(recordstore.AppendResult{Stream: "s2", Kind: "event", From: 1, To: 3, Appended: 3}))

		s1, err := p.MustStepNamed("scan-s1", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(s1).To(HaveLen(2))
		s2, err := p.MustStepNamed("scan-s2", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(s2).To(HaveLen(3))
		var meta recordstore.Meta
		Expect(p.MustStepNamed("meta-closed", wait).Decode(&meta)).To(Succeed())
		Expect(meta.Sealed).To(BeTrue())
		Expect(meta.Total).To(BeEquivalentTo(1))
	})

	It("fences a batch by generation after the stream was deleted and recreated", func() {
		path := storePath()
		startOwner(path, fast(), nil)
		fenced := func(gen int64, prefix string) rt.Step {
			return rt.Step{Op: rt.OpPublish, Name: "publish-" + prefix, Entries: []rt.PublishEntry{{Op: recordstore.OpAppend, Stream: "g", Kind: "event",
				Generation: gen, Gen: &rt.Gen{Prefix: prefix, Count: 1}}}}
		}
		p := startProducer(path, fast(), nil,
			appendGen("g", "one", 0, 2),
			rt.Step{Op: rt.OpMeta, Name: "meta-first", Stream: "g"},
			rt.Step{Op: rt.OpDelete, Stream: "g"},
			appendGen("g", "two", 0, 3).Named("append-recreated"),
			fenced(1, "stale"), rt.Step{Op: rt.OpAwait, Name: "await-stale", RefName: "publish-stale", Timeout: wait},
			fenced(2, "fresh"), rt.Step{Op: rt.OpAwait, Name: "await-fresh", RefName: "publish-fresh", Timeout: wait},
			scan("g").Named("scan"))
		var meta recordstore.Meta
		Expect(p.MustStepNamed("meta-first", wait).Decode(&meta)).To(Succeed())
		Expect(meta.Generation).To(BeEquivalentTo(1))
		p.MustStepNamed("append-recreated", wait)
		l, err := p.StepNamed("await-stale", wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Code).To(Equal("not_found"), "%s", l)
		res := batchResult(p.MustStepNamed("await-fresh", wait))
		Expect(res.Entries[0].Append.From).To(BeEquivalentTo(4))
		recs, err := p.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		keys := []string{}
		for _, r := range recs {
			keys = append(keys, r["k"].(string))
		}
		Expect(keys).To(Equal(append(genKeys("two", 0, 3), rt.GenKey("fresh", 0))))
	})

	It("keeps a producer's order: fifty unawaited appends, then a seal", func() {
		path := storePath()
		startOwner(path, fast(), nil)
		const n = 50
		var steps []rt.Step
		for i := range n {
			steps = append(steps, publishGen("s", "o", i, 1))
		}
		steps = append(steps, rt.Step{Op: rt.OpSeal, Name: "seal", Stream: "s", Timeout: wait}, awaitAll().Named("await"), scan("s").Named("scan"))
		p := startProducer(path, fast(), nil, steps...)
		var sealed recordstore.Meta
		Expect(p.MustStepNamed("seal", wait).Decode(&sealed)).To(Succeed())
		Expect(sealed.Sealed).To(BeTrue())
		Expect(sealed.HighSeq).To(BeEquivalentTo(n), "the seal was applied after every append")
		var results []recordstore.BatchResult
		Expect(p.MustStepNamed("await", wait).Decode(&results)).To(Succeed())
		Expect(results).To(HaveLen(n))
		for i, r := range results {
			Expect(r.Entries[0].Append.From).To(BeEquivalentTo(i+1), "append %d", i)
		}
		recs, err := p.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(n))
		for i, r := range recs {
			Expect(r["k"]).To(Equal(rt.GenKey("o", i)))
		}
	})

	It("fails a batch of manifest format 2 at once into failed/, and its waiter with it", func() {
		path := storePath()
		startOwner(path, fast(), nil)
		name := handBatch(path, "s", []recordstore.Row{{"k": "f2"}}, func(dir string) {
			mf := filepath.Join(dir, spool.ManifestFile)
			b, err := os.ReadFile(mf)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(b)).To(ContainSubstring(`"format": 1,`))
			Expect(os.WriteFile(mf, []byte(strings.Replace(string(b), `"format": 1,`, `"format": 2,`, 1)), 0o600)).To(Succeed())
		})
		expectFailed(path, name, "invalid", "format")
		w := startProducer(path, fast(), nil, rt.Step{Op: rt.OpAwait, Name: "await-format-2", ID: name.ID, Timeout: wait})
		l, err := w.StepNamed("await-format-2", wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Code).To(Equal("invalid"), "%s", l)
		Expect(batchResult(l).Outcome).To(Equal(recordstore.OutcomeFailed))
	})

	It("sends a poison batch to failed/ with error.json while the good ones around it are ingested", func() {
		path := storePath()
		startOwner(path, fast(), nil)
		poison := handBatch(path, "s", []recordstore.Row{{"k": "poison"}}, func(dir string) {
			files, err := filepath.Glob(filepath.Join(dir, "*.ndjson"))
			Expect(err).NotTo(HaveOccurred())
			Expect(files).To(HaveLen(1))
			b, err := os.ReadFile(files[0])
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(files[0], []byte(strings.Replace(string(b), "poison", "poisoN", 1)), 0o600)).To(Succeed())
		})
		p := startProducer(path, fast(), nil,
			publishGen("s", "g0", 0, 3), publishGen("s", "g1", 0, 3), publishGen("s", "g2", 0, 3),
			rt.Step{Op: rt.OpAwait, Name: "await-poison", ID: poison.ID, Timeout: wait}, awaitAll().Named("await-good"), scan("s").Named("scan"))
		l, err := p.StepNamed("await-poison", wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Code).To(Equal("invalid"), "%s", l)
		p.MustStepNamed("await-good", wait)
		recs, err := p.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		counts := lineKeyCounts(recs)
		Expect(counts).To(HaveLen(9))
		Expect(counts).NotTo(HaveKey("poison"))
		expectFailed(path, poison, "invalid", "checksum")
	})

	It("applies a failed batch put back with Retry once it is fixed, and records the new failure of one still bad", func() {
		path := storePath()
		startOwner(path, fast(), nil)
		flip := func(from, to string) func(dir string) {
			return func(dir string) {
				editData(dir, func(b []byte) []byte { return []byte(strings.Replace(string(b), from, to, 1)) })
			}
		}
		fixed := handBatch(path, "s", []recordstore.Row{{"k": "fixed-later"}}, flip("fixed-later", "fixed-LATER"))
		still := handBatch(path, "s", []recordstore.Row{{"k": "bad-twice", "n": 7}}, flip("bad-twice", "bad-TWICE"))
		expectFailed(path, fixed, "invalid", "checksum")
		expectFailed(path, still, "invalid", "checksum")

		ctx := context.Background()
		d := spoolDir(path)
		flip("fixed-LATER", "fixed-later")(d.Path(spool.StateFailed, fixed.String())) // the bytes as published
		// The other now agrees with its manifest, but a row does not fit.
		rewriteData(d.Path(spool.StateFailed, still.String()), func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"n":7`, `"n":"seven"`, 1))
		})
		Expect(d.Retry(ctx, fixed.String())).To(Succeed())
		Expect(d.Retry(ctx, still.String())).To(Succeed())

		p := startProducer(path, fast(), nil,
			rt.Step{Op: rt.OpAwait, Name: "await-fixed", ID: fixed.ID, Timeout: wait},
			rt.Step{Op: rt.OpAwait, Name: "await-still-bad", ID: still.ID, Timeout: wait}, scan("s").Named("scan"))
		res := batchResult(p.MustStepNamed("await-fixed", wait))
		Expect(res.Outcome).To(Equal(recordstore.OutcomeCommitted), "the ledger's failure was replaced")
		Expect(res.Entries[0].Append.Appended).To(BeEquivalentTo(1))
		l, err := p.StepNamed("await-still-bad", wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Code).To(Equal("invalid"), "%s", l)
		Expect(batchResult(l).Outcome).To(Equal(recordstore.OutcomeFailed))
		Expect(batchResult(l).Err().Error()).To(ContainSubstring("line 1"), "the new failure, not the checksum")
		recs, err := p.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(lineKeyCounts(recs)).To(Equal(map[string]int{"fixed-later": 1}))

		expectFailed(path, still, "invalid", "line 1")
		_, err = os.Stat(filepath.Join(d.Path(spool.StateFailed, still.String()), spool.RetryFile))
		Expect(errors.Is(err, fs.ErrNotExist)).To(BeTrue(), "a batch failed again has no retry mark")
		Eventually(func() []spool.BatchName { return incoming(path) }, wait).ShouldNot(ContainElement(fixed))
	})

	It("fails a large batch whose bad row is found only while its rows stream into the transaction", func() {
		path := storePath()
		startOwner(path, fast(), nil)
		rows := make([]recordstore.Row, 6000)
		for i := range rows {
			rows[i] = recordstore.Row{"k": fmt.Sprintf("big-%d", i), "n": i}
		}
		poison := handBatch(path, "s", rows, func(dir string) {
			// Row 5000 gets a string where an integer belongs, and the
			// manifest is made to agree with the new bytes: only decoding
			// can tell.
			rewriteData(dir, func(b []byte) []byte {
				return []byte(strings.Replace(string(b), `"n":5000`, `"n":"five thousand"`, 1))
			})
		})
		p := startProducer(path, fast(), nil,
			publishGen("s", "g0", 0, 3), rt.Step{Op: rt.OpAwait, Name: "await-poison", ID: poison.ID, Timeout: wait},
			publishGen("s", "g1", 0, 3), awaitAll().Named("await-good"), scan("s").Named("scan"))
		l, err := p.StepNamed("await-poison", wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Code).To(Equal("invalid"), "%s", l)
		Expect(batchResult(l).Outcome).To(Equal(recordstore.OutcomeFailed))
		p.MustStepNamed("await-good", wait)
		recs, err := p.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		counts := lineKeyCounts(recs)
		Expect(counts).To(HaveLen(6), "the good batches only: %v", len(recs))
		Expect(counts).NotTo(HaveKey("big-0"), "none of the failed batch's rows stayed")
		expectFailed(path, poison, "invalid", "line 5001")
	})

	DescribeTable("stores rows spooled in every codec exactly as a direct append does",
		func(format string) {
			path := storePath()
			own := startOwner(path, fast(), nil,
				rt.Step{Op: rt.OpAppend, Name: "append-direct", Stream: "direct", Kind: "all_types", Rows: allTypeRows()},
				scan("direct").Named("scan-direct"), scan("spooled").Named("scan-spooled"))
			p := startProducer(path, with(func(o *rt.StoreOptions) { o.Format = format }), nil,
				declare(allTypesKind()),
				rt.Step{Op: rt.OpAppend, Name: "append-spooled", Stream: "spooled", Kind: "all_types", Rows: allTypeRows(), Timeout: wait},
				closeStore())
			Expect(p.MustStepNamed("append-spooled", wait).Role).To(Equal(string(owner.RoleNonOwner)))
			p.MustFinish(wait)
			Expect(own.Release()).To(Succeed())
			direct := own.MustStepNamed("scan-direct", wait)
			spooled := own.MustStepNamed("scan-spooled", wait)
			Expect(string(spooled.Result)).To(Equal(string(direct.Result)))
			recs, err := spooled.Records()
			Expect(err).NotTo(HaveOccurred())
			Expect(recs).To(HaveLen(len(allTypeRows())))
			own.MustFinish(wait)
		},
		Entry("ndjson", spool.FormatNDJSON),
		Entry("ndjson.gz", spool.FormatNDJSONGz),
		Entry("parquet", "parquet"),
	)
})

// expectFailed waits for batch name to be in failed/ with an error.json of
// the given code whose text mentions about, and gone from incoming.
func expectFailed(path string, name spool.BatchName, code, about string) {
	GinkgoHelper()
	Eventually(func() []string { return entries(path, spool.StateFailed) }, wait).Should(ContainElement(name.String()))
	f, err := readFailure(path, name)
	Expect(err).NotTo(HaveOccurred())
	Expect(f.Code).To(Equal(code))
	Expect(strings.ToLower(f.Error)).To(ContainSubstring(about))
	Expect(incoming(path)).NotTo(ContainElement(name))
}

// allTypesKind has a nullable column of every type.
func allTypesKind() *recordstore.Kind {
	return &recordstore.Kind{Name: "all_types", Columns: []recordstore.Column{
		{Name: "s", Type: recordstore.TypeString},
		{Name: "i", Type: recordstore.TypeInteger},
		{Name: "f", Type: recordstore.TypeNumber},
		{Name: "b", Type: recordstore.TypeBool},
		{Name: "t", Type: recordstore.TypeDatetime},
		{Name: "j", Type: recordstore.TypeJSON},
	}}
}

// allTypeRows are values at the edges of every type, and nulls.
func allTypeRows() []recordstore.Row {
	return []recordstore.Row{
		{"s": "plain", "i": int64(math.MaxInt64), "f": 1.5, "b": true, "t": "2030-01-02T03:04:05.123456789+02:00", "j": map[string]any{"z": 1, "a": []any{true, nil}}},
		{"s": "ünïcødé \u0000 nul", "i": int64(math.MinInt64), "f": -0.25, "b": false, "t": "1999-12-31T23:59:59Z", "j": "text"},
		{"s": "", "i": 0, "f": 1e300, "j": []any{}},
		{},
	}
}

// editData replaces the only data file of a batch folder with change(its
// bytes), which must differ, and returns them. The manifest is left as it
// was: its size and SHA-256 no longer match.
func editData(dir string, change func([]byte) []byte) []byte {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join(dir, "*.ndjson"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).To(HaveLen(1))
	old, err := os.ReadFile(files[0])
	Expect(err).NotTo(HaveOccurred())
	data := change(old)
	Expect(data).NotTo(Equal(old), "the change changed nothing")
	Expect(os.WriteFile(files[0], data, 0o600)).To(Succeed())
	return data
}

// rewriteData is editData with the manifest's size and SHA-256 updated to
// match.
func rewriteData(dir string, change func([]byte) []byte) {
	GinkgoHelper()
	data := editData(dir, change)
	mf := filepath.Join(dir, spool.ManifestFile)
	raw, err := os.ReadFile(mf)
	Expect(err).NotTo(HaveOccurred())
	var m map[string]any
	Expect(json.Unmarshal(raw, &m)).To(Succeed())
	e := m["entries"].([]any)[0].(map[string]any)
	sum := sha256.Sum256(data)
	e["sha256"], e["bytes"] = hex.EncodeToString(sum[:]), len(data)
	raw, err = json.Marshal(m)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(mf, raw, 0o600)).To(Succeed())
}
