// The crash matrix, fast path: a non-owner's append sent over the owner's
// socket (owner.ActionAppend) — applied once whatever process dies where,
// and never written to the spool while the owner answers.

package owner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
	rt "github.com/fb46ecde/records/recordstoretest"
)

var _ = Describe("the fast path across processes", Label("crash"), func() {
	It("commits a non-owner's append over the socket, writing no batch folder; SpoolOnly and WriteOptions.Spool keep the spool", func() {
		path := storePath()
		own := startOwner(path, fast(), nil, scan("s").Named("scan"))
		p := startProducer(path, fast(), nil, appendGen("s", "fast", 0, 5).Named("append"), closeStore())
		l := p.MustStepNamed("append", wait)
		Expect(l.Role).To(Equal(string(owner.RoleNonOwner)))
		Expect(appendResult(l)).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "event", From: 1, To: 5, Appended: 5}))
		p.MustFinish(wait)
		Expect(incoming(path)).To(BeEmpty())
		Expect(entries(path, spool.StateTrash)).To(BeEmpty(), "the append went through the spool")

		sp := startProducer(path, with(func(o *rt.StoreOptions) { o.SpoolOnly = true }), nil,
			appendGen("s", "spooled", 0, 3).Named("append"), closeStore())
		Expect(appendResult(sp.MustStepNamed("append", wait))).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "event", From: 6, To: 8, Appended: 3}))
		sp.MustFinish(wait)
		Eventually(func() []string { return entries(path, spool.StateTrash) }, wait, 20*time.Millisecond).Should(HaveLen(1))

		Expect(own.Release()).To(Succeed())
		recs, err := own.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(8))
		own.MustFinish(wait)
	})

	DescribeTable("applies an append exactly once, with its exact window, when the owner is SIGKILLed",
		func(point string) {
			path := storePath()
			own := startOwner(path, fast(), []rt.FailpointRule{failpoint(point, rt.ActKill)})
			p := startProducer(path, fast(), nil,
				appendGen("s", "p", 0, 5).Named("append"),
				appendGen("s", "p", 5, 5).Named("append-2"),
				waitRole(owner.RoleOwner).Named("become-owner"), scan("s").Named("scan"))
			Expect(p.MustStepNamed("open", wait).Role).To(Equal(string(owner.RoleNonOwner)))
			own.MustEvent(rt.EventFailpoint, wait)
			_, err := own.Wait(wait)
			Expect(err).NotTo(HaveOccurred())
			Expect(own.Killed()).To(BeTrue())

			Expect(appendResult(p.MustStepNamed("append", wait))).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "event", From: 1, To: 5, Appended: 5}))
			Expect(appendResult(p.MustStepNamed("append-2", wait))).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "event", From: 6, To: 10, Appended: 5}))
			p.MustStepNamed("become-owner", wait)
			recs, err := p.MustStepNamed("scan", wait).Records()
			Expect(err).NotTo(HaveOccurred())
			want := map[string]int{}
			for _, k := range genKeys("p", 0, 10) {
				want[k] = 1
			}
			Expect(lineKeyCounts(recs)).To(Equal(want))
		},
		Entry("before the commit", owner.FailInlineBeforeCommit),
		Entry("after the commit, before the answer", owner.FailInlineAfterCommit),
		Entry("after the answer", owner.FailInlineAfterAnswer),
	)

	It("applies an append once when its producer is SIGKILLed right after sending it, and nothing reaches the spool", func() {
		path := storePath()
		own := startOwner(path, with(func(o *rt.StoreOptions) { o.BatchEvents = true }), nil, scan("s").Named("scan"))
		p := startProducer(path, fast(), []rt.FailpointRule{failpoint(owner.FailInlineAfterSend, rt.ActKill)},
			appendGen("s", "sent", 0, 4).Named("append"))
		p.MustEvent(rt.EventFailpoint, wait)
		_, err := p.Wait(wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Killed()).To(BeTrue())
		own.MustEvent(rt.EventBatch, wait) // the owner committed it, answering no one
		Expect(incoming(path)).To(BeEmpty())

		Expect(own.Release()).To(Succeed())
		recs, err := own.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(lineKeyCounts(recs)).To(Equal(map[string]int{
			rt.GenKey("sent", 0): 1, rt.GenKey("sent", 1): 1, rt.GenKey("sent", 2): 1, rt.GenKey("sent", 3): 1}))
		own.MustFinish(wait)
	})

	It("answers a malformed inline batch with an error and commits nothing", func(ctx SpecContext) {
		path := storePath()
		own := startOwner(path, fast(), nil)
		st, err := owner.ReadState(owner.PathsFor(path).State)
		Expect(err).NotTo(HaveOccurred())
		_, err = owner.Call(ctx, st.Socket, owner.Request{Action: owner.ActionAppend, Batch: []byte("RSIB1\n\x05{}")})
		Expect(err).To(MatchError(ContainSubstring("refused")))
		Expect(err).To(MatchError(owner.ErrProtocol))
		_, err = owner.Call(ctx, st.Socket, owner.Request{Action: owner.ActionAppend})
		Expect(err).To(MatchError(ContainSubstring("not an inline batch")))
		Expect(incoming(path)).To(BeEmpty())
		Expect(own.Release()).To(Succeed())
		own.MustFinish(wait)
		Expect(finalRows(path, "s")).To(BeEmpty())
	})
})

// nonOwnerHere opens the store at path in this process while a child owns
// it, with spoolOnly as Options.SpoolOnly; it is closed at the end of the
// spec.
func nonOwnerHere(ctx context.Context, path string, spoolOnly bool) *sqliteStore {
	GinkgoHelper()
	s, err := owner.Open(ctx, owner.Options[*sqlite.Backend]{
		Path: path, Open: sqliteOpener(path), CatalogVersion: sqlite.CatalogVersion,
		StartWait: wait, PollMin: 5 * time.Millisecond, PollMax: 100 * time.Millisecond, SpoolOnly: spoolOnly,
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(s.Close()).To(Succeed()) })
	Expect(s.Role()).To(Equal(owner.RoleNonOwner))
	return s
}

var _ = Describe("the fast path of a NoWait write (WriteOptions.Fast)", Label("crash"), func() {
	It("is done when the owner answers, and left pending in the spool when the process must spool", func(ctx SpecContext) {
		path := storePath()
		own := startOwner(path, fast(), nil, scan("s").Named("scan"))
		fastWrite := owner.AppendOptions{WriteOptions: owner.WriteOptions{NoWait: true, Fast: true}}

		s := nonOwnerHere(ctx, path, false)
		a, err := s.Append(ctx, "s", "event", []recordstore.Row{row("a"), row("b")}, fastWrite)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Pending).To(BeFalse(), "the owner answered on the fast path")
		Expect(a.Spooled).To(BeTrue())
		Expect(a.AppendResult).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "event", From: 1, To: 2, Appended: 2}))
		res, err := s.Await(ctx, a.Batch)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Entries[0].Append).To(Equal(&a.AppendResult))
		m, err := s.Mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "s"}, fastWrite.WriteOptions)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Pending).To(BeFalse())
		Expect(m.Meta).NotTo(BeNil())
		Expect(m.Meta.Sealed).To(BeTrue())
		_, err = s.Append(ctx, "s", "event", []recordstore.Row{row("c")}, fastWrite)
		Expect(errors.Is(err, recordstore.ErrSealed)).To(BeTrue(), "%v", err)
		Expect(incoming(path)).To(BeEmpty())
		Expect(entries(path, spool.StateTrash)).To(BeEmpty())

		a, err = s.Append(ctx, "t", "event", []recordstore.Row{row("d")},
			owner.AppendOptions{WriteOptions: owner.WriteOptions{NoWait: true, Fast: true, Spool: true}})
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Pending).To(BeTrue(), "WriteOptions.Spool keeps the spool")
		res, err = s.Await(ctx, a.Batch)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Entries[0].Append.To).To(BeEquivalentTo(1))

		Expect(own.Release()).To(Succeed())
		recs, err := own.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(lineKeyCounts(recs)).To(Equal(map[string]int{"a": 1, "b": 1}))
		own.MustFinish(wait)
	})
})

// oldOwnerProxy serves a unix socket in this process in front of the
// owner's socket real, as an owner that predates the append action would
// answer: "unknown action" for append, every other request forwarded. It
// counts the append requests it refused.
func oldOwnerProxy(real string) (path string, appends *atomic.Int64) {
	GinkgoHelper()
	path = filepath.Join(GinkgoT().TempDir(), "old-owner.sock")
	ln, err := net.Listen("unix", path)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(ln.Close)
	appends = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var req owner.Request
				if err := json.NewDecoder(c).Decode(&req); err != nil {
					return
				}
				resp := owner.Response{Protocol: owner.Protocol, Error: fmt.Sprintf("unknown action %q", req.Action)}
				if req.Action == owner.ActionAppend {
					appends.Add(1)
				} else if r, err := owner.Call(context.Background(), real, req); err == nil || r.Error != "" {
					resp = r
				}
				_ = json.NewEncoder(c).Encode(resp)
			}()
		}
	}()
	return path, appends
}

var _ = Describe("the fast path against an owner that predates it", Label("crash"), func() {
	It("falls back to the spool when the owner answers the append action as unknown, and does not ask it again", func(ctx SpecContext) {
		path := storePath()
		own := startOwner(path, with(func(o *rt.StoreOptions) { o.Heartbeat = time.Hour }), nil, scan("s").Named("scan"))
		statePath := owner.PathsFor(path).State
		st, err := owner.ReadState(statePath)
		Expect(err).NotTo(HaveOccurred())
		proxy, appends := oldOwnerProxy(st.Socket)
		st.Socket = proxy // the owner rewrites its state file only at its next heartbeat, an hour away
		Expect(owner.WriteState(statePath, st)).To(Succeed())

		s := nonOwnerHere(ctx, path, false)
		res, err := s.Backend().Append(ctx, "s", "event", []recordstore.Row{row("a"), row("b")})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(recordstore.AppendResult{Stream: "s", Kind: "event", From: 1, To: 2, Appended: 2}))
		res, err = s.Backend().Append(ctx, "s", "event", []recordstore.Row{row("c")})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.From).To(BeEquivalentTo(3))
		Expect(appends.Load()).To(BeEquivalentTo(1), "asked the old owner once, then went to the spool")
		Eventually(func() []string { return entries(path, spool.StateTrash) }, wait, 20*time.Millisecond).Should(HaveLen(2))

		Expect(own.Release()).To(Succeed())
		recs, err := own.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(lineKeyCounts(recs)).To(Equal(map[string]int{"a": 1, "b": 1, "c": 1}))
		own.MustFinish(wait)
	})
})
