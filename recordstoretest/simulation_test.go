// Proves that the randomized model test can fail: subtly broken backends
// must be caught, with the seed in the message.

package recordstoretest

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// unfencedModel ignores the generation fence of Reopen.
type unfencedModel struct{ *model }

func (u unfencedModel) Reopen(ctx context.Context, stream string, _ int64) (recordstore.Meta, error) {
	m, err := u.model.Meta(ctx, stream)
	if err != nil {
		return m, err
	}
	return u.model.Reopen(ctx, stream, m.Generation)
}

// inclusiveTrimModel also drops appends made exactly at the trim time.
type inclusiveTrimModel struct{ *model }

func (i inclusiveTrimModel) Trim(ctx context.Context, stream string, before time.Time) (recordstore.Meta, error) {
	return i.model.Trim(ctx, stream, before.Add(time.Microsecond))
}

var _ = Describe("the randomized model test", func() {
	DescribeTable("catches a backend that breaks the contract, naming the seed",
		func(wrap func(*model) recordstore.Backend) {
			clock := NewClock(ClockStart)
			s := &suite{ctx: context.Background(), clock: clock, b: wrap(newModel(clock))}
			err := InterceptGomegaFailure(func() { newSimulation(s, 42).run(600) })
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring("model test seed 42"))
		},
		Entry("reopen without the generation fence", func(m *model) recordstore.Backend { return unfencedModel{m} }),
		Entry("trim dropping the append made exactly at the trim time", func(m *model) recordstore.Backend { return inclusiveTrimModel{m} }),
	)

	It("passes a backend that follows the contract", func() {
		clock := NewClock(ClockStart)
		s := &suite{ctx: context.Background(), clock: clock, b: newModel(clock)}
		Expect(InterceptGomegaFailure(func() { newSimulation(s, 42).run(600) })).To(Succeed())
	})
})
