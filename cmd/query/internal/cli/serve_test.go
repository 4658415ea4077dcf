package cli

import (
	"bytes"
	"log/slog"
	"net"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("serve's warning about an exposed address", func() {
	DescribeTable("warns, naming the address, when serve listens beyond loopback",
		func(addr string, warns bool) {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				Skip("cannot listen on " + addr + " here: " + err.Error())
			}
			defer ln.Close()
			var out bytes.Buffer
			log := slog.New(slog.NewTextHandler(&out, nil))
			warnIfExposed(log, addr, ln.Addr())
			if !warns {
				Expect(out.String()).To(BeEmpty())
				return
			}
			Expect(out.String()).To(ContainSubstring("level=WARN"))
			Expect(out.String()).To(ContainSubstring("non-loopback"))
			Expect(out.String()).To(ContainSubstring("addr=" + addr))
		},
		Entry("IPv4 loopback", "127.0.0.1:0", false),
		Entry("localhost", "localhost:0", false),
		Entry("IPv6 loopback", "[::1]:0", false),
		Entry("IPv4 wildcard", "0.0.0.0:0", true),
		Entry("port alone", ":0", true),
		Entry("IPv6 wildcard", "[::]:0", true),
	)
})
