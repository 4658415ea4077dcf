// A list reads a store's identity from the file's pages, and opens the
// file with SQLite only when those cannot tell or show another key.

package fleet_test

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/fleet"
)

var _ = Describe("Identities read from the store files' pages", func() {
	var (
		root     string
		f        *fleet.Fleet
		ctx      = context.Background()
		viaSQL   []string // files whose identity a list read through SQLite
		inspects []string // files whose identity a list read at all
	)
	BeforeEach(func() {
		root = newRoot()
		f = openFleet(root, fleet.Options{})
		for _, id := range []string{"alpha", "bravo", "delta"} {
			Expect(f.Provision(ctx, tenant(id))).To(Succeed())
		}
		appendNote(f, tenant("bravo"), "n1") // a store written to after its creation
		Expect(f.CloseStore(ctx, tenant("bravo"))).To(Succeed())
		f.SetSQLiteRead(func(rel string) { viaSQL = append(viaSQL, rel) })
		f.SetInspected(func(rel string) { inspects = append(inspects, rel) })
	})
	rel := func(id string) string { return must(f.Template().Path(tenant(id))) }
	abs := func(id string) string { return filepath.Join(root, rel(id)) }
	list := func() fleet.Listing {
		viaSQL, inspects = nil, nil
		l, err := f.List(ctx, fleet.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		return l
	}

	It("lists a root the first time without opening any store with SQLite", func() {
		Expect(filepath.Join(root, fleet.IndexName)).NotTo(BeAnExistingFile())
		l := list()
		Expect(inspects).To(HaveLen(3), "every identity was read")
		Expect(viaSQL).To(BeEmpty())
		Expect(l.Skipped).To(BeEmpty())
		var keys []string
		for _, e := range l.Stores {
			keys = append(keys, e.Key)
		}
		Expect(keys).To(ConsistOf("tenant:alpha", "tenant:bravo", "tenant:delta"))
		Expect(list().Stores).To(Equal(l.Stores), "the index it wrote serves the next list")
		Expect(inspects).To(BeEmpty())
	})

	It("judges through SQLite a file whose pages show another store's key, and lists it misplaced", func() {
		data, err := os.ReadFile(abs("bravo"))
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(abs("alpha"), data, 0o600)).To(Succeed())
		l := list()
		Expect(viaSQL).To(Equal([]string{rel("alpha")}))
		Expect(l.Skipped).To(ConsistOf(fleet.Skipped{Path: rel("alpha"), Reason: "misplaced: records tenant:bravo"}))
	})

	It("reads through SQLite a store open in a process (its -wal holds its newest pages)", func() {
		appendNote(f, tenant("delta"), "n2")
		l := list()
		Expect(viaSQL).To(Equal([]string{rel("delta")}))
		Expect(l.Stores).To(HaveLen(3))
	})

	It("reads through SQLite a store with a -wal beside it, whose newest pages may be there", func() {
		Expect(os.WriteFile(abs("delta")+"-wal", []byte("not a wal"), 0o600)).To(Succeed())
		l := list()
		Expect(viaSQL).To(Equal([]string{rel("delta")}))
		Expect(l.Stores).To(HaveLen(3))
	})

	It("reads through SQLite, and reports, a file that is no SQLite database", func() {
		Expect(os.WriteFile(abs("alpha"), []byte("this is no database, just text at a store's path, long enough to hold a header of a hundred bytes......"), 0o600)).To(Succeed())
		l := list()
		Expect(viaSQL).To(Equal([]string{rel("alpha")}))
		Expect(l.Stores).To(ContainElement(HaveField("Err", Not(BeEmpty()))))
	})

	It("checks settled stores with --open (ListOptions.Open) on immutable connections, and asks a plain one about a damaged file", func() {
		fi, err := os.Stat(abs("alpha"))
		Expect(err).NotTo(HaveOccurred())
		data, err := os.ReadFile(abs("alpha"))
		Expect(err).NotTo(HaveOccurred())
		for i := 4096 + 8; i < 2*4096; i++ { // page 2's cell area
			data[i] = 0xee
		}
		Expect(os.WriteFile(abs("alpha"), data[:fi.Size()], 0o600)).To(Succeed())
		viaSQL, inspects = nil, nil
		l, err := f.List(ctx, fleet.ListOptions{Open: true})
		Expect(err).To(MatchError(fleet.ErrUnreadable))
		Expect(inspects).To(HaveLen(3))
		Expect(viaSQL).To(Equal([]string{rel("alpha")}), "only the damaged file is asked again")
		for _, e := range l.Stores {
			if e.Key == "tenant:alpha" {
				Expect(e.Err).NotTo(BeEmpty())
			} else {
				Expect(e.Err).To(BeEmpty(), e.Key)
			}
		}
		for _, id := range []string{"alpha", "bravo", "delta"} {
			Expect(abs(id) + "-shm").NotTo(BeAnExistingFile())
			Expect(abs(id) + "-wal").NotTo(BeAnExistingFile())
		}
	})

	It("reads the key of a real store file, and gives up on a cut or damaged one", func() {
		data, err := os.ReadFile(abs("bravo"))
		Expect(err).NotTo(HaveOccurred())
		id, ok := fleet.ParseIdentity(data)
		Expect(ok).To(BeTrue())
		Expect(id).To(Equal("tenant:bravo"))
		_, ok = fleet.ParseIdentity(data[:99])
		Expect(ok).To(BeFalse())
		bad := append([]byte(nil), data...)
		bad[0] = 'X'
		_, ok = fleet.ParseIdentity(bad)
		Expect(ok).To(BeFalse())
	})
})
