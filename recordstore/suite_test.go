package recordstore_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRecordstore(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "recordstore")
}
