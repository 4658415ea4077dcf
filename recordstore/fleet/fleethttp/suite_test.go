package fleethttp_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestFleetHTTP(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "fleethttp")
}
