// Cross-checks of the files the encoder writes, through readers other than
// the codec: arrow-go's Arrow reader (always), and pyarrow or the DuckDB
// CLI when the machine has them (skipped otherwise). DuckDB's own engine
// reads them in every `make test` too, in the interop module.

package parquet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// crossFile writes the sample rows to a file and returns its path.
func crossFile() string {
	kind := allTypes()
	path := filepath.Join(GinkgoT().TempDir(), "events.parquet")
	Expect(os.WriteFile(path, encode(kind, normalize(kind, sampleRows())), 0o600)).To(Succeed())
	return path
}

var _ = Describe("files other readers see", func() {
	It("have the Arrow types of the type table", func() {
		kind := allTypes()
		data := encode(kind, normalize(kind, sampleRows()))
		tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(data), nil, pqarrow.ArrowReadProperties{}, memory.NewGoAllocator())
		Expect(err).NotTo(HaveOccurred())
		defer tbl.Release()
		types := map[string]string{}
		for _, f := range tbl.Schema().Fields() {
			types[f.Name] = f.Type.String()
		}
		Expect(types).To(Equal(map[string]string{
			"id": "utf8", "s": "utf8", "i": "int64", "n": "float64", "b": "bool",
			"d": "timestamp[us, tz=UTC]", "j": "utf8", "r": "int64",
		}))
		Expect(tbl.Schema().Field(0).Nullable).To(BeFalse()) // key column
		Expect(tbl.Schema().Field(1).Nullable).To(BeTrue())
		d := tbl.Column(5).Data().Chunk(0).(*array.Timestamp)
		Expect(d.Value(0).ToTime(arrow.Microsecond).UTC().Format("2006-01-02T15:04:05.000000Z")).To(Equal("2024-02-29T23:59:59.123456Z"))
		i := tbl.Column(2).Data().Chunk(0).(*array.Int64)
		Expect(i.Value(1)).To(Equal(int64(-9223372036854775808)))
		Expect(i.IsNull(3)).To(BeTrue())
	})

	It("have every column chunk compressed with zstd", func() {
		kind := allTypes()
		data := encode(kind, normalize(kind, sampleRows()))
		r, err := file.NewParquetReader(bytes.NewReader(data))
		Expect(err).NotTo(HaveOccurred())
		defer r.Close()
		md := r.MetaData()
		Expect(md.NumRowGroups()).To(BeNumerically(">", 0))
		for g := range md.NumRowGroups() {
			rg := md.RowGroup(g)
			Expect(rg.NumColumns()).To(Equal(len(kind.Columns)))
			for c := range rg.NumColumns() {
				cc, err := rg.ColumnChunk(c)
				Expect(err).NotTo(HaveOccurred())
				Expect(cc.Compression()).To(Equal(compress.Codecs.Zstd), "row group %d, column %d", g, c)
			}
		}
	})

	It("read in pyarrow with the same types", func() {
		py, err := exec.LookPath("python3")
		if err != nil || exec.Command(py, "-c", "import pyarrow.parquet").Run() != nil {
			Skip("python3 with pyarrow is not available")
		}
		script := `import json, sys, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
print(json.dumps({f.name: str(f.type) for f in t.schema}))`
		out, err := exec.Command(py, "-c", script, crossFile()).Output()
		Expect(err).NotTo(HaveOccurred())
		var types map[string]string
		Expect(json.Unmarshal(out, &types)).To(Succeed())
		Expect(types).To(Equal(map[string]string{
			"id": "string", "s": "string", "i": "int64", "n": "double", "b": "bool",
			"d": "timestamp[us, tz=UTC]", "j": "string", "r": "int64",
		}))
	})

	It("read in DuckDB with the same types", func() {
		duck, err := exec.LookPath("duckdb")
		if err != nil {
			Skip("the duckdb CLI is not available")
		}
		q := "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('" + crossFile() + "'))"
		out, err := exec.Command(duck, "-csv", "-noheader", "-c", q).Output()
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Fields(strings.ReplaceAll(string(out), " ", "_"))).To(Equal([]string{
			"id,VARCHAR", "s,VARCHAR", "i,BIGINT", "n,DOUBLE", "b,BOOLEAN",
			"d,TIMESTAMP_WITH_TIME_ZONE", "j,VARCHAR", "r,BIGINT",
		}))
	})
})
