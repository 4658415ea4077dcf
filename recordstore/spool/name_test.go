// Specs for batch folder names.

package spool_test

import (
	"fmt"
	"math"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/spool"
)

var _ = Describe("BatchName.String", func() {
	It("renders %020d-<instance>-%012d-<id>, as fmt does, at every edge", func() {
		for _, created := range []int64{0, 1, 1796007464083838236, math.MaxInt64, -1, -123, math.MinInt64} {
			for _, seq := range []int64{0, 1, 999_999_999_999, 1_000_000_000_000, math.MaxInt64, -7, math.MinInt64} {
				n := spool.BatchName{Created: time.Unix(0, created), Instance: "0123456789abcdef", Seq: seq, ID: "0123456789abcdef0123456789abcdef"}
				Expect(n.String()).To(Equal(fmt.Sprintf("%020d-%s-%012d-%s", created, n.Instance, seq, n.ID)), "created %d, seq %d", created, seq)
			}
		}
	})
})
