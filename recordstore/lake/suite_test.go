package lake_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestLake(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "lake")
}
