// Runs the conformance suites (Backend and BatchAppender) against the
// reference model, which proves that the suites and the model agree with
// each other.

package recordstoretest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

func TestRecordstoretest(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "recordstoretest")
}

var _ = DescribeBackend("the reference model", Harness{
	Open: func(_ context.Context, clock *Clock) (recordstore.Backend, error) {
		return newModel(clock), nil
	},
})

// limitedModel is the model with two restrictions, to exercise the optional
// harness hooks: new kinds with some conflict policies are refused with
// ErrUnsupported, and a stream holds at most limit rows (0: no limit).
type limitedModel struct {
	*model
	unsupported []recordstore.OnConflict
	limit       int64
}

func (l limitedModel) DeclareKind(ctx context.Context, k recordstore.Kind) (recordstore.KindStatus, error) {
	valid := k.Clone()
	if valid.Validate() == nil && slices.Contains(l.unsupported, valid.Policy()) {
		if _, err := l.model.Kind(ctx, k.Name); err != nil {
			return "", fmt.Errorf("%w: onConflict %s", recordstore.ErrUnsupported, valid.Policy())
		}
	}
	return l.model.DeclareKind(ctx, k)
}

func (l limitedModel) Append(ctx context.Context, stream, kind string, rows []recordstore.Row) (recordstore.AppendResult, error) {
	if l.limit > 0 {
		total := int64(0)
		if m, err := l.model.Meta(ctx, stream); err == nil {
			total = m.Total
		}
		if total+int64(len(rows)) > l.limit {
			return recordstore.AppendResult{}, fmt.Errorf("%w: stream %s would hold more than %d rows",
				recordstore.ErrCapacity, stream, l.limit)
		}
	}
	return l.model.Append(ctx, stream, kind, rows)
}

var limitedPolicies = []recordstore.OnConflict{recordstore.ConflictReplace, recordstore.ConflictLWW}

var _ = DescribeBackend("a reference model without replace and lww, with a row limit", Harness{
	Open: func(_ context.Context, clock *Clock) (recordstore.Backend, error) {
		return limitedModel{model: newModel(clock), unsupported: limitedPolicies}, nil
	},
	Unsupported: limitedPolicies,
	Capacity: &CapacityHook{
		Open: func(_ context.Context, clock *Clock) (recordstore.Backend, error) {
			return limitedModel{model: newModel(clock), limit: 5}, nil
		},
		Exceed: func(ctx context.Context, b recordstore.Backend, stream, kind string) error {
			_, err := b.Append(ctx, stream, kind, []recordstore.Row{{"n": 4}, {"n": 5}, {"n": 6}})
			return err
		},
	},
	ModelRuns: 1,
})

var _ = DescribeBatchAppender("the reference model's batches", BatchHarness{
	Open: func(_ context.Context, clock *Clock) (recordstore.Backend, error) {
		return newModelBatches(clock), nil
	},
	Epoch: func(recordstore.Backend) int64 { return modelEpoch },
})

// The suites on bound kinds, against the model: it keeps a bound kind's
// binding as declared and starts a bound kind's new generation after the
// highest seq its table ever held, so the suites' bound specs and the
// model agree as the unbound ones do.
var _ = DescribeBackend("the reference model on bound kinds", Harness{
	Open: func(_ context.Context, clock *Clock) (recordstore.Backend, error) {
		return newModel(clock), nil
	},
	Bind:      BindTable,
	ModelRuns: 1,
})

var _ = DescribeBatchAppender("the reference model's batches on bound kinds", BatchHarness{
	Open: func(_ context.Context, clock *Clock) (recordstore.Backend, error) {
		return newModelBatches(clock), nil
	},
	Epoch: func(recordstore.Backend) int64 { return modelEpoch },
	Bind:  BindTable,
})
