// Specs for closing an owner while a batch that is not its own work fails:
// Close reports its own failures only.

package owner_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// varyingBackend is the SQLite backend whose AppendBatch fails, with an
// error whose text changes at every try, any batch with an entry for
// stream "flaky": an I/O error that is not the batch's own doing.
type varyingBackend struct {
	*sqlite.Backend
	tries atomic.Int32
}

func (v *varyingBackend) AppendBatch(ctx context.Context, batches ...recordstore.Batch) ([]recordstore.BatchResult, error) {
	for _, b := range batches {
		for _, e := range b.Entries {
			if e.Stream == "flaky" {
				return nil, fmt.Errorf("append batch: try %d: %w", v.tries.Add(1), syscall.EIO)
			}
		}
	}
	return v.Backend.AppendBatch(ctx, batches...)
}

var _ = Describe("closing an owner while another producer's batch fails", func() {
	It("closes without error, leaves the batch in incoming/ and logs a warning", func(ctx SpecContext) {
		path := storePath()
		var logs bytes.Buffer
		var vb *varyingBackend
		s, err := owner.Open(ctx, owner.Options[*varyingBackend]{
			Path: path, CatalogVersion: sqlite.CatalogVersion,
			PollMin: time.Millisecond, PollMax: 2 * time.Millisecond,
			Retry:  owner.RetryPolicy{Min: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 1 << 30, For: time.Hour},
			Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*varyingBackend, error) {
				b, err := sqliteOpener(path)(ctx, readOnly, submit)
				if err != nil {
					return nil, err
				}
				vb = &varyingBackend{Backend: b}
				return vb, nil
			},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Role()).To(Equal(owner.RoleOwner))
		bad := handBatch(path, "flaky", []recordstore.Row{{"k": "someone else's"}}, nil)
		Eventually(vb.tries.Load, wait, time.Millisecond).Should(BeNumerically(">=", 2))
		_, err = s.Backend().DeclareKind(ctx, *eventKind())
		Expect(err).NotTo(HaveOccurred())
		mine, err := s.Backend().Append(ctx, "mine", "event", []recordstore.Row{{"k": "my own"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(mine.Appended).To(BeEquivalentTo(1))

		Expect(s.Close()).To(Succeed(), "the failing batch is not the closing process's work")
		Expect(incoming(path)).To(ContainElement(bad), "left, durable, for the next owner")
		Expect(logs.String()).To(ContainSubstring("level=WARN"))
		Expect(logs.String()).To(ContainSubstring(bad.String()))
	})
})
