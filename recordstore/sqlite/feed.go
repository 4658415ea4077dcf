// Row feeds: normalized rows handed to the insert loop as they become
// ready, so that a large append normalizes on one core while SQLite
// inserts on another.

package sqlite

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/fb46ecde/records/recordstore"
)

// feedChunk is how many rows the background normalizer publishes at a
// time.
const feedChunk = 64

// feedAsyncMin is the smallest append normalized in the background; a
// smaller one is normalized before the write lock is taken, which costs
// less than handing chunks between goroutines (measured at 100 rows).
const feedAsyncMin = 4 * feedChunk

// feedSlab is how many rows one slab of a feed's storage holds: a feed
// keeps its rows in slabs allocated as the rows are normalized and let go
// as they are released, not in one slice as long as the append.
const feedSlab = 16 * feedChunk

// feedWindow is how many rows the background normalizer may run ahead of
// the rows the insert loop has released: the most normalized rows a
// feed holds at a time, so that the memory of a large append does not
// grow with its rows (the normalizer is faster than SQLite's inserts, and
// without a bound would hold nearly every row). It is many insert batches
// long, so that the inserts never wait for a row while the normalizer
// waits for room.
const feedWindow = 128 * feedChunk

// rowFeed holds the normalized rows of one append. A feed built by
// normalizeAsync fills in the background; the insert loop waits for the
// rows it needs, and releases each once it is inserted. vals[:ready] are
// final.
//
// The producer normalizes row i only once i < limit: limit is feedWindow
// rows past the last row released, or the rows the consumer waits for
// when that is more (so that a consumer that keeps every row, or settles
// after a failure, is never left waiting for a producer that waits for
// room).
type rowFeed struct {
	n int // rows
	// slabs hold the rows, feedSlab a slab from row 0: a slab is nil until
	// the producer reaches it and again once its rows are released.
	slabs    [][]recordstore.Values
	whole    []recordstore.Values // the rows of a readyFeed, as given
	ready    int                  // rows the consumer knows to be final
	progress chan int             // cumulative counts of final rows; closed when the producer stops
	err      error                // the producer's error, read after progress is closed

	limit atomic.Int64 // the producer converts rows below it
	mu    sync.Mutex   // guards raising limit and the producer's sleep
	room  *sync.Cond   // signalled when limit rises
}

// readyFeed wraps rows normalized already (its slabs are parts of vals,
// not copies).
func readyFeed(vals []recordstore.Values) *rowFeed {
	f := &rowFeed{n: len(vals), whole: vals, ready: len(vals)}
	for i := 0; i < len(vals); i += feedSlab {
		end := min(i+feedSlab, len(vals))
		f.slabs = append(f.slabs, vals[i:end:end])
	}
	return f
}

// len is the number of rows of the feed.
func (f *rowFeed) len() int { return f.n }

// row returns row i, which must be final (see wait) and not released.
func (f *rowFeed) row(i int) recordstore.Values { return f.slabs[i/feedSlab][i%feedSlab] }

// put stores row i, allocating its slab when i is the slab's first row.
func (f *rowFeed) put(i int, v recordstore.Values) {
	k := i / feedSlab
	if f.slabs[k] == nil {
		f.slabs[k] = make([]recordstore.Values, min(feedSlab, f.n-k*feedSlab))
	}
	f.slabs[k][i%feedSlab] = v
}

// all returns every row, once all are final and none is released: the
// rows given to readyFeed, or the slabs joined.
func (f *rowFeed) all() []recordstore.Values {
	if f.whole != nil || f.n == 0 {
		return f.whole
	}
	vals := make([]recordstore.Values, 0, f.n)
	for _, s := range f.slabs {
		vals = append(vals, s...)
	}
	return vals
}

// feedRows normalizes rows for t: synchronously when they are few, else in
// a background goroutine that starts at once (see rowFeed). A synchronous
// failure is returned here; a background one from wait.
func (t *table) feedRows(rows []recordstore.Row) (*rowFeed, error) {
	return t.feed(len(rows), func(i int) (recordstore.Values, error) { return t.kind.Normalize(rows[i]) })
}

// feedValues remaps rows of stored values written under another
// declaration of t's kind into t's column order (see recordstore.Remapper),
// as feedRows does with caller rows.
func (t *table) feedValues(rows []recordstore.Values, m *recordstore.Remapper) (*rowFeed, error) {
	return t.feed(len(rows), func(i int) (recordstore.Values, error) { return m.Remap(rows[i]) })
}

// sourceError marks an error of a RowSource: it fails the entry's batch,
// not only the entry (see recordstore.RowSource).
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

// feedSource reads an entry's rows from src, remapping them as feedValues
// does; src's errors are *sourceError. After the announced rows it reads
// once more, so that a source that has more (or checks something at its
// end) reports it before the entry can commit.
func (t *table) feedSource(src recordstore.RowSource, m *recordstore.Remapper) (*rowFeed, error) {
	n := src.Len()
	end := func() error {
		switch _, err := src.Next(); {
		case err == io.EOF:
			return nil
		case err == nil:
			return &sourceError{recordstore.Invalidf("the row source yields more than the %d rows it announced", n)}
		default:
			return &sourceError{err}
		}
	}
	if n == 0 {
		return readyFeed(nil), end()
	}
	return t.feed(n, func(i int) (recordstore.Values, error) {
		v, err := src.Next()
		if err == io.EOF {
			return nil, &sourceError{recordstore.Invalidf("the row source ended after %d of the %d rows it announced", i, n)}
		}
		if err != nil {
			return nil, &sourceError{err}
		}
		if v, err = m.Remap(v); err != nil {
			return nil, err
		}
		if i == n-1 {
			return v, end()
		}
		return v, nil
	})
}

// feed builds the feed of n rows, conv(i) giving row i's stored values, and
// refuses a key repeated among them.
func (t *table) feed(n int, conv func(i int) (recordstore.Values, error)) (*rowFeed, error) {
	if n < feedAsyncMin {
		vals := make([]recordstore.Values, n)
		keys := t.newKeySet()
		defer func() { _ = keys.Close() }() // a scratch file at most
		for i := range vals {
			v, err := conv(i)
			if err != nil {
				return nil, keyErrorFirst(keys, fmt.Errorf("row %d: %w", i+1, err))
			}
			if err := keys.Add(i, v); err != nil {
				return nil, err
			}
			vals[i] = v
		}
		if err := keys.Check(); err != nil {
			return nil, err
		}
		return readyFeed(vals), nil
	}
	f := &rowFeed{n: n, slabs: make([][]recordstore.Values, (n+feedSlab-1)/feedSlab), progress: make(chan int, n/feedChunk+1)}
	f.room = sync.NewCond(&f.mu)
	f.limit.Store(feedWindow)
	go f.produce(t, conv)
	return f, nil
}

// produce converts rows in order, checking keys as it goes (those a
// recordstore.KeySet holds in its file once all are in, before the last
// row is published), and publishes every feedChunk rows. The channel has room for every count, so it never
// blocks.
func (f *rowFeed) produce(t *table, conv func(i int) (recordstore.Values, error)) {
	defer close(f.progress)
	n := f.n
	keys := t.newKeySet()
	defer func() { _ = keys.Close() }() // a scratch file at most
	for i := 0; i < n; i++ {
		if int64(i) >= f.limit.Load() {
			f.awaitRoom(i)
		}
		v, err := conv(i)
		if err != nil {
			f.err = keyErrorFirst(keys, fmt.Errorf("row %d: %w", i+1, err))
			return
		}
		if err := keys.Add(i, v); err != nil {
			f.err = err
			return
		}
		f.put(i, v)
		k := i + 1
		if k == n {
			// The last row is final only once no key is repeated: keys
			// past the set's memory are checked here, all at once.
			if err := keys.Check(); err != nil {
				f.err = err
				return
			}
		}
		if k%feedChunk == 0 || k == n {
			f.progress <- k
		}
	}
}

// keyErrorFirst is the error of an append whose row failed with err after
// the rows before it went into keys: a key repeated among those rows, if
// any (a check in row order would have stopped there first), else err.
func keyErrorFirst(keys *recordstore.KeySet, err error) error {
	if kerr := keys.Check(); kerr != nil {
		return kerr
	}
	return err
}

// awaitRoom blocks the producer until it may convert row i.
func (f *rowFeed) awaitRoom(i int) {
	f.mu.Lock()
	for int64(i) >= f.limit.Load() {
		f.room.Wait()
	}
	f.mu.Unlock()
}

// raise lets the producer convert the rows below n.
func (f *rowFeed) raise(n int) {
	if f.room == nil || int64(n) <= f.limit.Load() {
		return
	}
	f.mu.Lock()
	if int64(n) > f.limit.Load() {
		f.limit.Store(int64(n))
		f.room.Broadcast()
	}
	f.mu.Unlock()
}

// wait blocks until the first n rows are final, or returns the error that
// stopped the producer first.
func (f *rowFeed) wait(n int) error {
	if f.ready < n {
		f.raise(n)
	}
	for f.ready < n {
		got, ok := <-f.progress
		if !ok {
			if f.err != nil {
				return f.err
			}
			return errors.New("row feed ended early")
		}
		f.ready = got
	}
	return nil
}

// release lets go of rows from..to-1 once they are inserted, so that a
// large append holds only the rows not inserted yet (and, for a source,
// not read yet). A released row reads as nil.
func (f *rowFeed) release(from, to int) {
	for from < to {
		k, j := from/feedSlab, from%feedSlab
		slab := f.slabs[k]
		if slab == nil { // released already
			from = (k + 1) * feedSlab
			continue
		}
		end := min(j+to-from, len(slab))
		clear(slab[j:end])
		if end == len(slab) {
			f.slabs[k] = nil // every row of it inserted
		}
		from += end - j
	}
	f.raise(to + feedWindow)
}

// settle decides which error an append reports when it failed with err:
// bad input wins over anything the transaction ran into, as it would had
// every row been normalized first. It waits for the producer to finish
// (the producer is never stopped early, so that this answer is certain).
func (f *rowFeed) settle(err error) error {
	if f.progress == nil {
		return err
	}
	if ferr := f.wait(f.n); ferr != nil {
		return ferr
	}
	return err
}
