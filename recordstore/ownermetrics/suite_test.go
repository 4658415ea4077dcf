package ownermetrics_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestOwnerMetrics(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ownermetrics")
}
