// The name table of the platforms whose statfs gives a type name.

package owner

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("file-system names", func() {
	DescribeTable("refuses network and user-space file systems by name",
		func(name string, remote bool) {
			Expect(classifyName(name)).To(Equal(remote))
		},
		Entry("apfs (macOS)", "apfs", false),
		Entry("hfs (macOS)", "hfs", false),
		Entry("ufs (the BSDs)", "ufs", false),
		Entry("zfs", "zfs", false),
		Entry("ffs (NetBSD, OpenBSD)", "ffs", false),
		Entry("tmpfs", "tmpfs", false),
		Entry("NTFS (Windows, local)", "NTFS", false),
		Entry("nfs", "nfs", true),
		Entry("smbfs (macOS, FreeBSD)", "smbfs", true),
		Entry("afpfs (macOS)", "afpfs", true),
		Entry("webdav (macOS)", "webdav", true),
		Entry("cifs", "cifs", true),
		Entry("fusefs (FreeBSD)", "fusefs", true),
		Entry("macfuse (macOS)", "macfuse", true),
		Entry("fuse.sshfs", "fuse.sshfs", true),
		Entry("puffs (NetBSD user-space)", "puffs", true),
		Entry("virtiofs", "virtiofs", true),
		Entry("9p", "9p", true),
		Entry("ceph", "ceph", true),
		Entry("NFS in capitals", "NFS", true),
	)

	It("reads a C string field up to its first NUL", func() {
		Expect(cString([]int8{'z', 'f', 's', 0, 'x'})).To(Equal("zfs"))
		Expect(cString([]byte("apfs\x00\x00"))).To(Equal("apfs"))
		Expect(cString([]byte("sixteen-bytes-ok"))).To(Equal("sixteen-bytes-ok"), "a full field has no NUL")
	})
})
