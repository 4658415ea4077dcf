// The ginkgo suite of package parquet.

package parquet_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestParquet(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "spool/parquet")
}
