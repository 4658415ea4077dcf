package main_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

// queryBin is the query binary built once for the whole suite.
var queryBin string

func TestQuery(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "query")
}

var _ = BeforeSuite(func() {
	var err error
	queryBin, err = gexec.Build("github.com/fb46ecde/records/cmd/query")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(gexec.CleanupBuildArtifacts)
})
