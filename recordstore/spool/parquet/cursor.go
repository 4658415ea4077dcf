// Column cursors of the decoder: each reads one column chunk in small
// batches and converts its values to stored values.

package parquet

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// batchRows is how many rows the decoder reads from each column at a time.
const batchRows = 1024

// cursor reads one column chunk.
type cursor interface {
	// fill stores the next len(out) values of the column in out (nil for
	// null) and returns their decoded size in bytes.
	fill(out []any) (int64, error)
	// exhausted reports an error unless the chunk has no values left.
	exhausted() error
}

// pageReader is the typed column chunk reader of physical type T.
type pageReader[T any] interface {
	ReadBatchInPage(batchSize int64, values []T, defLvls, repLvls []int16) (int64, int, error)
	HasNext() bool
}

// typedCursor is a cursor over values of physical type T.
type typedCursor[T any] struct {
	name   string
	rd     pageReader[T]
	maxDef int16
	vals   []T
	defs   []int16
	conv   func(T) (any, int64, error)
}

func newTypedCursor[T any](name string, cr file.ColumnChunkReader, conv func(T) (any, int64, error)) (cursor, error) {
	rd, ok := cr.(pageReader[T])
	if !ok {
		return nil, corruptf("column %s: reader %T does not yield %T", name, cr, *new(T))
	}
	return &typedCursor[T]{
		name:   name,
		rd:     rd,
		maxDef: cr.Descriptor().MaxDefinitionLevel(),
		vals:   make([]T, batchRows),
		defs:   make([]int16, batchRows),
		conv:   conv,
	}, nil
}

// fill reads page by page: values read from one page are converted before
// the next page is read, because byte-array values point into the page
// buffer that the next page reuses.
func (c *typedCursor[T]) fill(out []any) (int64, error) {
	var size int64
	for done := 0; done < len(out); {
		want := min(len(out)-done, len(c.vals))
		levels, nvals, err := c.rd.ReadBatchInPage(int64(want), c.vals[:want], c.defs[:want], nil)
		if err != nil {
			return 0, corruptf("column %s: %v", c.name, err)
		}
		if levels <= 0 || levels > int64(want) || nvals > int(levels) {
			return 0, corruptf("column %s: ends before its row group", c.name)
		}
		n, err := c.convert(out[done:done+int(levels)], nvals)
		if err != nil {
			return 0, err
		}
		size += n
		done += int(levels)
	}
	return size, nil
}

// convert turns one page read (len(out) levels, nvals values) into stored
// values.
func (c *typedCursor[T]) convert(out []any, nvals int) (int64, error) {
	var size int64
	vi := 0
	for i := range out {
		if c.maxDef > 0 && c.defs[i] < c.maxDef {
			out[i] = nil
			continue
		}
		if vi >= nvals {
			return 0, corruptf("column %s: fewer values than definition levels", c.name)
		}
		v, n, err := c.conv(c.vals[vi])
		if err != nil {
			return 0, fmt.Errorf("column %s: %w", c.name, err)
		}
		vi++
		out[i], size = v, size+n
	}
	if vi != nvals {
		return 0, corruptf("column %s: more values than definition levels", c.name)
	}
	return size, nil
}

func (c *typedCursor[T]) exhausted() error {
	if c.rd.HasNext() {
		return corruptf("column %s: holds more values than its row group has rows", c.name)
	}
	return nil
}

// newCursor returns the cursor reading cr for binding b.
func newCursor(b binding, cr file.ColumnChunkReader) (cursor, error) {
	name := b.Column.Name
	switch b.Source {
	case srcText:
		return newTypedCursor(name, cr, textValue)
	case srcJSON:
		return newTypedCursor(name, cr, jsonValue)
	case srcInt32:
		return newTypedCursor(name, cr, int32Value)
	case srcUint32:
		return newTypedCursor(name, cr, uint32Value)
	case srcInt64:
		return newTypedCursor(name, cr, int64Value)
	case srcUint64:
		return newTypedCursor(name, cr, uint64Value)
	case srcInt32Num:
		return newTypedCursor(name, cr, int32Number)
	case srcUint32Num:
		return newTypedCursor(name, cr, uint32Number)
	case srcInt64Num:
		return newTypedCursor(name, cr, int64Number)
	case srcUint64Num:
		return newTypedCursor(name, cr, uint64Number)
	case srcFloat:
		return newTypedCursor(name, cr, floatNumber)
	case srcDouble:
		return newTypedCursor(name, cr, doubleNumber)
	case srcBool:
		return newTypedCursor(name, cr, boolValue)
	case srcMillis:
		return newTypedCursor(name, cr, millisValue)
	case srcMicros:
		return newTypedCursor(name, cr, microsValue)
	case srcNanos:
		return newTypedCursor(name, cr, nanosValue)
	case srcInt96:
		return newTypedCursor[parquet.Int96](name, cr, int96Value)
	}
	return nil, fmt.Errorf("column %s: unknown source %d", name, b.Source)
}
