// TestMain: the package's test binary doubles as a harness child whose store
// is the reference model (a store of one process: no spool).

package recordstoretest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/fb46ecde/records/recordstore"
)

func TestMain(m *testing.M) {
	RunChild(openModelChild)
	os.Exit(m.Run())
}

// modelChild is the reference model as a ChildStore: always the owner,
// with no spool to publish into.
type modelChild struct {
	m      *model
	closed atomic.Bool
}

// openModelChild opens a fresh model; it reports the failpoint
// "model-open" and the role "owner", as a real store would report its own.
func openModelChild(_ context.Context, _ string, o ChildOptions) (ChildStore, error) {
	o.Failpoint("model-open")
	s := &modelChild{m: newModel(NewClock(ClockStart))}
	o.OnRole("owner")
	return s, nil
}

func (s *modelChild) Backend() recordstore.Backend { return s.m }

func (s *modelChild) Role() string {
	if s.closed.Load() {
		return "closed"
	}
	return "owner"
}

func (s *modelChild) Publish(context.Context, recordstore.Batch) (string, error) {
	return "", fmt.Errorf("%w: the model has no spool", recordstore.ErrUnsupported)
}

func (s *modelChild) Await(context.Context, string) (recordstore.BatchResult, error) {
	return recordstore.BatchResult{}, fmt.Errorf("%w: the model has no spool", recordstore.ErrUnsupported)
}

func (s *modelChild) Status(context.Context) (any, error) {
	return map[string]int{"pid": os.Getpid()}, nil
}

func (s *modelChild) Close() error {
	s.closed.Store(true)
	return s.m.Close()
}
