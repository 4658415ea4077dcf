// Specs for PollChanges and SetPushed: a read-only backend whose change
// feed polls once an hour sees another connection's commit when told to
// look, and when the owner's notices stop reaching it.

package sqlite_test

import (
	"context"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

var _ = Describe("polling the change feed now", func() {
	var w, r *sqlite.Backend
	ctx := context.Background()
	BeforeEach(func() {
		path := filepath.Join(GinkgoT().TempDir(), "records.sqlite")
		var err error
		w, err = sqlite.Open(ctx, path, sqlite.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Close)
		_, err = w.DeclareKind(ctx, recordstore.Kind{Name: "event", Columns: []recordstore.Column{{Name: "k", Type: recordstore.TypeString}}})
		Expect(err).NotTo(HaveOccurred())
		r, err = sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true, ChangeInterval: time.Hour})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(r.Close)
	})
	appendOne := func() {
		_, err := w.Append(ctx, "s", "event", []recordstore.Row{{"k": "x"}})
		Expect(err).NotTo(HaveOccurred())
	}

	It("wakes the followers at once after another connection's commit", func() {
		ch := r.Notifier().Changed("s")
		appendOne()
		r.PollChanges()
		Eventually(ch).WithTimeout(time.Minute).Should(BeClosed())
		m, err := r.Meta(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect(m.HighSeq).To(Equal(int64(1)))
	})

	It("polls at once when the notices stop reaching it", func() {
		r.SetPushed(true)
		ch := r.Notifier().Changed("s")
		appendOne()
		Consistently(ch).WithTimeout(50*time.Millisecond).ShouldNot(BeClosed(), "nobody looked yet")
		r.SetPushed(false)
		Eventually(ch).WithTimeout(time.Minute).Should(BeClosed())
	})
})
