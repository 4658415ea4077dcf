// Specs of keys and tenant ids.

package fleet_test

import (
	"errors"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Tenant ids", func() {
	DescribeTable("are accepted when they can name a file on any system",
		func(id string) {
			Expect(fleet.ValidateTenantID(id)).To(Succeed())
			k, err := fleet.TenantKey(id)
			Expect(err).NotTo(HaveOccurred())
			Expect(k.String()).To(Equal("tenant:" + id))
		},
		Entry("letters", "acme"),
		Entry("a leading digit", "7eleven"),
		Entry("dashes and underscores", "a-b_c"),
		Entry("a lowercase uuid", "0b7e2c4e-9d1a-4c4e-8f7a-2f0c1d2e3f4a"),
		Entry("128 bytes", strings.Repeat("a", 128)),
		Entry("a device name with a suffix", "con1"),
	)
	DescribeTable("are refused with ErrInvalid when they cannot",
		func(id, fragment string) {
			err := fleet.ValidateTenantID(id)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err.Error()).To(ContainSubstring(fragment))
			Expect(recordstore.Code(err)).To(Equal("invalid"))
		},
		Entry("empty", "", "empty"),
		Entry("uppercase, not folded", "Acme", "uppercase is refused"),
		Entry("uppercase inside", "acMe", "uppercase is refused"),
		Entry("a leading dash", "-acme", "must start"),
		Entry("a leading underscore", "_acme", "must start"),
		Entry("a dot", "ac.me", "byte 2"),
		Entry("a slash", "a/b", "byte 1"),
		Entry("a space", "a b", "byte 1"),
		Entry("non-ASCII", "café", "byte 3"),
		Entry("129 bytes", strings.Repeat("a", 129), "longer than 128"),
		Entry("a Windows device name", "con", "device"),
		Entry("another device name", "lpt1", "device"),
	)
	It("quotes at most 64 bytes of a refused id", func() {
		id := strings.Repeat("x", 70) + "Y" + strings.Repeat("z", 20)
		err := fleet.ValidateTenantID(id)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(err.Error()).To(ContainSubstring(strings.Repeat("x", 64)))
		Expect(err.Error()).NotTo(ContainSubstring(strings.Repeat("x", 65)))
	})
})

var _ = Describe("Keys", func() {
	DescribeTable("parse from how list prints them and print back",
		func(in, out string) {
			k, err := fleet.ParseKey(in)
			Expect(err).NotTo(HaveOccurred())
			Expect(k.String()).To(Equal(out))
		},
		Entry("a tenant", "tenant:acme", "tenant:acme"),
		Entry("a tenant with a slash", "tenant/acme", "tenant:acme"),
		Entry("a slot", "slot:00042", "slot:00042"),
		Entry("a slot without zeros", "slot/42", "slot:00042"),
		Entry("the last slot", "slot:16383", "slot:16383"),
	)
	DescribeTable("are refused with ErrInvalid when malformed",
		func(in string) {
			_, err := fleet.ParseKey(in)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
		},
		Entry("no mode", "acme"),
		Entry("an unknown mode", "user:acme"),
		Entry("a bad tenant id", "tenant:Acme"),
		Entry("an empty tenant id", "tenant:"),
		Entry("a slot past the range", "slot:16384"),
		Entry("a slot of six digits", "slot:000001"),
		Entry("a negative slot", "slot:-1"),
		Entry("a slot that is not a number", "slot:abc"),
	)
	It("places a tenant in the bucket of its stable slot", func() {
		k, err := fleet.TenantKey("acme")
		Expect(err).NotTo(HaveOccurred())
		Expect(k.Slot).To(Equal(fleet.SlotOf("acme")))
		Expect(k.Bucket()).To(Equal(k.Slot / 64))
		Expect(k.Bucket()).To(BeNumerically("<", fleet.Buckets))
	})
	It("maps a routing key to the same slot every time", func() {
		Expect(fleet.RoutingKey("order-17")).To(Equal(fleet.RoutingKey("order-17")))
		Expect(fleet.RoutingKey("order-17").Slot).To(BeNumerically("<", fleet.Slots))
	})
	It("gives refusals a code that is not internal", func() {
		_, err := fleet.ParseKey("tenant:NUL")
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
	})
})
