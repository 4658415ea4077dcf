// Specs of path templates.

package fleet_test

import (
	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func mustKey(s string) fleet.Key {
	k, err := fleet.ParseKey(s)
	Expect(err).NotTo(HaveOccurred())
	return k
}

var _ = Describe("Path templates", func() {
	DescribeTable("place a key's store and read it back",
		func(mode fleet.Mode, text, key string, want func(fleet.Key) string) {
			t, err := fleet.ParseTemplate(text, mode)
			Expect(err).NotTo(HaveOccurred())
			k := mustKey(key)
			p, err := t.Path(k)
			Expect(err).NotTo(HaveOccurred())
			Expect(p).To(Equal(want(k)))
			back, ok := t.Match(p)
			Expect(ok).To(BeTrue())
			Expect(back).To(Equal(k))
		},
		Entry("the tenant default", fleet.ModeTenant, fleet.DefaultTemplate(fleet.ModeTenant), "tenant:acme",
			func(k fleet.Key) string { return bucket(k) + "/acme.db" }),
		Entry("the slot default", fleet.ModeSlot, fleet.DefaultTemplate(fleet.ModeSlot), "slot:130",
			func(fleet.Key) string { return "002/slot-00130.db" }),
		Entry("a flat tenant template", fleet.ModeTenant, "t-{tenant}.sqlite", "tenant:acme",
			func(fleet.Key) string { return "t-acme.sqlite" }),
		Entry("a deep template", fleet.ModeSlot, "s/{bucket}/x{slot}/data.db", "slot:16383",
			func(fleet.Key) string { return "s/255/x16383/data.db" }),
		Entry("a tenant template with its slot", fleet.ModeTenant, "{slot}/{tenant}.db", "tenant:acme",
			func(k fleet.Key) string { return pad5(k.Slot) + "/acme.db" }),
	)
	DescribeTable("are refused with ErrInvalid",
		func(mode fleet.Mode, text string) {
			_, err := fleet.ParseTemplate(text, mode)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
		},
		Entry("empty", fleet.ModeTenant, ""),
		Entry("absolute", fleet.ModeTenant, "/srv/{tenant}.db"),
		Entry("a dot segment", fleet.ModeTenant, "./{tenant}.db"),
		Entry("a dot-dot segment", fleet.ModeTenant, "../{tenant}.db"),
		Entry("an empty segment", fleet.ModeTenant, "a//{tenant}.db"),
		Entry("a trailing slash", fleet.ModeTenant, "{tenant}.db/"),
		Entry("a backslash", fleet.ModeTenant, `a\{tenant}.db`),
		Entry("a hidden segment", fleet.ModeTenant, ".x/{tenant}.db"),
		Entry("no extension", fleet.ModeTenant, "{bucket}/{tenant}"),
		Entry("an extension before the placeholder", fleet.ModeTenant, "{bucket}/x.db{tenant}"),
		Entry("a repeated placeholder", fleet.ModeTenant, "{tenant}/{tenant}.db"),
		Entry("an unknown placeholder", fleet.ModeTenant, "{user}/{tenant}.db"),
		Entry("an unbalanced brace", fleet.ModeTenant, "{tenant.db"),
		Entry("a closing brace alone", fleet.ModeTenant, "}{tenant}.db"),
		Entry("a tenant fleet without {tenant}", fleet.ModeTenant, "{slot}.db"),
		Entry("a slot fleet without {slot}", fleet.ModeSlot, "{bucket}/x.db"),
		Entry("a slot fleet with {tenant}", fleet.ModeSlot, "{slot}/{tenant}.db"),
		Entry("a control character", fleet.ModeTenant, "a\x01/{tenant}.db"),
		Entry("an unknown mode", fleet.Mode("user"), "{tenant}.db"),
		Entry("an engine lock file's extension", fleet.ModeTenant, "{bucket}/{tenant}.db.lock"),
		Entry("an engine spool folder's extension", fleet.ModeTenant, "{bucket}/{tenant}.db.spool"),
		Entry("an engine state file's extension", fleet.ModeTenant, "{bucket}/{tenant}.db.owner.json"),
		Entry("an engine socket's extension", fleet.ModeSlot, "{bucket}/slot-{slot}.db.sock"),
		Entry("an engine extension in capitals", fleet.ModeTenant, "{tenant}.LOCK"),
		Entry("SQLite's -journal file", fleet.ModeTenant, "{tenant}.db-journal"),
	)
	DescribeTable("do not read sidecars, strays or misplaced buckets as stores",
		func(rel string) {
			t, err := fleet.ParseTemplate(fleet.DefaultTemplate(fleet.ModeTenant), fleet.ModeTenant)
			Expect(err).NotTo(HaveOccurred())
			_, ok := t.Match(rel)
			Expect(ok).To(BeFalse())
		},
		Entry("a -wal file", bucket(mustKey("tenant:acme"))+"/acme.db-wal"),
		Entry("a -shm file", bucket(mustKey("tenant:acme"))+"/acme.db-shm"),
		Entry("a lock file", bucket(mustKey("tenant:acme"))+"/acme.db.lock"),
		Entry("a state file", bucket(mustKey("tenant:acme"))+"/acme.db.owner.json"),
		Entry("a stray file", bucket(mustKey("tenant:acme"))+"/notes.txt"),
		Entry("an uppercase name", bucket(mustKey("tenant:acme"))+"/Acme.db"),
		Entry("the wrong bucket", "999/acme.db"),
		Entry("a file at the root", "acme.db"),
	)
	It("refuses a key of the other mode before any disk work", func() {
		t, err := fleet.ParseTemplate(fleet.DefaultTemplate(fleet.ModeTenant), fleet.ModeTenant)
		Expect(err).NotTo(HaveOccurred())
		_, err = t.Path(mustKey("slot:1"))
		Expect(err).To(MatchError(recordstore.ErrInvalid))
	})
	It("refuses a tenant key whose slot is not its hash", func() {
		t, err := fleet.ParseTemplate(fleet.DefaultTemplate(fleet.ModeTenant), fleet.ModeTenant)
		Expect(err).NotTo(HaveOccurred())
		k := mustKey("tenant:acme")
		k.Slot = (k.Slot + 1) % fleet.Slots
		_, err = t.Path(k)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
	})
})

func bucket(k fleet.Key) string { return pad(k.Bucket(), 3) }
func pad5(n int) string         { return pad(n, 5) }

func pad(n, w int) string {
	s := ""
	for i := 0; i < w; i++ {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}
