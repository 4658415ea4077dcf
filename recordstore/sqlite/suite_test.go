// The ginkgo suite of the SQLite backend: backend-specific specs here, the
// shared conformance suite in conformance_test.go.

package sqlite_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestSQLite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "recordstore/sqlite")
}
