// Decoding stored values into the rows readers see, column by column, with
// a fast path for the stored datetime form. The result is what
// recordstore.Kind.Decode returns for the same values.

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// decodeChunk is how many rows a scan reads before handing them to the
// decoder goroutine: a large scan steps SQLite on one core while the rows
// read so far become maps on another.
const decodeChunk = 256

// rawChunk is up to decodeChunk rows as the driver returned them.
type rawChunk struct {
	seqs []int64
	vals []any // row r is vals[r*width : (r+1)*width]
	n    int
}

func newRawChunk(width int) *rawChunk {
	return &rawChunk{seqs: make([]int64, decodeChunk), vals: make([]any, decodeChunk*width)}
}

// rowStep reads the next row of a query of (seq, columns...) rows into seq
// and vals (one per column), or returns io.EOF after the last row.
type rowStep func(seq *int64, vals []any) error

// sqlRows steps rows through database/sql.
func sqlRows(rows *sql.Rows, width int) rowStep {
	dest := make([]any, width+1)
	return func(seq *int64, vals []any) error {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return io.EOF
		}
		dest[0] = seq
		for i := range vals {
			dest[i+1] = &vals[i]
		}
		return rows.Scan(dest...)
	}
}

// driverRows steps rows of the driver directly (see Backend.scanDirect):
// its values are final already (integers, floats, strings and fresh byte
// slices), so each is kept as it is, without database/sql's locking and
// per-value conversion of every row.
func driverRows(rows driver.Rows, width int) rowStep {
	dest := make([]driver.Value, width+1)
	return func(seq *int64, vals []any) error {
		if err := rows.Next(dest); err != nil {
			return err
		}
		n, ok := dest[0].(int64)
		if !ok {
			return fmt.Errorf("a row's seq is %T, not an integer", dest[0])
		}
		*seq = n
		for i := range vals {
			vals[i] = dest[i+1]
		}
		return nil
	}
}

// decodeRows reads every row step yields into records; hint is how many
// rows are expected at most. Past the first chunk, decoding runs in a
// second goroutine, chunk by chunk, in order; ctx is checked between
// chunks (see readChunks).
func (t *table) decodeRows(ctx context.Context, step rowStep, hint int64) ([]recordstore.Record, error) {
	out := make([]recordstore.Record, 0, min(hint, 1<<16))
	err := readChunks(ctx, len(t.kind.Columns), step, func(c *rawChunk) error {
		out = t.appendDecoded(out, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readChunks reads every row step yields, width values each, into chunks
// of decodeChunk rows and hands each chunk to consume, in order. A read of
// one chunk or less hands it over on this goroutine; past it, a second
// goroutine consumes each chunk while this one reads the next, and the
// chunks it is done with come back to be reused (consume must not keep
// them). The first error of consume stops the reading and is returned;
// ctx is checked between chunks.
func readChunks(ctx context.Context, width int, step rowStep, consume func(*rawChunk) error) error {
	var (
		queue  chan *rawChunk
		spare  chan *rawChunk
		done   chan struct{}
		failed atomic.Bool
		ferr   error // consume's error on the goroutine, read after done
	)
	stop := func() error {
		if queue == nil {
			return nil
		}
		close(queue)
		<-done
		return ferr
	}
	fail := func(err error) error {
		if serr := stop(); serr != nil {
			return serr
		}
		return err
	}
	chunk := newRawChunk(width)
	for {
		r := chunk.n
		err := step(&chunk.seqs[r], chunk.vals[r*width:(r+1)*width])
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(err)
		}
		if chunk.n++; chunk.n < decodeChunk {
			continue
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if queue == nil {
			queue, spare, done = make(chan *rawChunk, 4), make(chan *rawChunk, 6), make(chan struct{})
			go func() {
				defer close(done)
				for c := range queue {
					if ferr == nil {
						if ferr = consume(c); ferr != nil {
							failed.Store(true)
						}
					}
					clear(c.vals) // drop references before reuse
					c.n = 0
					spare <- c
				}
			}()
		}
		if failed.Load() {
			return stop()
		}
		queue <- chunk
		select {
		case chunk = <-spare:
		default:
			chunk = newRawChunk(width)
		}
	}
	if err := stop(); err != nil {
		return err
	}
	return consume(chunk)
}

// appendDecoded decodes the rows of c onto out.
func (t *table) appendDecoded(out []recordstore.Record, c *rawChunk) []recordstore.Record {
	if out == nil {
		out = make([]recordstore.Record, 0, c.n)
	}
	width := len(t.kind.Columns)
	for r := 0; r < c.n; r++ {
		out = append(out, recordstore.Record{Seq: c.seqs[r], Values: t.decodeRow(c.vals[r*width : (r+1)*width])})
	}
	return out
}

// decodeRow turns one row of stored values (in column order) into a Row.
func (t *table) decodeRow(vals []any) recordstore.Row {
	row := make(recordstore.Row, len(t.kind.Columns))
	for i, c := range t.kind.Columns {
		row[c.Name] = decodeValue(c.Type, vals[i])
	}
	return row
}

// decodeValue is recordstore.DecodeValue with the common cases first and
// without reallocating values that are stored in their reader form.
func decodeValue(typ recordstore.ColumnType, v any) any {
	switch typ {
	case recordstore.TypeString:
		if _, ok := v.(string); ok {
			return v
		}
	case recordstore.TypeInteger:
		if _, ok := v.(int64); ok {
			return v
		}
	case recordstore.TypeNumber:
		if _, ok := v.(float64); ok {
			return v
		}
	case recordstore.TypeBool:
		if n, ok := v.(int64); ok {
			return n != 0
		}
	case recordstore.TypeDatetime:
		if s, ok := v.(string); ok {
			if tm, ok := parseDatetime(s); ok {
				return tm
			}
		}
	case recordstore.TypeJSON:
		if s, ok := v.(string); ok {
			return json.RawMessage(s)
		}
	}
	return recordstore.DecodeValue(typ, v)
}

// parseDatetime parses exactly the stored form
// (recordstore.DatetimeLayout, "2006-01-02T15:04:05.000000Z"); ok is false
// for any other text, which the caller then parses the general way.
func parseDatetime(s string) (time.Time, bool) { return recordstore.ParseStoredDatetime(s) }
