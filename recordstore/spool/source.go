// Publishing an append entry whose rows stream from a RowSource
// (recordstore.BatchEntry.Source): the rows are read, checked and encoded
// into the data file a chunk at a time, its size, SHA-256 and row count
// taken as they go, so that the memory of a publish does not grow with
// the entry's rows (a keyed kind's keys past about 1 MiB wait in a scratch
// file: recordstore.KeySet).

package spool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/fb46ecde/records/recordstore"
)

// sourceChunk is how many rows of a streamed entry are read, checked and
// encoded together: enough for encodeLines to spread a chunk over its
// workers, few enough that a chunk of small rows takes a few hundred KB.
const sourceChunk = 4096

// entryRows is how many rows an entry carries: its Rows, or as many as its
// Source announces.
func entryRows(e *recordstore.BatchEntry) int {
	if e.Source != nil {
		return e.Source.Len()
	}
	return len(e.Rows)
}

// rowCheck refuses, one row at a time, what an owner would refuse of an
// append entry as a whole (see checkRows): a row with another number of
// values than its kind has columns, a null required or key column, or a
// key already seen in the entry. The keys of a keyed kind are held by a
// recordstore.KeySet: past about 1 MiB in a scratch file in the system's
// temporary folder, checked by done.
type rowCheck struct {
	kind *recordstore.Kind
	keys *recordstore.KeySet // nil for a kind without a key
}

// newRowCheck returns the check of an entry of rows of kind; close
// releases it.
func newRowCheck(kind *recordstore.Kind) *rowCheck {
	return &rowCheck{kind: kind, keys: recordstore.NewKeySet(kind, "")}
}

// check checks row j (from 0), v; rows are checked in order.
func (c *rowCheck) check(j int, v recordstore.Values) error {
	if len(v) != len(c.kind.Columns) {
		return c.first(fmt.Errorf("row %d: %w", j+1, recordstore.Invalidf("kind %s: %d values for %d columns", c.kind.Name, len(v), len(c.kind.Columns))))
	}
	if err := c.kind.CheckRequired(v); err != nil {
		return c.first(fmt.Errorf("row %d: %w", j+1, err))
	}
	return c.keys.Add(j, v)
}

// first is the error of an entry that failed with err after rows were
// checked: a key repeated among those rows, if any (a check in row order
// stops there first), else err.
func (c *rowCheck) first(err error) error {
	if kerr := c.keys.Check(); kerr != nil {
		return kerr
	}
	return err
}

// done checks what only the whole entry tells, once every row is checked:
// no key repeated among the rows.
func (c *rowCheck) done() error { return c.keys.Check() }

// close releases the check's keys (and their file).
func (c *rowCheck) close() { _ = c.keys.Close() }

// encodeSource is encodeEntry for the rows of src, read to its end: each
// row is checked (rowCheck) as it is read and the rows are encoded
// sourceChunk at a time. It returns the rows' count besides the bytes'
// count and SHA-256. src must yield exactly the src.Len() rows it
// announces; fewer or more is ErrInvalid. A row src fails to give fails
// it with that error ("row N: ..."). With a codec that does not write
// NDJSON lines and a limit above zero, rows whose estimated NDJSON size
// (estimateRow) passes limit fail it with ErrTooLarge, as Publish refuses
// held rows before writing them. On error sink may have been given part
// of the data.
func encodeSource(ctx context.Context, codec Codec, kind *recordstore.Kind, src recordstore.RowSource, limit int64, sink func([]byte) error) (rows, n int64, sum string, err error) {
	hw := &hashWriter{w: sinkWriter(sink), h: sha256.New()}
	write, end, err := chunkEncoder(ctx, codec, kind, limit, hw)
	if err != nil {
		return 0, 0, "", err
	}
	want := src.Len()
	check := newRowCheck(kind)
	defer check.close()
	chunk := make([]recordstore.Values, 0, min(want, sourceChunk))
	got := 0
	for {
		v, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, "", check.first(fmt.Errorf("row %d: %w", got+1, err))
		}
		if got == want {
			return 0, 0, "", check.first(recordstore.Invalidf("the row source yields more than the %d rows it announced", want))
		}
		if err := check.check(got, v); err != nil {
			return 0, 0, "", err
		}
		chunk = append(chunk, v)
		got++
		if len(chunk) == cap(chunk) {
			if err := write(chunk, got-len(chunk)); err != nil {
				return 0, 0, "", check.first(err)
			}
			clear(chunk) // let the rows go before the next are read
			chunk = chunk[:0]
		}
	}
	if got != want {
		return 0, 0, "", check.first(recordstore.Invalidf("the row source ended after %d of the %d rows it announced", got, want))
	}
	if err := check.done(); err != nil {
		return 0, 0, "", err
	}
	if len(chunk) > 0 {
		if err := write(chunk, got-len(chunk)); err != nil {
			return 0, 0, "", err
		}
	}
	if err := end(); err != nil {
		return 0, 0, "", err
	}
	return int64(got), hw.n, hex.EncodeToString(hw.h.Sum(nil)), nil
}

// chunkEncoder returns the functions encodeSource writes its chunks with
// (rows being the entry's from row first+1 on) and ends the data with.
func chunkEncoder(ctx context.Context, codec Codec, kind *recordstore.Kind, limit int64, hw io.Writer) (write func(rows []recordstore.Values, first int) error, end func() error, err error) {
	if ls, ok := codec.(lineStream); ok {
		w, end, err := ls.wrapLines(hw)
		if err != nil {
			return nil, nil, err
		}
		if limit > 0 {
			w = &limitWriter{w: w, left: limit, limit: limit}
		}
		ra := newRowAppender(kind)
		return func(rows []recordstore.Values, first int) error {
			return encodeLines(ctx, ra, rows, first, w)
		}, end, nil
	}
	enc, err := codec.NewEncoder(hw, kind)
	if err != nil {
		return nil, nil, err
	}
	var size int64
	return func(rows []recordstore.Values, first int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, v := range rows {
			if size += estimateRow(kind, v); limit > 0 && size > limit {
				return tooLarge(limit)
			}
			if err := enc.Write(v); err != nil {
				return fmt.Errorf("row %d: %w", first+i+1, err)
			}
		}
		return nil
	}, enc.Close, nil
}
