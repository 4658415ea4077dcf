// The ginkgo suite of drakkar/debugapi.

package debugapi_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestDebugAPI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "drakkar/debugapi")
}
