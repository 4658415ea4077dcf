// The statfs magic table (Linux only).

//go:build linux

package owner

import (
	"errors"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("file-system refusal", func() {
	DescribeTable("classifies statfs magic numbers",
		func(magic int64, name string, remote bool) {
			n, r := classifyMagic(magic)
			Expect(n).To(Equal(name))
			Expect(r).To(Equal(remote))
		},
		Entry("ext4", int64(0xef53), "local", false),
		Entry("tmpfs", int64(0x01021994), "local", false),
		Entry("xfs", int64(0x58465342), "local", false),
		Entry("btrfs", int64(0x9123683e), "local", false),
		Entry("nfs", int64(0x6969), "nfs", true),
		Entry("smb", int64(0x517b), "smb", true),
		Entry("cifs", int64(0xff534d42), "cifs", true),
		Entry("smb2", int64(0xfe534d42), "smb2", true),
		Entry("9p", int64(0x01021997), "9p", true),
		Entry("fuse (and fuse.* subtypes, virtiofs)", int64(0x65735546), "fuse", true),
		Entry("ceph", int64(0x00c36400), "ceph", true),
		Entry("afs", int64(0x5346414f), "afs", true),
		Entry("lustre", int64(0x0bd00bd0), "lustre", true),
		Entry("gfs2", int64(0x01161970), "gfs2", true),
		Entry("ocfs2", int64(0x7461636f), "ocfs2", true),
		Entry("a sign-extended cifs magic", int64(-11317950), "cifs", true),
	)

	It("accepts a local temp folder and fails on a missing one", func() {
		Expect(CheckFileSystem(GinkgoT().TempDir())).To(Succeed())
		err := CheckFileSystem(filepath.Join(GinkgoT().TempDir(), "missing"))
		Expect(err).To(HaveOccurred())
		Expect(errors.Is(err, ErrUnsafeFileSystem)).To(BeFalse())
	})
})
