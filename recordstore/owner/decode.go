// Decoding picked batches: their files checked and their small entries'
// rows read, many batches at a time; large entries stream while applied.

package owner

import (
	"context"
	"runtime"
	"sync"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// loaded is a batch read from incoming/ (or sent inline), ready to apply. Its large
// entries stream from their files (readers), closed once it was applied.
type loaded struct {
	name    spool.BatchName
	batch   recordstore.Batch
	readers []*spool.EntryReader
	// inline is set for a batch sent over the control socket (the append
	// action) rather than read from incoming/: it has no folder, and its
	// producer waits for the answer.
	inline *inlineReq
}

// closeLoaded closes the files of loaded batches.
func closeLoaded(group []loaded) {
	for _, g := range group {
		for _, r := range g.readers {
			_ = r.Close()
		}
	}
}

type decodeResult struct {
	l   loaded
	err error
}

// decodeAll reads and checks the rows of every picked batch, as many at a
// time as there are processors.
func (s *Store[T]) decodeAll(ctx context.Context, picked []pickedBatch) []decodeResult {
	out := make([]decodeResult, len(picked))
	if len(picked) == 1 {
		out[0].l, out[0].err = decode(ctx, picked[0])
		return out
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, p := range picked {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i].l, out[i].err = decode(ctx, p)
		}()
	}
	wg.Wait()
	return out
}

// streamMin is the smallest append entry that streams from its file while
// the backend inserts (recordstore.RowSource), so that decoding it
// overlaps the inserts. Smaller entries are read in full beforehand, where
// a group's many small batches decode concurrently.
const streamMin = 4096

// decode checks one picked batch's files and reads the rows of its small
// entries; its large ones are opened to stream (see streamMin). A row that
// does not fit in a streamed entry fails the batch when the backend
// reaches it (commitGroup sends it to failed/ then).
func decode(ctx context.Context, p pickedBatch) (loaded, error) {
	m := p.batch.Manifest
	l := loaded{name: p.name, batch: *p.batch.Batch()}
	l.batch.Retry = p.batch.Retried
	for i, e := range m.Entries {
		if e.Op != recordstore.OpAppend {
			continue
		}
		r, err := p.batch.Open(ctx, i)
		if err != nil {
			closeLoaded([]loaded{l})
			return loaded{}, err
		}
		if e.Rows >= streamMin {
			l.readers = append(l.readers, r)
			l.batch.Entries[i].Source = entrySource{r}
			continue
		}
		l.batch.Entries[i].Rows, err = r.ReadAll()
		if err != nil {
			closeLoaded([]loaded{l})
			return loaded{}, err
		}
	}
	return l, nil
}

// entrySource is a spool entry reader as a row source.
type entrySource struct{ *spool.EntryReader }

func (s entrySource) Len() int { return int(s.Entry().Rows) }
