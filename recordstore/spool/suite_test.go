// The ginkgo suite of package spool, and the re-exec entry point of the
// crash tests' child process.

package spool_test

import (
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	os.Exit(m.Run())
}

func TestSpool(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "spool")
}
