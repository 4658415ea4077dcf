// Specs for Close: idempotent, and every call afterwards fails with
// ErrClosed.

package sqlite_test

import (
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("Close", func() {
	It("is idempotent and makes every later call return ErrClosed", func() {
		b := openStore(newClock())
		declare(b, eventsKind())
		mustAppend(b, "s", "events", recordstore.Row{"name": "a"})
		Expect(b.Close()).To(Succeed())
		Expect(b.Close()).To(Succeed())

		calls := map[string]func() error{
			"DeclareKind": func() error { _, err := b.DeclareKind(ctx, eventsKind()); return err },
			"Kinds":       func() error { _, err := b.Kinds(ctx); return err },
			"Kind":        func() error { _, err := b.Kind(ctx, "events"); return err },
			"Append": func() error {
				_, err := b.Append(ctx, "s", "events", []recordstore.Row{{"name": "b"}})
				return err
			},
			"Scan":    func() error { _, err := b.Scan(ctx, "s", recordstore.ScanOptions{}); return err },
			"Meta":    func() error { _, err := b.Meta(ctx, "s"); return err },
			"Streams": func() error { _, err := b.Streams(ctx, ""); return err },
			"Seal":    func() error { _, err := b.Seal(ctx, "s"); return err },
			"Reopen":  func() error { _, err := b.Reopen(ctx, "s", 1); return err },
			"Expire":  func() error { _, err := b.Expire(ctx, "s", time.Hour); return err },
			"Trim":    func() error { _, err := b.Trim(ctx, "s", time.Now()); return err },
			"Delete":  func() error { return b.Delete(ctx, "s") },
			"Sweep":   func() error { return b.Sweep(ctx) },
		}
		for name, call := range calls {
			err := call()
			Expect(errors.Is(err, recordstore.ErrClosed)).To(BeTrue(), "%s: %v", name, err)
		}
	})
})
