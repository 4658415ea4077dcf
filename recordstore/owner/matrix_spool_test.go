// The crash matrix, spool and signals: a follower in another process woken
// by the owner's writes, spool GC, ingest without the socket, and producers
// killed at every step of a publish.

package owner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	rt "github.com/fb46ecde/records/recordstoretest"
)

var _ = Describe("spool and signals across processes", Label("crash"), func() {
	It("wakes a non-owner's Tail when the owner appends, without periodic rechecks", func() {
		path := storePath()
		// Five commits, 200ms apart: each must wake the follower again.
		var then []rt.Step
		for i := range 5 {
			then = append(then, rt.Step{Op: rt.OpSleep, Duration: 200 * time.Millisecond}, appendGen("s", "t", i, 1).Named(fmt.Sprintf("append-%d", i)))
		}
		own := startOwner(path, fast(), nil, append(then, hold())...)
		f := startProducer(path, with(func(o *rt.StoreOptions) { o.NoFollowRecheck = true }), nil,
			rt.Step{Op: rt.OpTail, Name: "tail", Stream: "s", Count: 5, Timeout: wait})
		Expect(f.MustStepNamed("open", wait).Role).To(Equal(string(owner.RoleNonOwner)))
		Expect(own.Release()).To(Succeed())
		own.MustStepNamed("append-4", wait)
		expectTailed(f.MustStepNamed("tail", wait), 5)
	})

	// A commit made right after the follower's open returns must wake it
	// too: the change feed's first data_version is read before that.
	It("wakes a non-owner's Tail for a commit made right after it opened", func() {
		path := storePath()
		own := startOwner(path, fast(), nil, appendGen("s", "t", 0, 3), hold())
		f := startProducer(path, with(func(o *rt.StoreOptions) { o.NoFollowRecheck = true }), nil,
			rt.Step{Op: rt.OpTail, Name: "tail", Stream: "s", Count: 3, Timeout: wait})
		f.MustStepNamed("open", wait)
		Expect(own.Release()).To(Succeed())
		expectTailed(f.MustStepNamed("tail", wait), 3)
	})

	It("removes tmp folders by age, keeps young ones, and empties trash", func() {
		path := storePath()
		tmp := filepath.Join(spool.PathFor(path), string(spool.StateTmp))
		spoolDir(path)
		mk := func(age time.Duration) string {
			name := spool.NewIdentity("gc").Instance + "-" + spool.NewID()
			dir := filepath.Join(tmp, name)
			Expect(os.Mkdir(dir, 0o700)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(dir, "e00001.ndjson"), []byte("{}\n"), 0o600)).To(Succeed())
			at := time.Now().Add(-age)
			Expect(os.Chtimes(dir, at, at)).To(Succeed())
			return name
		}
		old, young := mk(2*time.Hour), mk(0)
		trashed := filepath.Join(spool.PathFor(path), string(spool.StateTrash), "ingested-earlier")
		Expect(os.Mkdir(trashed, 0o700)).To(Succeed())
		startOwner(path, with(func(o *rt.StoreOptions) {
			o.TmpAge = time.Hour
			o.GCInterval = 50 * time.Millisecond
		}), nil)
		Eventually(func() []string { return entries(path, spool.StateTmp) }, wait).ShouldNot(ContainElement(old))
		Expect(entries(path, spool.StateTmp)).To(ContainElement(young))
		Eventually(func() []string { return entries(path, spool.StateTrash) }, wait).Should(BeEmpty())
		Consistently(func() []string { return entries(path, spool.StateTmp) }, 300*time.Millisecond, 50*time.Millisecond).
			Should(ContainElement(young))
	})

	It("ingests through polling when the control socket was removed", func() {
		path := storePath()
		own := startOwner(path, fast(), nil, scan("s").Named("scan"))
		st, err := owner.ReadState(owner.PathsFor(path).State)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Socket).NotTo(BeEmpty())
		Expect(os.Remove(st.Socket)).To(Succeed())
		status, err := owner.ReadStatus(context.Background(), path, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(status.SocketAlive).To(BeFalse())

		p := startProducer(path, fast(), nil, appendGen("s", "ns", 0, 5).Named("append-first"), appendGen("s", "ns", 5, 5).Named("append-second"), closeStore())
		Expect(appendResult(p.MustStepNamed("append-first", wait))).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "event", From: 1, To: 5, Appended: 5}))
		Expect(appendResult(p.MustStepNamed("append-second", wait))).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "event", From: 6, To: 10, Appended: 5}))
		p.MustFinish(wait)
		Expect(own.Release()).To(Succeed())
		recs, err := own.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(10))
	})

	DescribeTable("leaves nothing in incoming when a producer dies before the commit of a publish, and GC removes its tmp folder",
		func(step string) {
			path := storePath()
			own := startOwner(path, with(func(o *rt.StoreOptions) { o.GCInterval = 50 * time.Millisecond }), nil)
			p := startProducer(path, fast(), nil,
				rt.Step{Op: rt.OpArm, Failpoint: &rt.FailpointRule{Name: step, Action: rt.ActKill}},
				publishGen("s", "dead", 0, 3))
			fp := p.MustEvent(rt.EventFailpoint, wait)
			Expect(fp.Name).To(Equal(step))
			_, err := p.Wait(wait)
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Killed()).To(BeTrue())
			Expect(incoming(path)).To(BeEmpty())
			Expect(entries(path, spool.StateFailed)).To(BeEmpty())
			left := entries(path, spool.StateTmp)
			Expect(left).To(HaveLen(1), "the dead producer's tmp folder")

			// Age it past the default TmpAge: the owner's next GC pass removes it.
			at := time.Now().Add(-48 * time.Hour)
			Expect(os.Chtimes(filepath.Join(spool.PathFor(path), string(spool.StateTmp), left[0]), at, at)).To(Succeed())
			Eventually(func() []string { return entries(path, spool.StateTmp) }, wait).Should(BeEmpty())
			Expect(own.Release()).To(Succeed())
			own.MustFinish(wait)
			Expect(finalRows(path, "s")).To(BeEmpty())
		},
		Entry("tmp created", spool.StepTmpCreated),
		Entry("data written", spool.StepDataWritten),
		Entry("manifest written", spool.StepManifestWritten),
		Entry("tmp synced", spool.StepTmpSynced),
	)

	It("ingests a batch once when its producer dies right after the commit of the publish", func() {
		path := storePath()
		own := startOwner(path, fast(), nil, scan("s").Named("scan"))
		p := startProducer(path, fast(), nil,
			rt.Step{Op: rt.OpArm, Failpoint: &rt.FailpointRule{Name: spool.StepCommitted, Action: rt.ActKill}},
			publishGen("s", "done", 0, 3))
		p.MustEvent(rt.EventFailpoint, wait)
		_, err := p.Wait(wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Killed()).To(BeTrue())
		Eventually(func() []spool.BatchName { return incoming(path) }, wait).Should(BeEmpty())
		Expect(own.Release()).To(Succeed())
		recs, err := own.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(lineKeyCounts(recs)).To(Equal(map[string]int{
			rt.GenKey("done", 0): 1, rt.GenKey("done", 1): 1, rt.GenKey("done", 2): 1}))
	})
})

// expectTailed checks a tail step's result: count rows, the last at seq
// count.
func expectTailed(l rt.Line, count int) {
	GinkgoHelper()
	var got struct {
		Count   int   `json:"count"`
		LastSeq int64 `json:"lastSeq"`
	}
	Expect(l.Decode(&got)).To(Succeed())
	Expect(got.Count).To(Equal(count))
	Expect(got.LastSeq).To(BeEquivalentTo(count))
}
