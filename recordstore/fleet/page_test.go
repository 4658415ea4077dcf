// Specs of ListPage: the stores sorted by key, a page at a time, opening
// only the page's files.

package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Paging the stores by key", func() {
	var (
		root string
		f    *fleet.Fleet
		ctx  = context.Background()
		// opened are the files whose identity List or ListPage read.
		opened []string
		ids    = []string{"kilo", "alpha", "echo", "zulu", "delta", "bravo"}
	)
	BeforeEach(func() {
		root = newRoot()
		f = openFleet(root, fleet.Options{})
		for _, id := range ids {
			Expect(f.Provision(ctx, tenant(id))).To(Succeed())
		}
		opened = nil
		f.SetInspected(func(rel string) { opened = append(opened, rel) })
	})
	// sortedKeys are the keys List finds, sorted by key.
	sortedKeys := func() []string {
		l, err := f.List(ctx, fleet.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		var keys []string
		for _, e := range l.Stores {
			keys = append(keys, e.Key)
		}
		sort.Strings(keys)
		return keys
	}
	keysOf := func(p fleet.Page) []string {
		var keys []string
		for _, e := range p.Stores {
			keys = append(keys, e.Key)
		}
		return keys
	}
	pathsOf := func(p fleet.Page) []string {
		var paths []string
		for _, e := range p.Stores {
			paths = append(paths, e.Path)
		}
		return paths
	}

	It("walks the pages in key order to the end, as List finds the stores, opening only each page's files", func() {
		all := sortedKeys()
		Expect(all).To(HaveLen(len(ids)))
		var walked []string
		after := ""
		for pages := 0; ; pages++ {
			Expect(pages).To(BeNumerically("<", len(ids)))
			// With no index, as on a first list, the page's files are
			// the only ones read.
			Expect(os.RemoveAll(filepath.Join(root, fleet.IndexName))).To(Succeed())
			opened = nil
			p, err := f.ListPage(ctx, after, 4)
			Expect(err).NotTo(HaveOccurred())
			Expect(opened).To(ConsistOf(pathsOf(p)))
			for _, e := range p.Stores {
				Expect(filepath.Join(root, e.Path)).To(BeARegularFile())
				Expect(e.Size).To(BeNumerically(">", 0))
			}
			walked = append(walked, keysOf(p)...)
			if p.Next == "" {
				break
			}
			Expect(p.Next).To(Equal(p.Stores[len(p.Stores)-1].Key))
			after = p.Next
		}
		Expect(walked).To(Equal(all))
	})

	It("starts after the cursor, a tenant id not stored included", func() {
		all := sortedKeys()
		p, err := f.ListPage(ctx, all[1], 2)
		Expect(err).NotTo(HaveOccurred())
		Expect(keysOf(p)).To(Equal(all[2:4]))
		Expect(p.Next).To(Equal(all[3]))
		p, err = f.ListPage(ctx, "tenant:charlie", 1) // between bravo and delta
		Expect(err).NotTo(HaveOccurred())
		Expect(keysOf(p)).To(Equal([]string{"tenant:delta"}))
		p, err = f.ListPage(ctx, "tenant:zz", 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Stores).To(BeEmpty())
		Expect(p.Next).To(BeEmpty())
	})

	It("passes over a misplaced file and fills the page with the next store", func() {
		bravo := filepath.Join(root, must(f.Template().Path(tenant("bravo"))))
		charlie := must(f.Template().Path(tenant("charlie")))
		Expect(os.MkdirAll(filepath.Dir(filepath.Join(root, charlie)), 0o700)).To(Succeed())
		data, err := os.ReadFile(bravo)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(root, charlie), data, 0o600)).To(Succeed())
		p, err := f.ListPage(ctx, "tenant:bravo", 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(keysOf(p)).To(Equal([]string{"tenant:delta"}))
		Expect(opened).To(ConsistOf(charlie, pathsOf(p)[0]))
	})

	DescribeTable("refuses a bad page before any disk work",
		func(after string, limit int, want string) {
			p, err := f.ListPage(ctx, after, limit)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err.Error()).To(ContainSubstring(want))
			Expect(p.Stores).To(BeEmpty())
			Expect(opened).To(BeEmpty())
		},
		Entry("a page of 0", "", 0, "page size"),
		Entry("a page over the largest", "", fleet.MaxPage+1, "page size"),
		Entry("a cursor of the other mode", "slot:1", 10, "slot"),
		Entry("a cursor that is no key", "acme", 10, "key"),
		Entry("a cursor with an uppercase tenant id", "tenant:Acme", 10, "uppercase"),
	)
})

// must returns v, failing the spec on err.
func must[T any](v T, err error) T {
	Expect(err).NotTo(HaveOccurred())
	return v
}
