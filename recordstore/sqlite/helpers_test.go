// Test helpers: a settable clock, opening a store in a temp folder, raw
// access to the live file, and the kinds the specs use.

package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// clock is a settable time source for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// storePath returns a configured store path inside a fresh temp folder.
func storePath() string {
	return filepath.Join(GinkgoT().TempDir(), "data", "records.sqlite")
}

// openAt opens the store at path with the background sweeper off (unless
// opts says otherwise) and closes it at cleanup.
func openAt(path string, opts sqlite.Options) *sqlite.Backend {
	if opts.SweepInterval == 0 {
		opts.SweepInterval = -1
	}
	b, err := sqlite.Open(context.Background(), path, opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(b.Close)
	return b
}

// openStore opens a new store driven by clk.
func openStore(clk *clock) *sqlite.Backend {
	return openAt(storePath(), sqlite.Options{Now: clk.Now})
}

// rawDB opens the live file with a plain connection for inspection.
func rawDB(b *sqlite.Backend) *sql.DB {
	db, err := sql.Open("sqlite", b.LivePath())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(db.Close)
	return db
}

func rawCount(db *sql.DB, q string, args ...any) int64 {
	var n int64
	Expect(db.QueryRow(q, args...).Scan(&n)).To(Succeed())
	return n
}

func declare(b *sqlite.Backend, k recordstore.Kind) recordstore.KindStatus {
	st, err := b.DeclareKind(context.Background(), k)
	Expect(err).NotTo(HaveOccurred())
	return st
}

func mustAppend(b *sqlite.Backend, stream, kind string, rows ...recordstore.Row) recordstore.AppendResult {
	res, err := b.Append(context.Background(), stream, kind, rows)
	Expect(err).NotTo(HaveOccurred())
	return res
}

func mustScan(b *sqlite.Backend, stream string) []recordstore.Record {
	recs, err := b.Scan(context.Background(), stream, recordstore.ScanOptions{})
	Expect(err).NotTo(HaveOccurred())
	return recs
}

func mustMeta(b *sqlite.Backend, stream string) recordstore.Meta {
	m, err := b.Meta(context.Background(), stream)
	Expect(err).NotTo(HaveOccurred())
	return m
}

func seqs(recs []recordstore.Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

// eventsKind has one column of every type and no key.
func eventsKind() recordstore.Kind {
	return recordstore.Kind{Name: "events", Columns: []recordstore.Column{
		{Name: "name", Type: recordstore.TypeString},
		{Name: "n", Type: recordstore.TypeInteger},
		{Name: "x", Type: recordstore.TypeNumber},
		{Name: "ok", Type: recordstore.TypeBool},
		{Name: "at", Type: recordstore.TypeDatetime},
		{Name: "doc", Type: recordstore.TypeJSON},
	}}
}

// keyedKind has key id, a value and an lww version/tiebreak pair.
func keyedKind(name string, policy recordstore.OnConflict) recordstore.Kind {
	k := recordstore.Kind{Name: name, Key: []string{"id"}, OnConflict: policy, Columns: []recordstore.Column{
		{Name: "id", Type: recordstore.TypeString},
		{Name: "v", Type: recordstore.TypeString},
		{Name: "ver", Type: recordstore.TypeInteger},
		{Name: "tie", Type: recordstore.TypeString},
	}}
	if policy == recordstore.ConflictLWW {
		k.LWW = &recordstore.LWW{Version: "ver", Tiebreak: "tie"}
	}
	return k
}

var ctx = context.Background()
