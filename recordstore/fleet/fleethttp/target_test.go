// tenantTarget, the mapping of a tenant's path to the store's read API.

package fleethttp

import (
	"net/url"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
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
