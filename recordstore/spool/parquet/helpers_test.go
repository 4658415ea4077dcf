// Shared test helpers: kinds, encode/decode through the registered codec,
// and files written directly with arrow-go the way other tools write them.

package parquet_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	pq "github.com/fb46ecde/records/recordstore/spool/parquet"
)

// allTypes is a kind with one column of every type and a required key (the
// fuzz target's kind).
func allTypes() *recordstore.Kind { return fuzzKind() }

// oneColumn is a kind with a single optional column of type t named c.
func oneColumn(c string, t recordstore.ColumnType, required bool) *recordstore.Kind {
	k := &recordstore.Kind{Name: "one", Columns: []recordstore.Column{{Name: c, Type: t, Required: required}}}
	Expect(k.Validate()).To(Succeed())
	return k
}

func codec() spool.Codec {
	c, err := spool.Lookup("parquet")
	Expect(err).NotTo(HaveOccurred())
	return c
}

// normalize normalizes rows with the kind, as every producer does.
func normalize(kind *recordstore.Kind, rows []recordstore.Row) []recordstore.Values {
	out := make([]recordstore.Values, len(rows))
	for i, r := range rows {
		v, err := kind.Normalize(r)
		Expect(err).NotTo(HaveOccurred(), "row %d", i)
		out[i] = v
	}
	return out
}

// encode writes vals through the registered codec's encoder.
func encode(kind *recordstore.Kind, vals []recordstore.Values) []byte {
	var buf bytes.Buffer
	enc, err := codec().NewEncoder(&buf, kind)
	Expect(err).NotTo(HaveOccurred())
	for _, v := range vals {
		Expect(enc.Write(v)).To(Succeed())
	}
	Expect(enc.Close()).To(Succeed())
	return buf.Bytes()
}

// encodeBudget writes vals with small row groups.
func encodeBudget(kind *recordstore.Kind, vals []recordstore.Values, rows int, size int64) []byte {
	var buf bytes.Buffer
	enc, err := pq.NewEncoderWithBudget(&buf, kind, rows, size)
	Expect(err).NotTo(HaveOccurred())
	for _, v := range vals {
		Expect(enc.Write(v)).To(Succeed())
	}
	Expect(enc.Close()).To(Succeed())
	return buf.Bytes()
}

// decodeAll reads every row of data, stopping at the first error. It does
// not use gomega, so fuzz targets can call it.
func decodeAll(kind *recordstore.Kind, data []byte, lim spool.Limits) ([]recordstore.Values, error) {
	dec, err := pq.Codec{}.NewDecoder(bytes.NewReader(data), int64(len(data)), kind, lim)
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	var out []recordstore.Values
	for {
		v, err := dec.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
}

// rowGroups returns how many row groups data has, read by arrow-go.
func rowGroups(data []byte) int {
	r, err := file.NewParquetReader(bytes.NewReader(data))
	Expect(err).NotTo(HaveOccurred())
	return r.NumRowGroups()
}

// rawColumn is one column of a file written directly with arrow-go.
type rawColumn struct {
	node  schema.Node
	write func(cw file.ColumnChunkWriter) error
}

// typedWriter is arrow-go's typed column chunk writer of T.
type typedWriter[T any] interface {
	WriteBatch(values []T, defLevels, repLevels []int16) (int64, error)
}

// column builds a rawColumn of physical type T: vals are the non-null
// values, defs the definition levels (nil for a required column).
func column[T any](node schema.Node, vals []T, defs []int16) rawColumn {
	return rawColumn{node: node, write: func(cw file.ColumnChunkWriter) error {
		_, err := cw.(typedWriter[T]).WriteBatch(vals, defs, nil)
		return err
	}}
}

func node(n schema.Node, err error) schema.Node {
	Expect(err).NotTo(HaveOccurred())
	return n
}

func optional(name string, lt schema.LogicalType, phys parquet.Type) schema.Node {
	return node(schema.NewPrimitiveNodeLogical(name, parquet.Repetitions.Optional, lt, phys, -1, -1))
}

func required(name string, lt schema.LogicalType, phys parquet.Type) schema.Node {
	return node(schema.NewPrimitiveNodeLogical(name, parquet.Repetitions.Required, lt, phys, -1, -1))
}

// writeRaw writes one row group of cols with arrow-go's low-level writer.
func writeRaw(cols []rawColumn, props ...parquet.WriterProperty) []byte {
	fields := make(schema.FieldList, len(cols))
	for i, c := range cols {
		fields[i] = c.node
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	Expect(err).NotTo(HaveOccurred())
	return writeGroups(root, [][]rawColumn{cols}, props...)
}

// writeGroups writes one row group per element of groups under root.
func writeGroups(root *schema.GroupNode, groups [][]rawColumn, props ...parquet.WriterProperty) []byte {
	var buf bytes.Buffer
	if len(props) == 0 {
		props = []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy)}
	}
	w := file.NewParquetWriter(&buf, root, file.WithWriterProps(parquet.NewWriterProperties(props...)))
	for _, cols := range groups {
		rg, err := w.AppendRowGroupChecked()
		Expect(err).NotTo(HaveOccurred())
		for _, c := range cols {
			cw, err := rg.NextColumn()
			Expect(err).NotTo(HaveOccurred())
			Expect(c.write(cw)).To(Succeed())
			Expect(cw.Close()).To(Succeed())
		}
		Expect(rg.Close()).To(Succeed())
	}
	Expect(w.Close()).To(Succeed())
	return buf.Bytes()
}

// discard is a buffer that records whether anyone closed it.
type discard struct {
	bytes.Buffer
	closed bool
}

func (d *discard) Close() error { d.closed = true; return nil }

var errDiskFull = errors.New("disk full")

// failingWriter accepts after bytes, then fails every write.
type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.after {
		n := w.after
		w.after = 0
		return n, errDiskFull
	}
	w.after -= len(p)
	return len(p), nil
}

func pqEncoderBudget(w io.Writer, kind *recordstore.Kind, rows int) (spool.Encoder, error) {
	return pq.NewEncoderWithBudget(w, kind, rows, 1<<30)
}

// rawFromValues turns decoded values of kind back into raw arrow-go
// columns with the types the codec writes, so other writer settings can
// be tried on the same data.
func rawFromValues(kind *recordstore.Kind, rows []recordstore.Values) []rawColumn {
	out := make([]rawColumn, len(kind.Columns))
	for ci, c := range kind.Columns {
		req := c.Required || slices.Contains(kind.Key, c.Name)
		var defs []int16
		present := func(v any) bool {
			if !req {
				if v == nil {
					defs = append(defs, 0)
				} else {
					defs = append(defs, 1)
				}
			}
			return v != nil
		}
		mk := optional
		if req {
			mk = required
		}
		switch c.Type {
		case recordstore.TypeString, recordstore.TypeJSON:
			var vals []parquet.ByteArray
			for _, r := range rows {
				if present(r[ci]) {
					vals = append(vals, parquet.ByteArray(r[ci].(string)))
				}
			}
			out[ci] = column(mk(c.Name, schema.StringLogicalType{}, parquet.Types.ByteArray), vals, defs)
		case recordstore.TypeInteger:
			var vals []int64
			for _, r := range rows {
				if present(r[ci]) {
					vals = append(vals, r[ci].(int64))
				}
			}
			out[ci] = column(mk(c.Name, nil, parquet.Types.Int64), vals, defs)
		case recordstore.TypeNumber:
			var vals []float64
			for _, r := range rows {
				if present(r[ci]) {
					vals = append(vals, r[ci].(float64))
				}
			}
			out[ci] = column(mk(c.Name, nil, parquet.Types.Double), vals, defs)
		case recordstore.TypeBool:
			var vals []bool
			for _, r := range rows {
				if present(r[ci]) {
					vals = append(vals, r[ci].(int64) == 1)
				}
			}
			out[ci] = column(mk(c.Name, nil, parquet.Types.Boolean), vals, defs)
		case recordstore.TypeDatetime:
			var vals []int64
			for _, r := range rows {
				if present(r[ci]) {
					t, err := time.Parse(time.RFC3339Nano, r[ci].(string))
					Expect(err).NotTo(HaveOccurred())
					vals = append(vals, t.UnixMicro())
				}
			}
			out[ci] = column(mk(c.Name, schema.NewTimestampLogicalType(true, schema.TimeUnitMicros), parquet.Types.Int64), vals, defs)
		}
	}
	return out
}
