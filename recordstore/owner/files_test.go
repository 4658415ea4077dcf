package owner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("paths", func() {
	It("derives every file from the configured path", func() {
		p := PathsFor("data/records.sqlite")
		Expect(p).To(Equal(Paths{Config: "data/records.sqlite", Lock: "data/records.sqlite.lock",
			State: "data/records.sqlite.owner.json", Socket: "data/records.sqlite.sock", Spool: "data/records.sqlite.spool"}))
	})

	It("moves a socket path that does not fit sun_path into the temp folder, stably", func() {
		long := "/" + strings.Repeat("d", 120) + "/records.sqlite"
		p := PathsFor(long)
		Expect(len(p.Socket)).To(BeNumerically("<=", maxSocketPath+len(os.TempDir())))
		Expect(p.Socket).To(HavePrefix(filepath.Join(os.TempDir(), "recordstore-")))
		Expect(p.Socket).To(HaveSuffix(".sock"))
		Expect(PathsFor(long).Socket).To(Equal(p.Socket))
		Expect(PathsFor(long + "2").Socket).NotTo(Equal(p.Socket))
	})
})

var _ = Describe("state file", func() {
	It("round-trips with mode 0600 and reports its absence", func() {
		path := filepath.Join(GinkgoT().TempDir(), "s.owner.json")
		_, err := ReadState(path)
		Expect(err).To(MatchError(ErrNoState))
		st := State{Instance: "0123456789abcdef", PID: 42, Host: "h", Phase: PhaseReady, Epoch: 3,
			StartedAt: time.Unix(100, 0).UTC(), Spool: SpoolInfo{Dir: "x", ManifestFormat: 1, Formats: []string{"ndjson"}}}
		Expect(WriteState(path, st)).To(Succeed())
		got, err := ReadState(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(st))
		fi, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
	})

	It("names a corrupt state file", func() {
		path := filepath.Join(GinkgoT().TempDir(), "s.owner.json")
		Expect(os.WriteFile(path, []byte("{torn"), 0o600)).To(Succeed())
		_, err := ReadState(path)
		Expect(err).To(MatchError(ContainSubstring("decode state")))
	})

	It("is removed only by the instance that wrote it", func() {
		path := filepath.Join(GinkgoT().TempDir(), "s.owner.json")
		Expect(WriteState(path, State{Instance: "aaaa"})).To(Succeed())
		Expect(removeStateIfOurs(path, "bbbb")).To(Succeed())
		Expect(path).To(BeAnExistingFile())
		Expect(removeStateIfOurs(path, "aaaa")).To(Succeed())
		Expect(path).NotTo(BeAnExistingFile())
	})
})

var _ = Describe("Exclusive", func() {
	It("refuses a second holder with the first holder's state", func() {
		dir := GinkgoT().TempDir()
		lock, state := filepath.Join(dir, "x.lock"), filepath.Join(dir, "x.owner.json")
		Expect(WriteState(state, State{Instance: "aaaa", PID: 77, Host: "h"})).To(Succeed())
		release, err := Exclusive(lock, state)
		Expect(err).NotTo(HaveOccurred())
		_, err = Exclusive(lock, state)
		Expect(err).To(MatchError(ErrLocked))
		var le *LockedError
		Expect(errors.As(err, &le)).To(BeTrue())
		Expect(le.Owner).NotTo(BeNil())
		Expect(le.Owner.PID).To(Equal(77))
		Expect(err.Error()).To(ContainSubstring("pid 77"))
		Expect(release()).To(Succeed())
		release, err = Exclusive(lock, state)
		Expect(err).NotTo(HaveOccurred())
		Expect(release()).To(Succeed())
	})
})

// fakeHandler answers control calls from fields.
type fakeHandler struct {
	status Status
}

func (f *fakeHandler) controlStatus(context.Context) Status { return f.status }
func (f *fakeHandler) controlIngest(_ context.Context, ids []string, wait bool) []IngestOutcome {
	out := make([]IngestOutcome, len(ids))
	for i, id := range ids {
		out[i] = IngestOutcome{ID: id, Done: wait}
	}
	return out
}
func (f *fakeHandler) controlSpool(context.Context) (SpoolListing, error) {
	return SpoolListing{Incoming: []BatchRef{{Batch: "b1"}}}, nil
}

func (f *fakeHandler) controlReplicated(context.Context) (bool, error) {
	return true, ErrNotReplicating
}

var _ = Describe("control socket", func() {
	var path string
	var h *fakeHandler
	BeforeEach(func() {
		path = filepath.Join(GinkgoT().TempDir(), "s.sock")
		h = &fakeHandler{status: Status{State: State{Instance: "me", Phase: PhaseReady}, Role: RoleOwner}}
	})

	It("answers status, ingest and spool, with mode 0600, and unlinks its own socket", func(ctx SpecContext) {
		srv, err := listenControl(path, h, discard())
		Expect(err).NotTo(HaveOccurred())
		fi, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))

		resp, err := Call(ctx, path, Request{Action: ActionStatus})
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Status.Instance).To(Equal("me"))
		Expect(resp.Status.Role).To(Equal(RoleOwner))

		resp, err = Call(ctx, path, Request{Action: ActionIngest, IDs: []string{"a", "b"}, Wait: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Results).To(Equal([]IngestOutcome{{ID: "a", Done: true}, {ID: "b", Done: true}}))

		resp, err = Call(ctx, path, Request{Action: ActionSpool})
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Spool.Incoming).To(HaveLen(1))

		_, err = Call(ctx, path, Request{Action: "reboot"})
		Expect(err).To(MatchError(ErrProtocol))
		Expect(err.Error()).To(ContainSubstring(`unknown action "reboot"`))

		srv.close("me")
		Expect(path).NotTo(BeAnExistingFile())
		_, err = Call(ctx, path, Request{Action: ActionStatus})
		Expect(err).To(HaveOccurred())
	})

	It("leaves the socket file when it no longer answers as this instance", func() {
		srv, err := listenControl(path, h, discard())
		Expect(err).NotTo(HaveOccurred())
		srv.close("someone-else")
		Expect(path).To(BeAnExistingFile())
	})

	It("refuses another protocol version and malformed requests", func(ctx SpecContext) {
		srv, err := listenControl(path, h, discard())
		Expect(err).NotTo(HaveOccurred())
		defer srv.close("me")
		for _, raw := range []string{`{"protocol":2,"action":"status"}`, `{"protocol":`} {
			c, err := net.Dial("unix", path)
			Expect(err).NotTo(HaveOccurred())
			_, err = c.Write([]byte(raw + "\n"))
			Expect(err).NotTo(HaveOccurred())
			if uc, ok := c.(*net.UnixConn); ok {
				_ = uc.CloseWrite()
			}
			var resp Response
			Expect(json.NewDecoder(c).Decode(&resp)).To(Succeed())
			Expect(resp.OK).To(BeFalse())
			Expect(resp.Error).NotTo(BeEmpty())
			_ = c.Close()
		}
	})

	It("keeps a connection the client asks to keep, and serves its next requests on it", func(ctx SpecContext) {
		srv, err := listenControl(path, h, discard())
		Expect(err).NotTo(HaveOccurred())
		var p connPool
		defer p.close()
		resp, sent, err := p.callKept(ctx, path, Request{Action: ActionStatus}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(sent).To(BeTrue())
		Expect(resp.Keep).To(BeTrue())
		Expect(p.idle).To(HaveLen(1))
		kept := p.idle[0]
		for range 3 {
			resp, _, err = p.callKept(ctx, path, Request{Action: ActionIngest, IDs: []string{"a"}}, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.Results).To(HaveLen(1))
			Expect(p.idle).To(Equal([]*keptConn{kept}), "the same connection carried it")
		}
		_, _, err = p.callKept(ctx, path, Request{Action: "reboot"}, nil)
		Expect(err).To(MatchError(ContainSubstring(`unknown action "reboot"`)))
		Expect(p.idle).To(Equal([]*keptConn{kept}), "an error answer keeps it too")

		// The owner closes (its kept connections with it) and another
		// takes the path: the dead connection is dropped before anything
		// of the request reached anyone, and the request goes on a new one.
		srv.close("me")
		h2 := &fakeHandler{status: Status{State: State{Instance: "next"}, Role: RoleOwner}}
		srv2, err := listenControl(path, h2, discard())
		Expect(err).NotTo(HaveOccurred())
		defer srv2.close("next")
		resp, sent, err = p.callKept(ctx, path, Request{Action: ActionStatus}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(sent).To(BeTrue())
		Expect(resp.Status.Instance).To(Equal("next"))
		Expect(p.idle).To(HaveLen(1))
		Expect(p.idle[0]).NotTo(BeIdenticalTo(kept))
	})

	It("closes a kept connection once the server closes, without waiting for the client", func(ctx SpecContext) {
		srv, err := listenControl(path, h, discard())
		Expect(err).NotTo(HaveOccurred())
		var p connPool
		defer p.close()
		_, _, err = p.callKept(ctx, path, Request{Action: ActionStatus}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.idle).To(HaveLen(1))
		closed := make(chan struct{})
		go func() { srv.close("me"); close(closed) }()
		Eventually(closed, 5*time.Second).Should(BeClosed(), "the idle kept connection does not hold the close")
		buf := make([]byte, 1)
		_ = p.idle[0].c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = p.idle[0].c.Read(buf)
		Expect(err).To(MatchError(io.EOF), "the server closed its end")
	})

	It("does not keep a connection the server does not offer to keep (an owner that predates Keep)", func(ctx SpecContext) {
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		Expect(err).NotTo(HaveOccurred())
		defer ln.Close()
		served := make(chan Request, 2)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				var req Request
				_ = json.NewDecoder(c).Decode(&req)
				served <- req
				_ = json.NewEncoder(c).Encode(map[string]any{"protocol": 1, "ok": true})
				_ = c.Close()
			}
		}()
		var p connPool
		defer p.close()
		for range 2 {
			_, sent, err := p.callKept(ctx, path, Request{Action: ActionStatus}, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(sent).To(BeTrue())
			Expect(p.idle).To(BeEmpty())
			var req Request
			Eventually(served).Should(Receive(&req))
			Expect(req.Keep).To(BeTrue(), "asked, and ignored by that owner")
		}
	})

	It("bounds each request on a kept connection, not the connection", func(ctx SpecContext) {
		srv, err := listenControl(path, h, discard())
		Expect(err).NotTo(HaveOccurred())
		defer srv.close("me")
		c, err := net.Dial("unix", path)
		Expect(err).NotTo(HaveOccurred())
		defer c.Close()
		dec := json.NewDecoder(c)
		// More than maxRequest in all, each request well within it.
		req := `{"protocol":1,"action":"status","keep":true,"ids":["` + strings.Repeat("x", maxRequest/4) + `"]}` + "\n"
		for range 6 {
			_, err = c.Write([]byte(req))
			Expect(err).NotTo(HaveOccurred())
			var resp Response
			Expect(dec.Decode(&resp)).To(Succeed())
			Expect(resp.OK && resp.Keep).To(BeTrue())
		}
		// One request over the bound ends the connection (its answer may
		// be lost to the reset of a socket closed with unread data).
		big := `{"protocol":1,"action":"status","keep":true,"ids":["` + strings.Repeat("x", maxRequest) + `"]}` + "\n"
		go func() { _, _ = c.Write([]byte(big)) }()
		var resp Response
		if err := dec.Decode(&resp); err == nil {
			Expect(resp.OK).To(BeFalse())
			Expect(resp.Error).To(ContainSubstring("larger than"))
			Expect(resp.Keep).To(BeFalse())
			Expect(dec.Decode(&resp)).NotTo(Succeed(), "closed after it")
		}
		_, err = Call(ctx, path, Request{Action: ActionStatus})
		Expect(err).NotTo(HaveOccurred(), "the server goes on")
	})

	It("replaces a stale socket file but never a live one", func() {
		// A stale socket: bound, then its listener closed without unlinking.
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		Expect(err).NotTo(HaveOccurred())
		ln.SetUnlinkOnClose(false)
		Expect(ln.Close()).To(Succeed())
		Expect(path).To(BeAnExistingFile())
		srv, err := listenControl(path, h, discard())
		Expect(err).NotTo(HaveOccurred())
		_, err = listenControl(path, h, discard())
		Expect(err).To(MatchError(ContainSubstring("live process")))
		srv.close("me")
	})
})
