// Encoding an entry's rows for a publish. NDJSON lines do not depend on
// each other, so the rows of a large entry are turned into lines in chunks
// on several goroutines while the calling goroutine hashes the chunks and
// passes them on in order: a 10,000-row entry costs about half the time
// on two cores.

package spool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fb46ecde/records/recordstore"
)

// lineStream is implemented by the codecs whose data is the rows' JSON
// lines, as they are or transformed as one stream (gzip).
type lineStream interface {
	// wrapLines returns the writer the lines go through on their way to
	// w, and the function that ends what it adds.
	wrapLines(w io.Writer) (io.Writer, func() error, error)
}

// Chunking of encodeLines.
const (
	parallelMinRows   = 512  // fewer rows are encoded on the calling goroutine
	maxEncodeWorkers  = 4    // goroutines encoding chunks, at most
	minChunkRows      = 128  // rows of a chunk, at least
	maxChunkRows      = 4096 // and at most
	chunksPerWorker   = 4    // chunks a worker gets, about, to even the load
	chunksInFlightPer = 2    // encoded chunks not yet consumed, per worker
)

// encodeEntry encodes rows with codec and passes the encoded bytes, in
// order, to sink, which must not keep the slice it is given. It returns
// the bytes' count and SHA-256 (hex). With a codec that writes NDJSON
// lines and a limit above zero, lines of more than limit bytes in all
// (before compression) fail it with ErrTooLarge. On error sink may have
// been given part of the data.
func encodeEntry(ctx context.Context, codec Codec, kind *recordstore.Kind, rows []recordstore.Values, limit int64, sink func([]byte) error) (int64, string, error) {
	hw := &hashWriter{w: sinkWriter(sink), h: sha256.New()}
	ls, ok := codec.(lineStream)
	if !ok {
		enc, err := codec.NewEncoder(hw, kind)
		if err != nil {
			return 0, "", err
		}
		if err := writeRows(ctx, enc, rows); err != nil {
			return 0, "", err
		}
		return hw.n, hex.EncodeToString(hw.h.Sum(nil)), nil
	}
	w, end, err := ls.wrapLines(hw)
	if err != nil {
		return 0, "", err
	}
	if limit > 0 {
		w = &limitWriter{w: w, left: limit, limit: limit}
	}
	if err := encodeLines(ctx, newRowAppender(kind), rows, 0, w); err != nil {
		return 0, "", err
	}
	if err := end(); err != nil {
		return 0, "", err
	}
	return hw.n, hex.EncodeToString(hw.h.Sum(nil)), nil
}

// limitWriter fails with ErrTooLarge once more than left bytes in all are
// written through it, writing nothing of the write that crosses it.
type limitWriter struct {
	w     io.Writer
	left  int64 // bytes still allowed
	limit int64 // the limit, for the error
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		return 0, tooLarge(l.limit)
	}
	l.left -= int64(len(p))
	return l.w.Write(p)
}

// sinkWriter is a sink as an io.Writer.
type sinkWriter func([]byte) error

func (s sinkWriter) Write(p []byte) (int, error) {
	if err := s(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// chunkBufs recycles the chunk buffers of encodeLines.
var chunkBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256<<10); return &b }}

// encodeLines writes the JSON lines of rows to w in order: from the
// calling goroutine for fewer than parallelMinRows rows (or one CPU), else
// in chunks encoded on up to maxEncodeWorkers goroutines. A bad row fails
// it with the error of the first bad row ("row N: ..." with N counted from
// first+1: rows are the entry's from row first+1 on), as writeRows would.
func encodeLines(ctx context.Context, ra *rowAppender, rows []recordstore.Values, first int, w io.Writer) error {
	if len(rows) < parallelMinRows || runtime.GOMAXPROCS(0) < 2 {
		return encodeLinesHere(ctx, ra, rows, first, w)
	}
	workers := min(runtime.GOMAXPROCS(0), maxEncodeWorkers)
	per := min(max((len(rows)+workers*chunksPerWorker-1)/(workers*chunksPerWorker), minChunkRows), maxChunkRows)
	chunks := (len(rows) + per - 1) / per
	results := make([]chan chunkResult, chunks)
	for i := range results {
		results[i] = make(chan chunkResult, 1)
	}
	// A worker takes a slot before it takes the next chunk, and the
	// consumer frees it: chunks are taken in order, so the one the
	// consumer waits for is always being encoded.
	slots := make(chan struct{}, workers*chunksInFlightPer)
	var next atomic.Int64
	var stop atomic.Bool
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case slots <- struct{}{}:
				case <-done:
					return
				}
				c := int(next.Add(1) - 1)
				if c >= chunks || stop.Load() {
					return
				}
				results[c] <- encodeChunk(ctx, ra, rows, first, c*per, min((c+1)*per, len(rows)))
			}
		}()
	}
	defer func() {
		stop.Store(true)
		close(done)
		wg.Wait()
	}()
	for c := range chunks {
		r := <-results[c]
		if r.err != nil {
			return r.err
		}
		_, err := w.Write(*r.buf)
		*r.buf = (*r.buf)[:0]
		chunkBufs.Put(r.buf)
		if err != nil {
			return err
		}
		<-slots
	}
	return nil
}

// chunkResult is an encoded chunk (a buffer of chunkBufs), or why not.
type chunkResult struct {
	buf *[]byte
	err error
}

// encodeChunk encodes rows[from:to], rows[0] being the entry's row
// first+1.
func encodeChunk(ctx context.Context, ra *rowAppender, rows []recordstore.Values, first, from, to int) (r chunkResult) {
	if err := ctx.Err(); err != nil {
		r.err = err
		return r
	}
	buf := chunkBufs.Get().(*[]byte)
	b := (*buf)[:0]
	for i := from; i < to; i++ {
		var err error
		if b, err = ra.appendRow(b, rows[i]); err != nil {
			*buf = b[:0]
			chunkBufs.Put(buf)
			r.err = fmt.Errorf("row %d: %w", first+i+1, err)
			return r
		}
	}
	*buf = b
	r.buf = buf
	return r
}

// encodeLinesHere is encodeLines on the calling goroutine, written out
// every readBufSize bytes.
func encodeLinesHere(ctx context.Context, ra *rowAppender, rows []recordstore.Values, first int, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	buf := chunkBufs.Get().(*[]byte)
	defer chunkBufs.Put(buf)
	b := (*buf)[:0]
	defer func() { *buf = b[:0] }()
	for i, r := range rows {
		var err error
		if b, err = ra.appendRow(b, r); err != nil {
			return fmt.Errorf("row %d: %w", first+i+1, err)
		}
		if len(b) >= readBufSize {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if len(b) > 0 {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
