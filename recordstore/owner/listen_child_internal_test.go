// A child process that only listens on a unix socket: the listener of an
// owner that was killed and is not yet reaped (see takeOverSocket).

package owner

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// listenChildEnv names the socket path a child started by startListener
// listens on (see runListenChild).
const listenChildEnv = "RECORDSTORE_OWNER_LISTEN_CHILD"

// runListenChild, in a child started by startListener, listens on the
// socket path named by listenChildEnv, prints "listening" and accepts
// connections without answering until it is killed, as the listener of
// an owner killed but not yet reaped does. It returns at once in any
// other process.
func runListenChild() {
	path := os.Getenv(listenChildEnv)
	if path == "" {
		return
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	ln.SetUnlinkOnClose(false)
	fmt.Println("listening")
	held := make(chan net.Conn, 64) // open, never answered
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		select {
		case held <- c:
		default: // more than the specs make: let this one go
			_ = c.Close()
		}
	}
}

// startListener starts a child process listening on path (runListenChild)
// and returns it once it listens; it is killed when the spec ends.
func startListener(path string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), listenChildEnv+"="+path)
	out, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	Expect(err).NotTo(HaveOccurred())
	Expect(line).To(Equal("listening\n"))
	return cmd
}
