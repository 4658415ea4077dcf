package replica_test

import (
	"testing"

	"github.com/fb46ecde/records/recordstoretest/s3test"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// startS3 starts an S3 test server (bucket "records") for a test or a
// benchmark, with its credentials set in this process until tb ends; then
// the environment is restored and the server killed. A test that kills
// the server itself may: the second kill does nothing.
func startS3(tb testing.TB) *s3test.Server {
	tb.Helper()
	srv, err := s3test.Start("records")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Kill() })
	tb.Cleanup(srv.SetEnv())
	return srv
}

// specS3 is startS3 for a Ginkgo spec: the server is closed and the
// environment restored after the spec, and AWS_CA_BUNDLE is unset for it
// (noCABundle).
func specS3() *s3test.Server {
	srv, err := s3test.Start("records")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(srv.Close)
	DeferCleanup(srv.SetEnv())
	noCABundle()
	return srv
}
