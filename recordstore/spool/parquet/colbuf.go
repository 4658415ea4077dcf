// Column buffers of the encoder: one per kind column, holding a row group's
// values in the column's Parquet physical type until they are written.

package parquet

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/fb46ecde/records/recordstore"
)

// columnBuffer buffers the values of one column.
type columnBuffer interface {
	// check reports whether v (a stored value, see recordstore.Values) may
	// be added; it changes nothing.
	check(v any) error
	// add appends a value check accepted and returns its raw size.
	add(v any) int64
	// write writes the buffered values to cw.
	write(cw file.ColumnChunkWriter) error
	// reset empties the buffer, keeping its capacity.
	reset()
}

// batchWriter is the typed column chunk writer of physical type T.
type batchWriter[T any] interface {
	WriteBatch(values []T, defLevels, repLevels []int16) (int64, error)
}

// buffer is a columnBuffer of physical type T. An optional column keeps one
// definition level per row (1 present, 0 null) and values only for present
// rows; a required column keeps no levels.
type buffer[T any] struct {
	required bool
	vals     []T
	defs     []int16
	conv     func(v any) (T, int64, error)
}

func (b *buffer[T]) check(v any) error {
	if v == nil {
		if b.required {
			return errors.New("null in a required column")
		}
		return nil
	}
	_, _, err := b.conv(v)
	return err
}

func (b *buffer[T]) add(v any) int64 {
	if v == nil {
		b.defs = append(b.defs, 0)
		return 1
	}
	t, n, _ := b.conv(v)
	b.vals = append(b.vals, t)
	if !b.required {
		b.defs = append(b.defs, 1)
	}
	return n
}

func (b *buffer[T]) write(cw file.ColumnChunkWriter) error {
	w, ok := cw.(batchWriter[T])
	if !ok {
		return fmt.Errorf("column writer %T does not take %T values", cw, *new(T))
	}
	defs := b.defs
	if b.required {
		defs = nil
	}
	_, err := w.WriteBatch(b.vals, defs, nil)
	return err
}

func (b *buffer[T]) reset() {
	clear(b.vals) // drop references to byte slices
	b.vals, b.defs = b.vals[:0], b.defs[:0]
}

func newColumnBuffer(c recordstore.Column, required bool) columnBuffer {
	switch c.Type {
	case recordstore.TypeInteger:
		return &buffer[int64]{required: required, conv: encInteger}
	case recordstore.TypeNumber:
		return &buffer[float64]{required: required, conv: encNumber}
	case recordstore.TypeBool:
		return &buffer[bool]{required: required, conv: encBool}
	case recordstore.TypeDatetime:
		return &buffer[int64]{required: required, conv: encDatetime}
	case recordstore.TypeJSON:
		return &buffer[parquet.ByteArray]{required: required, conv: encJSON}
	}
	return &buffer[parquet.ByteArray]{required: required, conv: encText} // string
}

// encJSON is encText for a json column: the text must be one JSON value
// by the store's rules (recordstore.CheckJSON), as the decoder requires.
func encJSON(v any) (parquet.ByteArray, int64, error) {
	b, n, err := encText(v)
	if err != nil {
		return nil, 0, err
	}
	if err := recordstore.CheckJSON(b); err != nil {
		return nil, 0, errors.New(recordstore.InvalidText(err))
	}
	return b, n, nil
}

func encText(v any) (parquet.ByteArray, int64, error) {
	s, ok := v.(string)
	if !ok {
		return nil, 0, fmt.Errorf("want stored text, got %T", v)
	}
	if !utf8.ValidString(s) {
		return nil, 0, errors.New("text is not valid UTF-8")
	}
	return parquet.ByteArray(s), int64(len(s)) + 4, nil
}

func encInteger(v any) (int64, int64, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, 0, fmt.Errorf("want a stored int64, got %T", v)
	}
	return n, 8, nil
}

func encNumber(v any) (float64, int64, error) {
	switch n := v.(type) {
	case float64:
		return n, 8, nil
	case int64:
		return float64(n), 8, nil
	}
	return 0, 0, fmt.Errorf("want a stored float64, got %T", v)
}

func encBool(v any) (bool, int64, error) {
	n, ok := v.(int64)
	if !ok || (n != 0 && n != 1) {
		return false, 0, fmt.Errorf("want a stored bool (int64 0 or 1), got %#v", v)
	}
	return n == 1, 1, nil
}

func encDatetime(v any) (int64, int64, error) {
	s, ok := v.(string)
	if !ok {
		return 0, 0, fmt.Errorf("want stored datetime text, got %T", v)
	}
	t, ok := recordstore.ParseStoredDatetime(s)
	if !ok {
		var err error
		if t, err = recordstore.ParseDatetime(s); err != nil {
			return 0, 0, errors.New(recordstore.InvalidText(err))
		}
	}
	return t.UnixMicro(), 8, nil
}
