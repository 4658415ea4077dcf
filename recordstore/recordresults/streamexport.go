// Export through a backend that hands rows over as it reads them
// (RowStreamer): each page's rows go to the writer straight from the
// values read, without a Record per row, in larger pages.

package recordresults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/fb46ecde/records/recordstore"
)

// RowStreamer is the optional capability of a backend that runs a
// recordstore.RowQuery handing each row over as it reads it
// (sqlite.Backend does). Export uses it when the backend has it; the rows
// and the bytes written are the same as through RowQuerier.
type RowStreamer interface {
	// StreamRows runs q on stream as RowQuerier.QueryRows does, in one
	// snapshot: it calls start once with the stream's Meta and the kind's
	// columns before any row (an error from start ends the read and is
	// returned as it is), then row for each row in q's order, with its
	// values in the order of the kind's columns; vals is not to be kept
	// past the call, and row's first error ends the read, returned as it
	// is. row may run on another goroutine than the caller's, one call at
	// a time.
	StreamRows(ctx context.Context, stream string, q recordstore.RowQuery, start func(recordstore.Meta, *recordstore.Kind) error, row func(seq int64, vals []any) error) error
}

// maxStreamPage is the most rows an export through a RowStreamer reads in
// one page (one read transaction); each page costs a read transaction,
// the stream's lookup and a statement.
const maxStreamPage = 64 * MaxPageSize

// maxPageBytes is the most output a streamed page holds in memory: a page
// ends early, after the row that passes it. The page's output is written
// out only once its read transaction has ended, so that a slow reader of
// the output (a pager, a stalled pipe) never holds a read transaction
// open — which would keep the owner's WAL from being reset and make it
// grow for as long as the reader waits. One page is written out while the
// next is read: at most two pages' output are held.
const maxPageBytes = 2 << 20

// pageBuffer holds the output of a streamed page in memory; drain hands it
// to a goroutine that writes it to out while the next page is read into
// the other buffer, and wait waits for that write. Only that goroutine
// writes to out while a drain is in flight.
type pageBuffer struct {
	out      io.Writer
	buf      []byte     // the page being read
	spare    []byte     // the buffer of the drain in flight, or free
	inflight chan error // the drain in flight; nil when none
}

func (b *pageBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// drain waits for the drain in flight, then starts writing what the page
// buffered to out and gives the page an empty buffer. It returns the
// earlier drain's error.
func (b *pageBuffer) drain() error {
	if err := b.wait(); err != nil {
		return err
	}
	if len(b.buf) == 0 {
		return nil
	}
	data := b.buf
	b.buf, b.spare = b.spare[:0], data
	done := make(chan error, 1)
	b.inflight = done
	go func() {
		_, err := b.out.Write(data)
		done <- err
	}()
	return nil
}

// wait waits for the drain in flight, if any, and returns its error.
func (b *pageBuffer) wait() error {
	if b.inflight == nil {
		return nil
	}
	err := <-b.inflight
	b.inflight = nil
	return err
}

// errPageFull and errReadEmpty end a streamed page early: it read the one
// row past the page that says more follow, or the stream has no row in
// the read's window.
var (
	errPageFull  = errors.New("page full")
	errReadEmpty = errors.New("nothing to read")
)

// streamExport writes the rows of g's read through s, a page at a time
// (the first MaxPageSize rows, then twice the page before, up to
// maxStreamPage), as writeExport does with no first page and no cut.
func streamExport(ctx context.Context, s RowStreamer, g *pager, rw rowWriter, pb *pageBuffer, o ExportOptions) (n int64, err error) {
	defer func() {
		if werr := pb.wait(); err == nil && werr != nil {
			err = fmt.Errorf("export: %w", werr)
		}
	}()
	// Progress runs once a page is written out, with no write in flight
	// (it may flush out: an HTTP response).
	var written int64
	progress := func() error {
		if err := pb.wait(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if o.Progress != nil && written > 0 {
			o.Progress(written)
		}
		return nil
	}
	for !g.ended {
		size := g.nextSize(maxStreamPage)
		if size == 0 {
			break
		}
		got, more, err := g.p.fetchEach(ctx, s, size, rw, pb)
		n += int64(got)
		g.sent += got
		if err != nil {
			return n, err
		}
		if !more || (g.limit > 0 && g.sent == g.limit) {
			g.ended = true
		}
		if got == 0 {
			continue
		}
		if err := rw.flush(); err != nil {
			return n, fmt.Errorf("export: %w", err)
		}
		if err := progress(); err != nil {
			return n, err
		}
		written = n
		if err := pb.drain(); err != nil {
			return n, fmt.Errorf("export: %w", err)
		}
	}
	g.ended = true
	if err := progress(); err != nil {
		return n, err
	}
	if err := rw.close(); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	if err := pb.drain(); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	return n, nil
}

// fetchEach is fetch through a RowStreamer: up to n rows (n > 0) go to
// rw as they are read, and it returns how many did and whether more may
// follow, and moves the cursor past them. The page ends early once pb, the
// buffer under rw, holds maxPageBytes. A row rw fails to write ends it
// with rw's error.
func (p *plan) fetchEach(ctx context.Context, s RowStreamer, n int, rw rowWriter, pb *pageBuffer) (got int, more bool, err error) {
	if p.done {
		return 0, false, nil
	}
	rq := p.rq
	rq.Limit = n + 1
	sortCol := -1
	if !p.rq.SortsBySeq() {
		sortCol = p.kind.ColumnIndex(p.rq.Sort)
	}
	var (
		lastSeq  int64
		lastSort any
		other    *recordstore.Kind // the backend's kind when its columns are not the plan's
	)
	start := func(m recordstore.Meta, k *recordstore.Kind) error {
		if p.gen != 0 && m.Generation != p.gen {
			return recordstore.Invalidf("stream %s was recreated (generation %d, the read began in %d): start the read again", p.stream, m.Generation, p.gen)
		}
		p.gen = m.Generation
		if p.rq.To == 0 || p.rq.To > m.HighSeq {
			p.rq.To = m.HighSeq
			if p.rq.To <= p.rq.After {
				return errReadEmpty
			}
		}
		if !sameColumns(k, &p.kind) {
			other = k
			if !p.rq.SortsBySeq() {
				sortCol = k.ColumnIndex(p.rq.Sort)
			}
		}
		return nil
	}
	row := func(seq int64, vals []any) error {
		if got == n {
			more = true
			return errPageFull
		}
		got++
		lastSeq = seq
		if sortCol >= 0 {
			lastSort = vals[sortCol]
		}
		var err error
		if other != nil {
			err = rw.write(recordOf(other, seq, vals))
		} else {
			err = rw.writeValues(seq, vals)
		}
		if err != nil {
			return fmt.Errorf("export row %d: %w", seq, err)
		}
		if len(pb.buf) >= maxPageBytes {
			more = true // or not: the next page finds out
			return errPageFull
		}
		return nil
	}
	err = s.StreamRows(ctx, p.stream, rq, start, row)
	switch {
	case errors.Is(err, errReadEmpty):
		p.done = true
		return 0, false, nil
	case errors.Is(err, errPageFull):
		err = nil
	}
	if err != nil {
		return got, false, err
	}
	if got > 0 {
		p.rq.HasCursor, p.rq.CursorSeq = true, lastSeq
		if !p.rq.SortsBySeq() {
			p.rq.CursorValue = lastSort
		}
	}
	p.done = !more
	return got, more, nil
}

// sameColumns reports whether a and b have the same column names in the
// same order.
func sameColumns(a, b *recordstore.Kind) bool {
	return slices.EqualFunc(a.Columns, b.Columns, func(x, y recordstore.Column) bool { return x.Name == y.Name })
}

// recordOf is the record of a row of kind k read as values in column
// order.
func recordOf(k *recordstore.Kind, seq int64, vals []any) recordstore.Record {
	row := make(recordstore.Row, len(k.Columns))
	for i, c := range k.Columns {
		row[c.Name] = vals[i]
	}
	return recordstore.Record{Seq: seq, Values: row}
}
