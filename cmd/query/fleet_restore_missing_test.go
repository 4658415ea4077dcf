// query fleet --restore-missing, run as the real binary against the S3 test
// server: a tenant whose file is lost comes back from its replica, under
// its lease, at its first open.

package main_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstoretest/s3test"
)

var _ = Describe("query fleet --restore-missing", func() {
	It("restores a tenant whose file is missing from its replica before its first open, and without it the tenant stays missing", func() {
		srv, err := s3test.Start("records")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(srv.Kill)
		url := srv.URL("fleet")
		dir := GinkgoT().TempDir()
		root := filepath.Join(dir, "fleet")
		Expect(os.Mkdir(root, 0o700)).To(Succeed())
		run := func(stdin, verb string, args ...string) result {
			return runQuery(dir, srv.Env(), stdin, append([]string{"--replica", url, "--lease", "s3",
				"fleet", verb, "--root", root, "--kinds", kindsFile()}, args...)...)
		}
		ok := func(stdin, verb string, args ...string) map[string]any {
			r := run(stdin, verb, args...)
			ExpectWithOffset(1, r.code).To(Equal(0), r.stderr)
			out := decodeLines(r.stdout)
			ExpectWithOffset(1, out).To(HaveLen(1))
			return out[0]
		}

		rel := ok("", "provision", "tenant:acme")["path"].(string)
		out := ok(tenantRows("acme", 2), "append", "tenant:acme", "--stream", "e1", "--kind", "events")
		Expect(out).To(HaveKeyWithValue("to", num("2")))

		// The disk is lost: the store file and everything beside it.
		abs := filepath.Join(root, filepath.FromSlash(rel))
		ents, err := os.ReadDir(filepath.Dir(abs))
		Expect(err).NotTo(HaveOccurred())
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), filepath.Base(abs)) || strings.HasPrefix(e.Name(), "."+filepath.Base(abs)) {
				Expect(os.RemoveAll(filepath.Join(filepath.Dir(abs), e.Name()))).To(Succeed())
			}
		}

		r := run(`{"msg":"acme-3"}`+"\n", "append", "tenant:acme", "--stream", "e1", "--kind", "events")
		Expect(r.code).NotTo(Equal(0))
		Expect(r.stderr).To(ContainSubstring("not_found"))
		Expect(abs).NotTo(BeAnExistingFile())

		out = ok(`{"msg":"acme-3"}`+"\n", "append", "tenant:acme", "--stream", "e1", "--kind", "events", "--restore-missing")
		Expect(out).To(HaveKeyWithValue("role", "owner"))
		Expect(out).To(HaveKeyWithValue("from", num("3")), "rows 1 and 2 came back from the replica")
		Expect(abs).To(BeAnExistingFile())
	})
})
