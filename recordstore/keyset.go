// Key sets: finding a key repeated among the rows of one append in memory
// that does not grow with the rows. The keys are held in a map while they
// are few; past a bound they go to sorted runs in a scratch file, merged
// once every row is in.

package recordstore

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// keySetMemory is about the most memory a KeySet's keys take: past it the
// keys held in the map go to the scratch file, and so do those of every
// later run that reaches it. At 4 MiB a 1 000 000-row append of a keyed
// kind peaked at 70 MiB resident, at 1 MiB at 56 MiB, against 49 MiB
// without a key (the collector's headroom triples the live heap under
// query append's GOGC).
const keySetMemory = 1 << 20

// keyMapCost and keyRunCost estimate the memory of one key besides its
// bytes: in the map (its string header, row and slot) and in a run being
// gathered (its keyEntry).
const (
	keyMapCost = 64
	keyRunCost = 24
)

// keyMergeMemory is the memory the read buffers of the runs' merge share
// (each at least keyMergeMinBuffer and at most keyMergeMaxBuffer).
const (
	keyMergeMemory    = 1 << 20
	keyMergeMinBuffer = 4 << 10
	keyMergeMaxBuffer = 64 << 10
)

// errKeyRunCorrupt is what a merge reads from a run that is not what was
// written: a file changed under it, never bad input.
var errKeyRunCorrupt = errors.New("key set: corrupt run")

// KeySet finds a key repeated among the rows of one append, by the kind's
// key identity (Kind.AppendRowKey), in memory that does not grow with the
// rows. While the keys take less than about 1 MiB it holds them in a map
// and Add refuses a repeated key at once. Past that it holds them in a
// scratch file instead, as sorted runs (each key with its row, sorted by
// key then row), and a repeated key is found by Check, which merges the
// runs. Either way the error is the same: ErrInvalid, "kind K: rows I and
// J have the same key", J being the first row whose key an earlier row
// has and I that earlier row (rows counted from 1), as if the rows had
// been checked one by one in order.
//
// The file is made only when the keys pass the bound, in the folder given
// to NewKeySet, readable by its owner only (0600), and unlinked at once
// where the system allows it (elsewhere by Close), so that a process that
// dies leaves nothing behind; it is not synced. A KeySet is not safe for
// concurrent use. A nil *KeySet (that of a kind without a key) accepts
// every row.
type KeySet struct {
	kind   *Kind
	dir    string
	memory int // the bound (keySetMemory, lowered by tests)
	buf    []byte
	mem    int            // estimated bytes of seen, or of the run being gathered
	seen   map[string]int // key identity → row, until the keys pass the bound

	// Once the keys passed the bound (spilled): the run being gathered and
	// the runs in the file.
	spilled bool
	arena   []byte
	ents    []keyEntry
	f       *os.File
	name    string // the file's name while it is still linked, else ""
	w       *bufio.Writer
	runs    []keyRun
	size    int64 // bytes handed to w
	err     error // a write error: the set is unusable after it
	checked bool  // Check merged the runs; dup holds its answer
	dup     error
}

// keyEntry is one key of the run being gathered: its bytes in arena and
// its row.
type keyEntry struct {
	off, n int
	row    int
}

// keyRun is where one sorted run is in the file.
type keyRun struct{ off, size int64 }

// NewKeySet returns the key set of one append of rows of k, whose file
// (when the keys need one) goes in dir (os.TempDir() when dir is ""); nil
// when k has no key. It makes no file.
func NewKeySet(k *Kind, dir string) *KeySet {
	if len(k.Key) == 0 {
		return nil
	}
	return &KeySet{kind: k, dir: dir, memory: keySetMemory, seen: make(map[string]int)}
}

// Add records the key of row (counted from 0; rows are added in order)
// whose stored values are vals. While the keys are held in memory it
// refuses (ErrInvalid) a key an earlier row has; once they are in the file
// that is found by Check. An error writing the file is returned here and
// by every later Add and Check.
func (s *KeySet) Add(row int, vals Values) error {
	if s == nil {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	s.buf = s.kind.AppendRowKey(s.buf[:0], vals)
	if !s.spilled {
		if first, dup := s.seen[string(s.buf)]; dup {
			return s.dupError(first, row)
		}
		s.seen[string(s.buf)] = row
		s.mem += len(s.buf) + keyMapCost
		if s.mem > s.memory {
			s.err = s.spill()
		}
		return s.err
	}
	s.gather(s.buf, row)
	if s.mem > s.memory {
		s.err = s.writeRun()
	}
	return s.err
}

// Check returns the error of the first row (in the order they were added)
// whose key an earlier row has, or nil when every key added is unique; an
// error writing or reading the file is returned as is. Keys held in memory
// were checked by Add already; keys in the file are merged here (once:
// later calls give the same answer, and Add must not be called after).
func (s *KeySet) Check() error {
	if s == nil || !s.spilled {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	if !s.checked {
		first, second, err := s.merge()
		if err != nil {
			s.err = err
			return err
		}
		s.checked = true
		if second >= 0 {
			s.dup = s.dupError(first, second)
		}
	}
	return s.dup
}

// Close releases the set's memory and removes its file, if it made one.
func (s *KeySet) Close() error {
	if s == nil {
		return nil
	}
	s.seen, s.arena, s.ents, s.w = nil, nil, nil, nil
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	if s.name != "" {
		if rerr := os.Remove(s.name); err == nil {
			err = rerr
		}
		s.name = ""
	}
	s.f = nil
	if err != nil {
		return fmt.Errorf("key set: %w", err)
	}
	return nil
}

// dupError is the error of rows first and second (from 0) having the same
// key.
func (s *KeySet) dupError(first, second int) error {
	return Invalidf("kind %s: rows %d and %d have the same key", s.kind.Name, first+1, second+1)
}

// spill moves the keys of the map into a run in the file: every later key
// goes to runs too.
func (s *KeySet) spill() error {
	s.spilled = true
	s.mem = 0
	for key, row := range s.seen {
		s.gather([]byte(key), row)
	}
	s.seen = nil
	return s.writeRun()
}

// gather adds a key to the run being gathered.
func (s *KeySet) gather(key []byte, row int) {
	s.ents = append(s.ents, keyEntry{off: len(s.arena), n: len(key), row: row})
	s.arena = append(s.arena, key...)
	s.mem += len(key) + keyRunCost
}

// writeRun sorts the run being gathered (by key, then row) and appends it
// to the file: each key as its length (a uvarint), its bytes and its row
// (a uvarint).
func (s *KeySet) writeRun() error {
	if len(s.ents) == 0 {
		return nil
	}
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, ".keys-*.runs")
		if err != nil {
			return fmt.Errorf("key set: %w", err)
		}
		s.f, s.w = f, bufio.NewWriterSize(f, 64<<10)
		if err := os.Remove(f.Name()); err != nil {
			s.name = f.Name() // removed by Close
		}
	}
	arena := s.arena
	slices.SortFunc(s.ents, func(a, b keyEntry) int {
		if c := bytes.Compare(arena[a.off:a.off+a.n], arena[b.off:b.off+b.n]); c != 0 {
			return c
		}
		return a.row - b.row
	})
	start := s.size
	var head [2 * binary.MaxVarintLen64]byte
	for _, e := range s.ents {
		h := binary.AppendUvarint(head[:0], uint64(e.n))
		if _, err := s.w.Write(h); err != nil {
			return fmt.Errorf("key set: %w", err)
		}
		if _, err := s.w.Write(arena[e.off : e.off+e.n]); err != nil {
			return fmt.Errorf("key set: %w", err)
		}
		r := binary.AppendUvarint(head[:0], uint64(e.row))
		if _, err := s.w.Write(r); err != nil {
			return fmt.Errorf("key set: %w", err)
		}
		s.size += int64(len(h) + e.n + len(r))
	}
	s.runs = append(s.runs, keyRun{off: start, size: s.size - start})
	s.arena, s.ents, s.mem = s.arena[:0], s.ents[:0], 0
	return nil
}

// merge writes the last run, then reads every run at once in key order
// and returns the first two rows of the repeated key whose second row is
// the smallest (second -1 when no key is repeated): within a key the rows come in
// order, so a key's first two rows are the pair a check in row order
// would have found.
func (s *KeySet) merge() (first, second int, err error) {
	if err := s.writeRun(); err != nil {
		return 0, 0, err
	}
	if err := s.w.Flush(); err != nil {
		return 0, 0, fmt.Errorf("key set: %w", err)
	}
	s.arena, s.ents = nil, nil
	size := min(max(keyMergeMemory/len(s.runs), keyMergeMinBuffer), keyMergeMaxBuffer)
	h := make(keyHeap, 0, len(s.runs))
	for _, r := range s.runs {
		c := &keyCursor{r: bufio.NewReaderSize(io.NewSectionReader(s.f, r.off, r.size), size)}
		ok, err := c.next()
		if err != nil {
			return 0, 0, err
		}
		if ok {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	var prev []byte
	first, second = -1, -1
	at, count := -1, 0 // the current key's first row and rows
	for len(h) > 0 {
		c := h[0]
		if at >= 0 && bytes.Equal(c.key, prev) {
			count++
			if count == 2 && (second < 0 || c.row < second) {
				first, second = at, c.row
			}
		} else {
			prev = append(prev[:0], c.key...)
			at, count = c.row, 1
		}
		ok, err := c.next()
		if err != nil {
			return 0, 0, err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return first, second, nil
}

// keyCursor reads one run: key and row are its current key.
type keyCursor struct {
	r   *bufio.Reader
	key []byte
	row int
}

// next reads the run's next key; false at the run's end.
func (c *keyCursor) next() (bool, error) {
	n, err := binary.ReadUvarint(c.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil || n > 1<<31 {
		return false, errKeyRunCorrupt
	}
	c.key = slices.Grow(c.key[:0], int(n))[:n]
	if _, err := io.ReadFull(c.r, c.key); err != nil {
		return false, errKeyRunCorrupt
	}
	row, err := binary.ReadUvarint(c.r)
	if err != nil || row > 1<<62 {
		return false, errKeyRunCorrupt
	}
	c.row = int(row)
	return true, nil
}

// keyHeap orders the runs' cursors by their current key, then row.
type keyHeap []*keyCursor

func (h keyHeap) Len() int { return len(h) }
func (h keyHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].key, h[j].key); c != 0 {
		return c < 0
	}
	return h[i].row < h[j].row
}
func (h keyHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)   { *h = append(*h, x.(*keyCursor)) }
func (h *keyHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
