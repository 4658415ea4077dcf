//go:build linux

// takeOverSocket, with real processes: a child process listens on the
// store's socket path as a dying owner's process still does, and a
// promoting Store decides whether to remove the socket file.

package owner

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("takeOverSocket (a promotion's socket)", Label("crash"), func() {
	var (
		s    *Store[Target]
		host string
	)
	BeforeEach(func() {
		dir := GinkgoT().TempDir()
		s = &Store[Target]{paths: PathsFor(filepath.Join(dir, "s.db")), log: discard()}
		var err error
		host, err = os.Hostname()
		Expect(err).NotTo(HaveOccurred())
	})

	served := func(path string) bool {
		c, err := net.DialTimeout("unix", path, 200*time.Millisecond)
		if err != nil {
			return false
		}
		pid, ok := peerPID(c)
		_ = c.Close()
		return ok && pid != 0
	}

	It("removes the socket file of the previous owner's process, still listening, so that the new owner binds at once", func() {
		child := startListener(s.paths.Socket)
		Expect(served(s.paths.Socket)).To(BeTrue())
		_, err := listenControl(s.paths.Socket, nil, discard())
		Expect(err).To(MatchError(ContainSubstring("live process")), "without the take-over")

		s.takeOverSocket(State{PID: child.Process.Pid, Host: host, Socket: s.paths.Socket})
		Expect(s.paths.Socket).NotTo(BeAnExistingFile())
		srv, err := listenControl(s.paths.Socket, &fakeHandler{status: Status{State: State{Instance: "new"}, Role: RoleOwner}}, discard())
		Expect(err).NotTo(HaveOccurred())
		defer srv.close("new")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := Call(ctx, s.paths.Socket, Request{Action: ActionStatus})
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Status.Instance).To(Equal("new"), "the path is the new owner's, not the dying one's")
	})

	It("leaves a socket served by any other process than the previous owner's", func() {
		startListener(s.paths.Socket)
		other := startListener(filepath.Join(filepath.Dir(s.paths.Socket), "other.sock"))
		s.takeOverSocket(State{PID: other.Process.Pid, Host: host, Socket: s.paths.Socket})
		Expect(s.paths.Socket).To(BeAnExistingFile())
		Expect(served(s.paths.Socket)).To(BeTrue())
		_, err := listenControl(s.paths.Socket, nil, discard())
		Expect(err).To(MatchError(ContainSubstring("live process")), "listenControl refuses it")
	})

	It("leaves the socket when the previous owner is of another host, another path, this process or unknown", func() {
		child := startListener(s.paths.Socket)
		pid := child.Process.Pid
		for _, prev := range []State{
			{PID: pid, Host: host + "-elsewhere", Socket: s.paths.Socket},
			{PID: pid, Host: host, Socket: s.paths.Socket + ".old"},
			{PID: os.Getpid(), Host: host, Socket: s.paths.Socket},
			{Host: host, Socket: s.paths.Socket},
		} {
			s.takeOverSocket(prev)
			Expect(s.paths.Socket).To(BeAnExistingFile(), "prev %+v", prev)
			Expect(served(s.paths.Socket)).To(BeTrue())
		}
	})

	It("leaves a socket file nobody listens on, for listenControl to replace", func() {
		child := startListener(s.paths.Socket)
		Expect(child.Process.Kill()).To(Succeed())
		_ = child.Wait()
		Expect(s.paths.Socket).To(BeAnExistingFile(), "a killed listener leaves its file")
		s.takeOverSocket(State{PID: child.Process.Pid, Host: host, Socket: s.paths.Socket})
		Expect(s.paths.Socket).To(BeAnExistingFile())
		srv, err := listenControl(s.paths.Socket, &fakeHandler{}, discard())
		Expect(err).NotTo(HaveOccurred())
		srv.close("x")
	})
})
