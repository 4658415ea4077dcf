// Runs the conformance suite against the reference model, which proves that
// the suite and the model agree with each other.

package recordstoretest

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // ginkgo's DSL reads best unqualified
	. "github.com/onsi/gomega"    //nolint:revive // gomega's DSL reads best unqualified

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
