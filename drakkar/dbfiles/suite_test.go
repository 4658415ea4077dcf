// The ginkgo suite of drakkar/dbfiles.

package dbfiles_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestDBFiles(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "drakkar/dbfiles")
}
