// Guards around arrow-go: a capped allocator and the recover handlers that
// turn its panics into errors at the codec boundary.

package parquet

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fb46ecde/records/recordstore/spool"
)

// allocTooLarge is the panic value of a cappedAllocator asked for more than
// its cap.
type allocTooLarge struct{ size, max int }

// cappedAllocator refuses (by panicking with allocTooLarge, recovered at the
// codec boundary) any single allocation larger than max bytes. arrow-go
// sizes page and decompression buffers from page headers; the cap holds
// even if a header got past the page scan.
type cappedAllocator struct {
	mem memory.Allocator
	max int
}

func (a cappedAllocator) Allocate(size int) []byte {
	if size > a.max || size < 0 {
		panic(allocTooLarge{size, a.max})
	}
	return a.mem.Allocate(size)
}

func (a cappedAllocator) Reallocate(size int, b []byte) []byte {
	if size > a.max || size < 0 {
		panic(allocTooLarge{size, a.max})
	}
	return a.mem.Reallocate(size, b)
}

func (a cappedAllocator) Free(b []byte) { a.mem.Free(b) }

// recoverCorrupt, deferred, turns a panic into an error: ErrTooLarge for
// the capped allocator, ErrCorrupt for anything else (arrow-go panics on
// some malformed input instead of returning an error).
func recoverCorrupt(err *error, what string) {
	r := recover()
	if r == nil {
		return
	}
	if a, ok := r.(allocTooLarge); ok {
		*err = fmt.Errorf("%w: %s: a buffer of %d bytes exceeds the %d allowed", spool.ErrTooLarge, what, a.size, a.max)
		return
	}
	*err = corruptf("%s: %v", what, r)
}

// recoverTo, deferred, turns a panic of arrow-go while writing into an
// error (the file being written is then unusable).
func recoverTo(err *error, what string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("parquet: %s: panic: %v", what, r)
	}
}
