// query fleet append, run as the real binary: rows into a fleet store,
// applied by this process when nobody owns the store, through its spool
// when query serve --fleet does; read back through serve --fleet.

package main_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("query fleet append", func() {
	var dir, root string

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		root = filepath.Join(dir, "fleet")
		Expect(os.Mkdir(root, 0o700)).To(Succeed())
	})
	fleetRun := func(stdin string, args ...string) result {
		return runQuery(dir, nil, stdin, append([]string{"fleet", args[0], "--root", root, "--kinds", kindsFile()}, args[1:]...)...)
	}
	ok := func(stdin string, args ...string) map[string]any {
		r := fleetRun(stdin, args...)
		ExpectWithOffset(1, r.code).To(Equal(0), r.stderr)
		out := decodeLines(r.stdout)
		ExpectWithOffset(1, out).To(HaveLen(1))
		return out[0]
	}

	It("appends as the owner when nobody owns the store, also while query serve --fleet reads it (a read elects nobody)", func() {
		ok("", "provision", "tenant:acme")
		out := ok(tenantRows("acme", 2), "append", "tenant:acme", "--stream", "e1", "--kind", "events")
		Expect(out).To(HaveKeyWithValue("role", "owner"))
		Expect(out).To(HaveKeyWithValue("appended", num("2")))
		Expect(out).To(HaveKeyWithValue("from", num("1")))
		Expect(out).To(HaveKeyWithValue("to", num("2")))

		_, base := startFleetServe(dir, root)
		rows := base + "/api/v1/tenants/acme/streams/e1/rows"
		status, _, body := get(rows) // serve opens the store to read it: its election is deferred
		Expect(status).To(Equal(200), body)
		Expect(body).To(Equal(scanOf("acme", 2)))

		out = ok(`{"msg":"acme-3"}`+"\n", "append", "tenant/acme", "--stream", "e1", "--kind", "events")
		Expect(out).To(HaveKeyWithValue("role", "owner"))
		Expect(out).To(HaveKeyWithValue("from", num("3")))
		_, _, body = get(rows)
		Expect(body).To(Equal(scanOf("acme", 3)), "serve reads what the append wrote")
	})

	It("appends a file in batches with --batch-rows, as query append does", func() {
		ok("", "provision", "tenant:acme")
		src := writeFile(dir, "rows.ndjson", tenantRows("acme", 5))
		out := ok("", "append", "tenant:acme", "--stream", "e1", "--kind", "events", "--batch-rows", "2", src)
		Expect(out).To(HaveKeyWithValue("batches", num("3")))
		Expect(out).To(HaveKeyWithValue("appended", num("5")))
		Expect(out).To(HaveKeyWithValue("to", num("5")))
	})

	It("creates a slot's store on its first append, with the kinds of --kinds", func() {
		r := runQuery(dir, nil, tenantRows("s", 1), "fleet", "append", "slot:42", "--root", root, "--mode", "slot",
			"--kinds", kindsFile(), "--stream", "e1", "--kind", "events")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(decodeLines(r.stdout)).To(ConsistOf(HaveKeyWithValue("appended", num("1"))))
		Expect(filepath.Join(root, "000", "slot-00042.db")).To(BeARegularFile())
	})

	It("appends nothing when a row does not fit the kind", func() {
		ok("", "provision", "tenant:acme")
		r := fleetRun(tenantRows("acme", 2)+`{"msg":7}`+"\n", "append", "tenant:acme", "--stream", "e1", "--kind", "events")
		Expect(r.code).To(Equal(1), r.stderr)
		Expect(r.stderr).To(HavePrefix("query: invalid: "))
		Expect(r.stderr).To(ContainSubstring("line 3"))
		out := ok(tenantRows("acme", 1), "append", "tenant:acme", "--stream", "e1", "--kind", "events")
		Expect(out).To(HaveKeyWithValue("from", num("1")))
	})

	DescribeTable("fails with one line and exit 1, creating nothing",
		func(code string, setup func(), args ...string) {
			if setup != nil {
				setup()
			}
			before := treeOf(root)
			r := fleetRun(tenantRows("x", 1), append([]string{"append"}, args...)...)
			Expect(r.code).To(Equal(1), r.stderr)
			Expect(r.stdout).To(BeEmpty())
			Expect(r.stderr).To(HavePrefix("query: " + code + ": "))
			Expect(strings.Count(r.stderr, "\n")).To(Equal(1))
			Expect(treeOf(root)).To(Equal(before))
		},
		Entry("a tenant without a store", "not_found", nil, "tenant:ghost", "--stream", "e1", "--kind", "events"),
		Entry("a refused tenant id", "invalid", nil, "tenant:Acme", "--stream", "e1", "--kind", "events"),
		Entry("a key of the other mode", "invalid", nil, "slot:1", "--stream", "e1", "--kind", "events"),
		Entry("a bad stream id", "invalid", nil, "tenant:acme", "--stream", "../e1", "--kind", "events"),
	)

	It("refuses a file recording another key before its owner election, writing nothing to it", func() {
		acme := filepath.Join(root, ok("", "provision", "tenant:acme")["path"].(string))
		beta := filepath.Join(root, ok("", "provision", "tenant:beta")["path"].(string))
		data, err := os.ReadFile(acme)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(beta, data, 0o600)).To(Succeed())
		r := fleetRun(tenantRows("x", 1), "append", "tenant:beta", "--stream", "e1", "--kind", "events")
		Expect(r.code).To(Equal(1), r.stderr)
		Expect(r.stderr).To(HavePrefix("query: misplaced: "))
		after, err := os.ReadFile(beta)
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(Equal(data))
		for _, engineFile := range []string{".lock", ".owner.json", ".spool"} {
			Expect(beta + engineFile).NotTo(BeAnExistingFile())
		}
	})

	It("fails with read_only naming the folder when the user cannot write the store's folder, changing nothing", func() {
		if os.Geteuid() != 0 {
			Skip("runs the binary as user nobody, which needs root")
		}
		rel := ok("", "provision", "tenant:acme")["path"].(string)
		bucketDir := filepath.Dir(filepath.Join(root, rel))
		// Everyone may read the fleet; only root may write its folders.
		bin := filepath.Join(dir, "query")
		data, err := os.ReadFile(queryBin)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(bin, data, 0o755)).To(Succeed())
		Expect(filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if fi.IsDir() {
				return os.Chmod(p, 0o755)
			}
			return os.Chmod(p, fi.Mode().Perm()|0o444)
		})).To(Succeed())
		for _, up := range []string{filepath.Dir(dir)} {
			fi, err := os.Stat(up)
			Expect(err).NotTo(HaveOccurred())
			if fi.Mode().Perm()&0o001 == 0 {
				Skip("user nobody cannot reach " + up)
			}
		}
		before := treeOf(root)
		cmd := exec.Command(bin, "fleet", "append", "tenant:acme", "--root", root, "--stream", "e1", "--kind", "events")
		cmd.Dir = dir
		cmd.Env = withoutStoreEnv()
		cmd.Stdin = strings.NewReader(tenantRows("acme", 1))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err = cmd.Run()
		var exit *exec.ExitError
		Expect(errors.As(err, &exit)).To(BeTrue(), "%v: %s", err, stderr.String())
		Expect(exit.ExitCode()).To(Equal(1), stderr.String())
		Expect(stderr.String()).To(HavePrefix("query: read_only: folder "+bucketDir+" cannot be written"), stderr.String())
		Expect(strings.Count(stderr.String(), "\n")).To(Equal(1))
		Expect(treeOf(root)).To(Equal(before))
	})

	DescribeTable("is a usage error (exit 2) when the command line is wrong",
		func(args ...string) {
			r := runQuery(dir, nil, "", append([]string{"fleet", "append", "--root", root}, args...)...)
			Expect(r.code).To(Equal(2), r.stderr)
			Expect(r.stderr).To(HavePrefix("query: usage: "))
		},
		Entry("no key", "--stream", "e1", "--kind", "events"),
		Entry("no --stream", "tenant:acme", "--kind", "events"),
		Entry("a negative --batch-rows", "tenant:acme", "--stream", "e1", "--kind", "events", "--batch-rows", "-1"),
		Entry("--batch-rows with --no-wait", "tenant:acme", "--stream", "e1", "--kind", "events", "--batch-rows", "2", "--no-wait"),
	)
})
