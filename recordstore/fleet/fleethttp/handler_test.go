// The fleet handler through httptest over a real fleet root: a store
// being deleted, a closed fleet, another method, and the status of each
// code.

package fleethttp_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/fleet/fleethttp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// discardLog is a logger that writes nothing.
func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newRoot returns a fresh fleet root (0700).
func newRoot() string {
	root := filepath.Join(GinkgoT().TempDir(), "fleet")
	Expect(os.Mkdir(root, 0o700)).To(Succeed())
	return root
}

var _ = Describe("the fleet handler", func() {
	var (
		f   *fleet.Fleet
		srv *httptest.Server
		key fleet.Key
	)

	BeforeEach(func() {
		var err error
		f, err = fleet.Open(newRoot(), fleet.Options{Mode: fleet.ModeTenant, SweepInterval: -1, CreateOnDemand: fleet.OnDemandRefuse})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(f.Close)
		key, err = fleet.TenantKey("acme")
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Provision(context.Background(), key)).To(Succeed())
		done := make(chan struct{})
		DeferCleanup(func() { close(done) })
		srv = httptest.NewServer(fleethttp.Handler(f, fleethttp.Options{Logger: discardLog(), Done: done}))
		DeferCleanup(srv.Close)
	})

	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		var body struct{ Error struct{ Code string } }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body.Error.Code
	}

	It("answers 410 deleting for a tenant being deleted, then 404 once it is gone", func() {
		status, _ := get("/api/v1/tenants/acme/streams")
		Expect(status).To(Equal(http.StatusOK))
		lease, err := f.Acquire(context.Background(), key)
		Expect(err).NotTo(HaveOccurred())
		deleted := make(chan error, 1)
		go func() { deleted <- f.Delete(context.Background(), key) }() // waits for the lease

		Eventually(func() int { s, _ := get("/api/v1/tenants/acme/streams"); return s }).Should(Equal(http.StatusGone))
		_, code := get("/api/v1/tenants/tenant:acme/streams")
		Expect(code).To(Equal("deleting"))
		Consistently(deleted).ShouldNot(Receive())

		lease.Release()
		Eventually(deleted).Should(Receive(BeNil()))
		status, code = get("/api/v1/tenants/acme/streams")
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(code).To(Equal("not_found"))
	})

	It("answers 503 closed once the fleet is closed", func() {
		Expect(f.Close()).To(Succeed())
		status, code := get("/api/v1/tenants/acme/streams")
		Expect(status).To(Equal(http.StatusServiceUnavailable))
		Expect(code).To(Equal("closed"))
	})

	It("answers 405 for another method than GET on a fleet route", func() {
		resp, err := http.Post(srv.URL+"/api/v1/tenants", "application/json", nil)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusMethodNotAllowed))
		Expect(resp.Header.Get("Allow")).To(Equal("GET, HEAD"))
	})
})

var _ = DescribeTable("HTTPStatus maps the fleet's codes and the read API's",
	func(code string, status int) { Expect(fleethttp.HTTPStatus(code)).To(Equal(status)) },
	Entry("a bad key", "invalid", http.StatusBadRequest),
	Entry("a missing store", "not_found", http.StatusNotFound),
	Entry("a store that exists", "exists", http.StatusConflict),
	Entry("a store in use", "in_use", http.StatusConflict),
	Entry("a misplaced store", "misplaced", http.StatusConflict),
	Entry("a store path outside the root", "outside_root", http.StatusForbidden),
	Entry("a store being deleted", "deleting", http.StatusGone),
	Entry("a closed fleet", "closed", http.StatusServiceUnavailable),
	Entry("an owner of another catalog version", "catalog_version", http.StatusServiceUnavailable),
	Entry("an internal error", "internal", http.StatusInternalServerError),
)
