package cli

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore/fleet"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("serve --fleet's handler", func() {
	var (
		f   *fleet.Fleet
		srv *httptest.Server
		key fleet.Key
	)

	BeforeEach(func() {
		root := filepath.Join(GinkgoT().TempDir(), "fleet")
		Expect(os.Mkdir(root, 0o700)).To(Succeed())
		var err error
		f, err = fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, SweepInterval: -1, CreateOnDemand: fleet.OnDemandRefuse})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(f.Close)
		key, err = fleet.TenantKey("acme")
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Provision(context.Background(), key)).To(Succeed())
		done := make(chan struct{})
		DeferCleanup(func() { close(done) })
		srv = httptest.NewServer(fleetHandler(f, slog.New(slog.NewTextHandler(io.Discard, nil)), done, 0))
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

var _ = DescribeTable("fleetHTTPStatus maps the fleet's codes and the read API's",
	func(code string, status int) { Expect(fleetHTTPStatus(code)).To(Equal(status)) },
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

var _ = DescribeTable("tenantTarget maps a tenant path to the store's read API",
	func(in, wantPath, wantRaw string) {
		u, err := url.Parse(in)
		Expect(err).NotTo(HaveOccurred())
		got, err := tenantTarget(u)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Path).To(Equal(wantPath))
		Expect(got.EscapedPath()).To(Equal(wantRaw))
		Expect(got.RawQuery).To(Equal(u.RawQuery))
	},
	Entry("rows with a query", "/api/v1/tenants/acme/streams/s1/rows?after=2", "/api/v1/streams/s1/rows", "/api/v1/streams/s1/rows"),
	Entry("the store's health", "/api/v1/tenants/tenant:acme/healthz", "/healthz", "/healthz"),
	Entry("an escaped stream name", "/api/v1/tenants/acme/streams/a%20b", "/api/v1/streams/a b", "/api/v1/streams/a%20b"),
	Entry("the key alone", "/api/v1/tenants/acme", "/api/v1/", "/api/v1/"),
)
