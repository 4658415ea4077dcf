// The ginkgo suite of the submit-only backend, and its helpers: a writable
// SQLite backend plays the store's owner, applying what a submit-only
// backend on the same path submits, in one process.

package submitonly_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

func TestSubmitOnly(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "recordstore/submitonly")
}

var ctx = context.Background()

// errVersion and versionError stand for the owner package's
// ErrCatalogVersion and *CatalogVersionError: the cause a submit-only
// backend is opened with, which its errors must carry for errors.Is and
// errors.As.
var errVersion = errors.New("catalog version mismatch")

type versionError struct{ owner, build int }

func (e *versionError) Error() string {
	return fmt.Sprintf("owner has catalog version %d, this build %d", e.owner, e.build)
}

func (e *versionError) Unwrap() error { return errVersion }

// expectCause checks that err carries the backend's cause.
func expectCause(err error) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred())
	Expect(errors.Is(err, errVersion)).To(BeTrue(), "%v", err)
	var ve *versionError
	Expect(errors.As(err, &ve)).To(BeTrue(), "%v", err)
	Expect(*ve).To(Equal(versionError{owner: 1, build: 2}))
}

// owner applies what a submit-only backend submits, as the store's owner
// would: a fresh id and producer seq per batch, then AppendBatch.
type owner struct {
	b       *sqlite.Backend
	mu      sync.Mutex
	batches []recordstore.Batch // what was submitted, in order
	fail    error               // returned instead of applying, when set
}

func (o *owner) submit(ctx context.Context, batch recordstore.Batch) (recordstore.BatchResult, error) {
	o.mu.Lock()
	batch.ID = fmt.Sprintf("so-%04d", len(o.batches)+1)
	batch.Producer = recordstore.Producer{Instance: "so", Seq: int64(len(o.batches) + 1)}
	o.batches = append(o.batches, batch)
	fail := o.fail
	o.mu.Unlock()
	if fail != nil {
		return recordstore.BatchResult{}, fail
	}
	res, err := o.b.AppendBatch(ctx, batch)
	if err != nil {
		return recordstore.BatchResult{}, err
	}
	return res[0], nil
}

func (o *owner) submitted() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.batches)
}

// last is the batch submitted last.
func (o *owner) last() recordstore.Batch {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.batches[len(o.batches)-1]
}

// pendingError stands for the owner package's PendingError: an error of
// Submit itself that must reach the caller unchanged.
type pendingError struct{ id string }

func (e *pendingError) Error() string { return "batch " + e.id + " is pending" }

// storePath returns a configured store path inside a fresh temp folder.
func storePath() string {
	return filepath.Join(GinkgoT().TempDir(), "data", "records.sqlite")
}

// openWritable opens the SQLite backend of path writable, the sweeper off,
// closed at cleanup.
func openWritable(path string) *sqlite.Backend {
	GinkgoHelper()
	b, err := sqlite.Open(ctx, path, sqlite.Options{SweepInterval: -1})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(b.Close)
	return b
}

// declarer is what declare needs: either backend.
type declarer interface {
	DeclareKind(ctx context.Context, k recordstore.Kind) (recordstore.KindStatus, error)
}

func declare(b declarer, k recordstore.Kind) {
	GinkgoHelper()
	_, err := b.DeclareKind(ctx, k)
	Expect(err).NotTo(HaveOccurred())
}

func mustMeta(b *sqlite.Backend, stream string) recordstore.Meta {
	GinkgoHelper()
	m, err := b.Meta(ctx, stream)
	Expect(err).NotTo(HaveOccurred())
	return m
}

// names returns the name column of stream's rows, read by b.
func names(b *sqlite.Backend, stream string) []any {
	GinkgoHelper()
	recs, err := b.Scan(ctx, stream, recordstore.ScanOptions{})
	Expect(err).NotTo(HaveOccurred())
	out := make([]any, len(recs))
	for i, r := range recs {
		out[i] = r.Values["name"]
	}
	return out
}

// normalized turns rows into stored values of k, in k's column order.
func normalized(k recordstore.Kind, rows ...recordstore.Row) []recordstore.Values {
	GinkgoHelper()
	out := make([]recordstore.Values, len(rows))
	for i, r := range rows {
		v, err := k.Normalize(r)
		Expect(err).NotTo(HaveOccurred())
		out[i] = v
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

// keyedKind has key id, a value and a version/tiebreak pair.
func keyedKind(name string) recordstore.Kind {
	return recordstore.Kind{Name: name, Key: []string{"id"}, Columns: []recordstore.Column{
		{Name: "id", Type: recordstore.TypeString},
		{Name: "v", Type: recordstore.TypeString},
		{Name: "ver", Type: recordstore.TypeInteger},
		{Name: "tie", Type: recordstore.TypeString},
	}}
}
