// Schemas: the Parquet schema the encoder writes for a kind, and the check
// that binds a file's columns to a kind's columns on read.

package parquet

import (
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/fb46ecde/records/recordstore"
)

// requiredColumn reports whether column c of kind must never be null: it is
// declared required or belongs to the key.
func requiredColumn(kind *recordstore.Kind, c recordstore.Column) bool {
	if c.Required {
		return true
	}
	for _, k := range kind.Key {
		if k == c.Name {
			return true
		}
	}
	return false
}

// writeSchema returns the Parquet schema of kind's rows (see the package
// documentation for the type table).
func writeSchema(kind *recordstore.Kind) (*schema.GroupNode, error) {
	fields := make(schema.FieldList, 0, len(kind.Columns))
	for _, c := range kind.Columns {
		node, err := columnNode(c, requiredColumn(kind, c))
		if err != nil {
			return nil, recordstore.Invalidf("kind %s: column %s: %v", kind.Name, c.Name, err)
		}
		fields = append(fields, node)
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		return nil, recordstore.Invalidf("kind %s: parquet schema: %v", kind.Name, err)
	}
	return root, nil
}

func columnNode(c recordstore.Column, required bool) (schema.Node, error) {
	rep := parquet.Repetitions.Optional
	if required {
		rep = parquet.Repetitions.Required
	}
	switch c.Type {
	case recordstore.TypeString, recordstore.TypeJSON:
		return schema.NewPrimitiveNodeLogical(c.Name, rep, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)
	case recordstore.TypeInteger:
		return schema.NewPrimitiveNode(c.Name, rep, parquet.Types.Int64, -1, -1)
	case recordstore.TypeNumber:
		return schema.NewPrimitiveNode(c.Name, rep, parquet.Types.Double, -1, -1)
	case recordstore.TypeBool:
		return schema.NewPrimitiveNode(c.Name, rep, parquet.Types.Boolean, -1, -1)
	case recordstore.TypeDatetime:
		ts := schema.NewTimestampLogicalType(true, schema.TimeUnitMicros)
		return schema.NewPrimitiveNodeLogical(c.Name, rep, ts, parquet.Types.Int64, -1, -1)
	}
	return nil, recordstore.Invalidf("unknown column type %q", c.Type)
}

// source says how the values of one file column become stored values of
// one kind column.
type source int

// The sources. Each names the physical type read and the conversion.
const (
	srcText      source = iota // BYTE_ARRAY -> string (UTF-8 checked)
	srcJSON                    // BYTE_ARRAY -> compact JSON text
	srcInt32                   // INT32 -> int64
	srcUint32                  // INT32 holding an unsigned 32-bit value -> int64
	srcInt64                   // INT64 -> int64
	srcUint64                  // INT64 holding an unsigned 64-bit value -> int64 when it fits
	srcInt32Num                // INT32 -> float64
	srcUint32Num               // INT32 unsigned -> float64
	srcInt64Num                // INT64 -> float64
	srcUint64Num               // INT64 unsigned -> float64
	srcFloat                   // FLOAT -> float64
	srcDouble                  // DOUBLE -> float64
	srcBool                    // BOOLEAN -> int64 0/1
	srcMillis                  // INT64 TIMESTAMP(MILLIS) -> datetime text
	srcMicros                  // INT64 TIMESTAMP(MICROS) -> datetime text
	srcNanos                   // INT64 TIMESTAMP(NANOS) -> datetime text
	srcInt96                   // INT96 (legacy timestamp) -> datetime text
)

// binding ties one kind column to the file's leaf column File (-1 when the
// file has no such column), read as Source says.
type binding struct {
	File   int
	Column recordstore.Column
	Source source
}

// bindColumns checks the file schema sc against kind and returns one
// binding per kind column, in kind order. Every failure is an
// ErrSchemaMismatch error naming the column.
func bindColumns(sc *schema.Schema, kind *recordstore.Kind) ([]binding, error) {
	root := sc.Root()
	if root.NumFields() != sc.NumColumns() {
		return nil, mismatchf("kind %s: the file has nested columns; only flat columns are read", kind.Name)
	}
	out := make([]binding, len(kind.Columns))
	for i, c := range kind.Columns {
		out[i] = binding{File: -1, Column: c}
	}
	for j := 0; j < sc.NumColumns(); j++ {
		if root.Field(j).Type() != schema.Primitive {
			return nil, mismatchf("kind %s: column %s is a group; only flat columns are read", kind.Name, recordstore.Quote(root.Field(j).Name()))
		}
		descr := sc.Column(j)
		name := descr.Name()
		ki := kind.ColumnIndex(name)
		if ki < 0 {
			return nil, mismatchf("kind %s: the file has column %s, which the kind does not declare", kind.Name, recordstore.Quote(name))
		}
		if out[ki].File >= 0 {
			return nil, mismatchf("kind %s: the file has column %s twice", kind.Name, recordstore.Quote(name))
		}
		if descr.MaxRepetitionLevel() != 0 || descr.MaxDefinitionLevel() > 1 {
			return nil, mismatchf("kind %s: column %s is repeated; only flat columns are read", kind.Name, name)
		}
		src, ok := sourceFor(out[ki].Column.Type, descr)
		if !ok {
			return nil, mismatchf("kind %s: column %s (%s) cannot be read from parquet %s", kind.Name, name, out[ki].Column.Type, describeColumn(descr))
		}
		out[ki].File, out[ki].Source = j, src
	}
	for _, b := range out {
		if b.File < 0 && requiredColumn(kind, b.Column) {
			return nil, mismatchf("kind %s: required column %s is missing from the file", kind.Name, b.Column.Name)
		}
	}
	return out, nil
}

func describeColumn(descr *schema.Column) string {
	lt := descr.LogicalType()
	if lt == nil || lt.Equals(schema.NoLogicalType{}) {
		return descr.PhysicalType().String()
	}
	return descr.PhysicalType().String() + " " + lt.String()
}

// sourceFor returns how to read descr into a column of type t, or false
// when the physical or logical type does not fit t.
func sourceFor(t recordstore.ColumnType, descr *schema.Column) (source, bool) {
	phys, lt := descr.PhysicalType(), descr.LogicalType()
	switch t {
	case recordstore.TypeString, recordstore.TypeJSON:
		if phys != parquet.Types.ByteArray || !textLogical(lt) {
			return 0, false
		}
		if t == recordstore.TypeJSON {
			return srcJSON, true
		}
		return srcText, true
	case recordstore.TypeInteger:
		return integerSource(phys, lt, false)
	case recordstore.TypeNumber:
		switch phys {
		case parquet.Types.Float:
			return srcFloat, plainLogical(lt)
		case parquet.Types.Double:
			return srcDouble, plainLogical(lt)
		}
		return integerSource(phys, lt, true)
	case recordstore.TypeBool:
		return srcBool, phys == parquet.Types.Boolean && plainLogical(lt)
	case recordstore.TypeDatetime:
		return datetimeSource(phys, lt)
	}
	return 0, false
}

func plainLogical(lt schema.LogicalType) bool {
	if lt == nil {
		return true
	}
	switch lt.(type) {
	case schema.NoLogicalType:
		return true
	}
	return false
}

func textLogical(lt schema.LogicalType) bool {
	if plainLogical(lt) {
		return true
	}
	switch lt.(type) {
	case schema.StringLogicalType, schema.EnumLogicalType, schema.JSONLogicalType:
		return true
	}
	return false
}

// integerSource reads INT32/INT64 columns that are plain or annotated as
// integers; num selects the float64 conversions for number columns.
func integerSource(phys parquet.Type, lt schema.LogicalType, num bool) (source, bool) {
	unsigned := false
	if !plainLogical(lt) {
		it, ok := lt.(schema.IntLogicalType)
		if !ok {
			return 0, false
		}
		unsigned = !it.IsSigned()
		// 8- and 16-bit unsigned values are stored widened in an INT32
		// and never negative: read them as signed.
		if unsigned && it.BitWidth() < 32 {
			unsigned = false
		}
	}
	pick := func(signed, uns, signedNum, unsNum source) (source, bool) {
		switch {
		case num && unsigned:
			return unsNum, true
		case num:
			return signedNum, true
		case unsigned:
			return uns, true
		}
		return signed, true
	}
	switch phys {
	case parquet.Types.Int32:
		return pick(srcInt32, srcUint32, srcInt32Num, srcUint32Num)
	case parquet.Types.Int64:
		return pick(srcInt64, srcUint64, srcInt64Num, srcUint64Num)
	}
	return 0, false
}

func datetimeSource(phys parquet.Type, lt schema.LogicalType) (source, bool) {
	if phys == parquet.Types.Int96 {
		return srcInt96, plainLogical(lt)
	}
	ts, ok := lt.(schema.TimestampLogicalType)
	if phys != parquet.Types.Int64 || !ok {
		return 0, false
	}
	switch ts.TimeUnit() {
	case schema.TimeUnitMillis:
		return srcMillis, true
	case schema.TimeUnitMicros:
		return srcMicros, true
	case schema.TimeUnitNanos:
		return srcNanos, true
	}
	return 0, false
}
