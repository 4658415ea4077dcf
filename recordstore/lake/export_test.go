package lake_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/lake"
)

var eventKind = recordstore.Kind{Name: "event", Columns: []recordstore.Column{
	{Name: "msg", Type: recordstore.TypeString},
	{Name: "n", Type: recordstore.TypeInteger},
}}

// newStore is a store with one stream "ev:1" of kind event, whose rows
// are msg="m<seq>" and n=seq.
func newStore(ctx context.Context) *store {
	b, r := openBackend(ctx, eventKind)
	return &store{b: b, r: r, stream: "ev:1", kind: "event", row: func(seq int64) recordstore.Row {
		return recordstore.Row{"msg": fmt.Sprintf("m%d", seq), "n": seq}
	}}
}

// readParquet decodes a lake file and returns its _seq values, checking
// that each row's n column equals its seq (rows are appended in order).
func readParquet(path string) []int64 {
	var seqs []int64
	for _, v := range decodeParquet(path, eventKind) {
		Expect(v[2]).To(Equal(v[0]), "row n equals its seq")
		seqs = append(seqs, v[0].(int64))
	}
	return seqs
}

// lakeSeqs reads every part file under a stream's folder of dir.
func lakeSeqs(dir string) []int64 {
	files, err := filepath.Glob(filepath.Join(dir, lake.StreamDir("ev:1"), "generation=*", "part-*.parquet"))
	Expect(err).NotTo(HaveOccurred())
	var all []int64
	for _, f := range files {
		all = append(all, readParquet(f)...)
	}
	return all
}

func seqRange(from, to int64) []int64 {
	var s []int64
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

var _ = Describe("a lake export to a folder", func() {
	var (
		ctx  context.Context
		st   *store
		dir  string
		sink lake.Sink
	)
	BeforeEach(func() {
		ctx = context.Background()
		st = newStore(ctx)
		dir, sink = openFolderSink(ctx)
	})

	It("writes files of at most RowsPerFile seqs and a manifest, then only what is new", func() {
		st.add(ctx, 2500)
		rep, err := lake.Export(ctx, st.r, "ev:1", sink, lake.Options{RowsPerFile: 1000})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Files).To(HaveLen(3))
		Expect(rep.Rows).To(Equal(int64(2500)))
		Expect(rep.HighSeq).To(Equal(int64(2500)))
		Expect(rep.Files[2].Path).To(Equal("generation=1/part-00000000000000002001-00000000000000002500.parquet"))
		Expect(lakeSeqs(dir)).To(Equal(seqRange(1, 2500)))

		again, err := lake.Export(ctx, st.r, "ev:1", sink, lake.Options{RowsPerFile: 1000})
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Files).To(BeEmpty())

		st.add(ctx, 10)
		more, err := lake.Export(ctx, st.r, "ev:1", sink, lake.Options{RowsPerFile: 1000})
		Expect(err).NotTo(HaveOccurred())
		Expect(more.Files).To(HaveLen(1))
		Expect(more.Files[0].FromSeq).To(Equal(int64(2501)))
		Expect(lakeSeqs(dir)).To(Equal(seqRange(1, 2510)))

		data, err := os.ReadFile(filepath.Join(dir, lake.StreamDir("ev:1"), lake.ManifestName))
		Expect(err).NotTo(HaveOccurred())
		m, err := lake.DecodeManifest(data, "ev:1")
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Files).To(HaveLen(4))
		Expect(m.HighSeq).To(Equal(int64(2510)))
	})

	It("makes files 0600 and folders 0700", func() {
		st.add(ctx, 5)
		_, err := lake.Export(ctx, st.r, "ev:1", sink, lake.Options{})
		Expect(err).NotTo(HaveOccurred())
		err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			Expect(err).NotTo(HaveOccurred())
			if fi.IsDir() {
				Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o700)), p)
			} else {
				Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)), p)
			}
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
	})

	It("starts after Since on the first export", func() {
		st.add(ctx, 30)
		rep, err := lake.Export(ctx, st.r, "ev:1", sink, lake.Options{Since: 20})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Rows).To(Equal(int64(10)))
		Expect(lakeSeqs(dir)).To(Equal(seqRange(21, 30)))
	})

	It("removes the file a run that died left unnamed by the manifest", func() {
		st.add(ctx, 10)
		_, err := lake.Export(ctx, st.r, "ev:1", sink, lake.Options{})
		Expect(err).NotTo(HaveOccurred())
		// A run died after writing seqs 11-15 and before its manifest.
		st.add(ctx, 5)
		genDir := filepath.Join(dir, lake.StreamDir("ev:1"), "generation=1")
		src, err := filepath.Glob(filepath.Join(genDir, "part-*.parquet"))
		Expect(err).NotTo(HaveOccurred())
		stale := filepath.Join(genDir, "part-00000000000000000011-00000000000000000015.parquet")
		data, err := os.ReadFile(src[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(stale, data, 0o600)).To(Succeed())
		st.add(ctx, 5)

		rep, err := lake.Export(ctx, st.r, "ev:1", sink, lake.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Removed).To(ConsistOf("generation=1/part-00000000000000000011-00000000000000000015.parquet"))
		Expect(stale).NotTo(BeAnExistingFile())
		Expect(lakeSeqs(dir)).To(Equal(seqRange(1, 20)))
	})

	It("refuses a second export of the stream while one runs", func() {
		st.add(ctx, 3)
		unlock, err := sink.Lock(ctx, lake.StreamDir("ev:1"))
		Expect(err).NotTo(HaveOccurred())
		_, err = lake.Export(ctx, st.r, "ev:1", sink, lake.Options{})
		Expect(errors.Is(err, lake.ErrBusy)).To(BeTrue(), "%v", err)
		Expect(recordstore.Code(err)).To(Equal("busy"))
		unlock()
		_, err = lake.Export(ctx, st.r, "ev:1", sink, lake.Options{})
		Expect(err).NotTo(HaveOccurred())
	})

	It("refuses an unreadable manifest or one of another kind and writes nothing", func() {
		st.add(ctx, 3)
		mdir := filepath.Join(dir, lake.StreamDir("ev:1"))
		Expect(os.MkdirAll(mdir, 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(mdir, lake.ManifestName), []byte(`{"format":1,`), 0o600)).To(Succeed())
		_, err := lake.Export(ctx, st.r, "ev:1", sink, lake.Options{})
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%v", err)

		Expect(os.WriteFile(filepath.Join(mdir, lake.ManifestName), []byte(`{"format":1,"stream":"ev:1","kind":"other","generation":1,"highSeq":0,"files":[]}`), 0o600)).To(Succeed())
		_, err = lake.Export(ctx, st.r, "ev:1", sink, lake.Options{})
		Expect(errors.Is(err, recordstore.ErrSchemaConflict)).To(BeTrue(), "%v", err)
		Expect(filepath.Join(mdir, "generation=1")).NotTo(BeADirectory())
	})

	It("says not_found for a stream that does not exist", func() {
		_, err := lake.Export(ctx, st.r, "nope", sink, lake.Options{})
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "%v", err)
	})
})

var _ = Describe("a lake export to S3", func() {
	It("writes the same layout through the S3 protocol, conditionally", func() {
		ctx := context.Background()
		srv := startS3()
		st := newStore(ctx)
		st.add(ctx, 1200)
		sink, err := lake.OpenSink(ctx, srv.URL("warehouse/records"))
		Expect(err).NotTo(HaveOccurred())
		rep, err := lake.Export(ctx, st.r, "ev:1", sink, lake.Options{RowsPerFile: 500})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Files).To(HaveLen(3))
		keys, err := srv.Keys("warehouse/records/")
		Expect(err).NotTo(HaveOccurred())
		Expect(keys).To(ConsistOf(
			"warehouse/records/stream=ev:1/_manifest.json",
			"warehouse/records/stream=ev:1/generation=1/part-00000000000000000001-00000000000000000500.parquet",
			"warehouse/records/stream=ev:1/generation=1/part-00000000000000000501-00000000000000001000.parquet",
			"warehouse/records/stream=ev:1/generation=1/part-00000000000000001001-00000000000000001200.parquet",
		))
		// A manifest replaced behind the exporter's back: the stale tag
		// loses.
		_, tag, err := sink.Get(ctx, lake.StreamDir("ev:1")+"/"+lake.ManifestName)
		Expect(err).NotTo(HaveOccurred())
		Expect(sink.PutIf(ctx, lake.StreamDir("ev:1")+"/"+lake.ManifestName, []byte("{}"), "\"stale\"")).To(MatchError(lake.ErrBusy))
		Expect(sink.PutIf(ctx, lake.StreamDir("ev:1")+"/x.json", []byte("{}"), "")).To(Succeed())
		Expect(sink.PutIf(ctx, lake.StreamDir("ev:1")+"/x.json", []byte("{}"), "")).To(MatchError(lake.ErrBusy))
		Expect(tag).NotTo(BeEmpty())

		st.add(ctx, 1)
		more, err := lake.Export(ctx, st.r, "ev:1", sink, lake.Options{RowsPerFile: 500})
		Expect(err).NotTo(HaveOccurred())
		Expect(more.Files).To(HaveLen(1))
		Expect(more.HighSeq).To(Equal(int64(1201)))
	})

	It("refuses credentials in the address", func() {
		_, err := lake.OpenSink(context.Background(), "s3://key:secret@bkt/p")
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
		Expect(err.Error()).NotTo(ContainSubstring("secret"))
	})
})
