package lake_test

import (
	"errors"
	"testing"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/lake"
)

// FuzzDecodeManifest: any bytes either decode into a manifest whose files
// are consistent or fail with ErrInvalid; never a panic. The seed corpus
// in testdata/fuzz adds partitioned manifests, good and bad.
func FuzzDecodeManifest(f *testing.F) {
	f.Add([]byte(`{"format":1,"stream":"s","kind":"k","generation":1,"highSeq":0,"files":[]}`))
	f.Add([]byte(`{"format":1,"stream":"s","kind":"k","generation":1,"highSeq":10,"files":[{"path":"generation=1/part-00000000000000000001-00000000000000000010.parquet","generation":1,"fromSeq":1,"toSeq":10,"rows":10,"bytes":99,"sha256":"` + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + `"}]}`))
	f.Add([]byte(`{"format":2}`))
	f.Add([]byte(`{"format":1,"stream":"s","kind":"k","generation":1,"highSeq":5,"files":[{"path":"../x","generation":1,"fromSeq":1,"toSeq":10,"rows":1,"bytes":1,"sha256":"x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := lake.DecodeManifest(data, "s")
		if err != nil {
			if !errors.Is(err, recordstore.ErrInvalid) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		var last int64
		var prev lake.File
		for i, f := range m.Files {
			// A partitioned range's next file: same range, greater value.
			same := m.PartitionBy != nil && i > 0 && f.Generation == prev.Generation && f.FromSeq == prev.FromSeq && f.ToSeq == prev.ToSeq && f.Partition > prev.Partition
			if f.Generation == m.Generation && ((f.FromSeq <= last && !same) || f.ToSeq > m.HighSeq) {
				t.Fatalf("inconsistent file accepted: %+v in %+v", f, m)
			}
			if (m.PartitionBy == nil) != (f.Partition == "") {
				t.Fatalf("partition %q accepted with partitioning %v", f.Partition, m.PartitionBy)
			}
			if f.Generation == m.Generation {
				last = f.ToSeq
			}
			prev = f
		}
	})
}
