// The ginkgo suite of drakkar/archive; the test binary doubles as an
// archiver child process (see child_test.go).

package archive_test

import (
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

func TestArchive(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "drakkar/archive")
}
