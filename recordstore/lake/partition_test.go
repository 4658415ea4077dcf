package lake_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/lake"
)

var tickKind = recordstore.Kind{Name: "tick", Columns: []recordstore.Column{
	{Name: "at", Type: recordstore.TypeDatetime},
	{Name: "n", Type: recordstore.TypeInteger},
}}

var day0 = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// newTickStore is a store (kinds tick and event declared) with a stream
// "t" of kind tick, whose rows are n=seq and at = day0 + (seq-1) hours,
// except every 10th row, whose at is null.
func newTickStore(ctx context.Context) *store {
	b, r := openBackend(ctx, tickKind, eventKind)
	return &store{b: b, r: r, stream: "t", kind: "tick", row: func(seq int64) recordstore.Row {
		row := recordstore.Row{"n": seq}
		if seq%10 != 0 {
			row["at"] = day0.Add(time.Duration(seq-1) * time.Hour).Format(time.RFC3339)
		}
		return row
	}}
}

// wantDays counts the rows 1..n per day partition, as newTickStore makes them.
func wantDays(n int64) map[string]int64 {
	m := map[string]int64{}
	for seq := int64(1); seq <= n; seq++ {
		if seq%10 == 0 {
			m[lake.NullPartition]++
			continue
		}
		m[day0.Add(time.Duration(seq-1)*time.Hour).Format("2006-01-02")]++
	}
	return m
}

// lakeDays reads every part file of stream t under dir and counts its
// rows per at_day folder, checking that each row's at falls in its
// folder's day and that no seq is there twice.
func lakeDays(dir string) map[string]int64 {
	files, err := filepath.Glob(filepath.Join(dir, lake.StreamDir("t"), "generation=*", "at_day=*", "part-*.parquet"))
	Expect(err).NotTo(HaveOccurred())
	got := map[string]int64{}
	seen := map[int64]bool{}
	for _, f := range files {
		day := strings.TrimPrefix(filepath.Base(filepath.Dir(f)), "at_day=")
		for _, v := range decodeParquet(f, tickKind) {
			seq := v[0].(int64)
			Expect(seen[seq]).To(BeFalse(), "seq %d twice", seq)
			seen[seq] = true
			Expect(v[2]).To(Equal(seq))
			if v[1] == nil {
				Expect(day).To(Equal(lake.NullPartition))
			} else {
				Expect(v[1].(string)[:10]).To(Equal(day), "seq %d", seq)
			}
			got[day]++
		}
	}
	return got
}

// names lists the files under root, relative, sorted, but for the
// stream's lock file (kept between runs).
func names(root string) []string {
	var out []string
	Expect(filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != ".lock" {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})).To(Succeed())
	sort.Strings(out)
	return out
}

var _ = Describe("a lake export partitioned by a datetime column", func() {
	var (
		ctx  context.Context
		st   *store
		dir  string
		sink lake.Sink
		byAt = lake.Partitioning{Column: "at", Unit: lake.UnitDay}
	)
	BeforeEach(func() {
		ctx = context.Background()
		st = newTickStore(ctx)
		dir, sink = openFolderSink(ctx)
	})

	It("writes a file per day and seq range under at_day= folders, then only new rows in new files", func() {
		st.add(ctx, 60) // 2.5 days
		rep, err := lake.Export(ctx, st.r, "t", sink, lake.Options{PartitionBy: byAt, RowsPerFile: 40})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Rows).To(Equal(int64(60)))
		// seqs 1-40: days 30, 01 and null; 41-60: days 01, 02 and null.
		Expect(rep.Files).To(HaveLen(6))
		Expect(lakeDays(dir)).To(Equal(wantDays(60)))
		first := names(dir)
		Expect(first).To(ContainElement("stream=t/generation=1/at_day=2026-11-30/part-00000000000000000001-00000000000000000040.parquet"))
		Expect(first).To(ContainElement("stream=t/generation=1/at_day=__HIVE_DEFAULT_PARTITION__/part-00000000000000000041-00000000000000000060.parquet"))
		before := map[string][]byte{}
		for _, n := range first {
			data, err := os.ReadFile(filepath.Join(dir, n))
			Expect(err).NotTo(HaveOccurred())
			before[n] = data
		}

		// New rows of a day that already has files: new files, the old
		// ones untouched.
		st.add(ctx, 5)
		more, err := lake.Export(ctx, st.r, "t", sink, lake.Options{PartitionBy: byAt, RowsPerFile: 40})
		Expect(err).NotTo(HaveOccurred())
		Expect(more.Rows).To(Equal(int64(5)))
		Expect(more.Files).To(HaveLen(1))
		Expect(more.Files[0].Path).To(Equal("generation=1/at_day=2026-12-02/part-00000000000000000061-00000000000000000065.parquet"))
		Expect(more.Files[0].Partition).To(Equal("2026-12-02"))
		Expect(lakeDays(dir)).To(Equal(wantDays(65)))
		for n, data := range before {
			if n == "stream=t/_manifest.json" {
				continue
			}
			Expect(os.ReadFile(filepath.Join(dir, n))).To(Equal(data), n)
		}

		m, _, err := sink.Get(ctx, lake.StreamDir("t")+"/"+lake.ManifestName)
		Expect(err).NotTo(HaveOccurred())
		man, err := lake.DecodeManifest(m, "t")
		Expect(err).NotTo(HaveOccurred())
		Expect(man.PartitionBy).To(Equal(&byAt))
		Expect(man.Files).To(HaveLen(7))
		Expect(man.HighSeq).To(Equal(int64(65)))
	})

	It("partitions by hour and by month", func() {
		st.add(ctx, 30)
		_, err := lake.Export(ctx, st.r, "t", sink, lake.Options{PartitionBy: lake.Partitioning{Column: "at", Unit: lake.UnitMonth}})
		Expect(err).NotTo(HaveOccurred())
		Expect(names(filepath.Join(dir, lake.StreamDir("t")))).To(Equal([]string{
			"_manifest.json",
			"generation=1/at_month=2026-11/part-00000000000000000001-00000000000000000030.parquet",
			"generation=1/at_month=2026-12/part-00000000000000000001-00000000000000000030.parquet",
			"generation=1/at_month=__HIVE_DEFAULT_PARTITION__/part-00000000000000000001-00000000000000000030.parquet",
		}))
		other := filepath.Join(GinkgoT().TempDir(), "hours")
		hs, err := lake.OpenSink(ctx, other)
		Expect(err).NotTo(HaveOccurred())
		rep, err := lake.Export(ctx, st.r, "t", hs, lake.Options{PartitionBy: lake.Partitioning{Column: "at", Unit: lake.UnitHour}})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Files).To(HaveLen(28)) // 27 hours and the nulls
		Expect(rep.Files[0].Path).To(Equal("generation=1/at_hour=2026-11-30T00/part-00000000000000000001-00000000000000000030.parquet"))
	})

	It("removes the files of a partitioned run that died before its manifest", func() {
		st.add(ctx, 20)
		_, err := lake.Export(ctx, st.r, "t", sink, lake.Options{PartitionBy: byAt})
		Expect(err).NotTo(HaveOccurred())
		st.add(ctx, 30)
		stale := filepath.Join(dir, lake.StreamDir("t"), "generation=1", "at_day=2026-12-02", "part-00000000000000000021-00000000000000000050.parquet")
		Expect(os.MkdirAll(filepath.Dir(stale), 0o700)).To(Succeed())
		Expect(os.WriteFile(stale, []byte("PAR1 torn"), 0o600)).To(Succeed())
		rep, err := lake.Export(ctx, st.r, "t", sink, lake.Options{PartitionBy: byAt})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Removed).To(ConsistOf("generation=1/at_day=2026-12-02/part-00000000000000000021-00000000000000000050.parquet"))
		// The run wrote the same name again, whole.
		Expect(lakeDays(dir)).To(Equal(wantDays(50)))
	})

	DescribeTable("refuses a bad partitioning before anything is written",
		func(p lake.Partitioning, want error) {
			st.add(ctx, 3)
			_, err := lake.Export(ctx, st.r, "t", sink, lake.Options{PartitionBy: p})
			Expect(errors.Is(err, want)).To(BeTrue(), "%v", err)
			Expect(names(dir)).To(BeEmpty())
		},
		Entry("an unknown column", lake.Partitioning{Column: "when", Unit: lake.UnitDay}, recordstore.ErrInvalid),
		Entry("a column that is not a datetime", lake.Partitioning{Column: "n", Unit: lake.UnitDay}, recordstore.ErrInvalid),
		Entry("an unknown unit", lake.Partitioning{Column: "at", Unit: "week"}, recordstore.ErrInvalid),
		Entry("a malformed column name", lake.Partitioning{Column: "a/../b", Unit: lake.UnitDay}, recordstore.ErrInvalid),
	)

	It("refuses another scheme than the manifest's, either way, and writes nothing", func() {
		st.add(ctx, 10)
		_, err := lake.Export(ctx, st.r, "t", sink, lake.Options{PartitionBy: byAt})
		Expect(err).NotTo(HaveOccurred())
		st.add(ctx, 10)
		before := names(dir)
		for _, p := range []lake.Partitioning{{}, {Column: "at", Unit: lake.UnitHour}} {
			_, err = lake.Export(ctx, st.r, "t", sink, lake.Options{PartitionBy: p})
			Expect(errors.Is(err, recordstore.ErrSchemaConflict)).To(BeTrue(), "%v", err)
			Expect(names(dir)).To(Equal(before))
		}

		seqDir := filepath.Join(GinkgoT().TempDir(), "seq")
		ss, err := lake.OpenSink(ctx, seqDir)
		Expect(err).NotTo(HaveOccurred())
		_, err = lake.Export(ctx, st.r, "t", ss, lake.Options{})
		Expect(err).NotTo(HaveOccurred())
		st.add(ctx, 1)
		_, err = lake.Export(ctx, st.r, "t", ss, lake.Options{PartitionBy: byAt})
		Expect(errors.Is(err, recordstore.ErrSchemaConflict)).To(BeTrue(), "%v", err)
		Expect(names(seqDir)).To(HaveLen(2)) // the manifest and one file
	})

	It("reads COLUMN and COLUMN:UNIT", func() {
		Expect(lake.ParsePartitioning("at")).To(Equal(byAt))
		Expect(lake.ParsePartitioning("at:hour")).To(Equal(lake.Partitioning{Column: "at", Unit: lake.UnitHour}))
		for _, bad := range []string{"", ":day", "at:", "at:week", "a b:day"} {
			_, err := lake.ParsePartitioning(bad)
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "%q: %v", bad, err)
		}
	})
})

var _ = Describe("a partitioned lake export to S3", func() {
	It("writes the partition folders through the S3 protocol and removes a dead run's file", func() {
		ctx := context.Background()
		srv := startS3()
		st := newTickStore(ctx)
		st.add(ctx, 30)
		sink, err := lake.OpenSink(ctx, srv.URL("warehouse/records"))
		Expect(err).NotTo(HaveOccurred())
		p := lake.Partitioning{Column: "at", Unit: lake.UnitDay}
		rep, err := lake.Export(ctx, st.r, "t", sink, lake.Options{PartitionBy: p})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Files).To(HaveLen(3))
		keys, err := srv.Keys("warehouse/records/")
		Expect(err).NotTo(HaveOccurred())
		Expect(keys).To(ConsistOf(
			"warehouse/records/stream=t/_manifest.json",
			"warehouse/records/stream=t/generation=1/at_day=2026-11-30/part-00000000000000000001-00000000000000000030.parquet",
			"warehouse/records/stream=t/generation=1/at_day=2026-12-01/part-00000000000000000001-00000000000000000030.parquet",
			"warehouse/records/stream=t/generation=1/at_day=__HIVE_DEFAULT_PARTITION__/part-00000000000000000001-00000000000000000030.parquet",
		))
		stale := lake.StreamDir("t") + "/generation=1/at_day=2026-12-09/part-00000000000000000031-00000000000000000031.parquet"
		tmp := filepath.Join(GinkgoT().TempDir(), "x")
		Expect(os.WriteFile(tmp, []byte("x"), 0o600)).To(Succeed())
		Expect(sink.PutFile(ctx, stale, tmp)).To(Succeed())
		st.add(ctx, 1)
		more, err := lake.Export(ctx, st.r, "t", sink, lake.Options{PartitionBy: p})
		Expect(err).NotTo(HaveOccurred())
		Expect(more.Removed).To(ConsistOf("generation=1/at_day=2026-12-09/part-00000000000000000031-00000000000000000031.parquet"))
		Expect(more.Files).To(HaveLen(1))
	})
})
