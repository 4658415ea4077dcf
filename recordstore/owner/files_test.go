package owner

import (
	"context"
	"encoding/json"
	"errors"
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
