// Specs: the randomized comparison with the reference model.

package recordstoretest

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
)

func (s *suite) describeModel() {
	Describe("randomized comparison with the model", func() {
		runs, steps := s.h.ModelRuns, s.h.ModelSteps
		if runs <= 0 {
			runs = 3
		}
		if steps <= 0 {
			steps = 300
		}
		for run := range runs {
			It(fmt.Sprintf("agrees with the model after every one of %d random operations (run %d)", steps, run+1), func() {
				seed := uint64(GinkgoRandomSeed())*1000003 + uint64(run)
				GinkgoWriter.Printf("model test seed %d\n", seed)
				newSimulation(s, seed).run(steps)
			})
		}
	})
}
