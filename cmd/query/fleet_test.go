// query fleet list, provision, backup, import, delete and stats, run as the
// real binary: JSON on stdout, "query: <code>: <message>" and exit 1 on a
// failure, exit 2 on a malformed command line.

package main_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("query fleet", func() {
	var dir, root string

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		root = filepath.Join(dir, "fleet")
		Expect(os.Mkdir(root, 0o700)).To(Succeed())
	})
	fleetRun := func(args ...string) result {
		return runQuery(dir, nil, "", append([]string{"fleet", args[0], "--root", root, "--kinds", kindsFile()}, args[1:]...)...)
	}
	ok := func(args ...string) []map[string]any {
		r := fleetRun(args...)
		ExpectWithOffset(1, r.code).To(Equal(0), r.stderr)
		return decodeLines(r.stdout)
	}

	It("provisions, lists, backs up, deletes and imports a store", func() {
		out := ok("provision", "tenant:acme")
		Expect(out).To(HaveLen(1))
		Expect(out[0]).To(HaveKeyWithValue("key", "tenant:acme"))
		rel := out[0]["path"].(string)
		Expect(rel).To(MatchRegexp(`^[0-9]{3}/acme\.db$`), "relative to the root, as list prints it")
		path := filepath.Join(root, filepath.FromSlash(rel))
		ok("provision", "tenant/beta")

		list := ok("list", "--open")
		Expect(list).To(HaveLen(2))
		var keys []string
		for _, e := range list {
			keys = append(keys, e["key"].(string))
		}
		Expect(keys).To(ConsistOf("tenant:acme", "tenant:beta"))

		stats := ok("stats")
		Expect(stats[0]).To(HaveKeyWithValue("stores", num("2")))

		backup := filepath.Join(dir, "acme.bak")
		ok("backup", "tenant:acme", backup)
		Expect(backup).To(BeAnExistingFile())
		Expect(ok("delete", "tenant:acme", "--force")).To(ConsistOf(HaveKeyWithValue("path", rel)))
		Expect(path).NotTo(BeAnExistingFile())
		Expect(ok("import", "tenant:acme", backup)).To(ConsistOf(HaveKeyWithValue("path", rel)))
		Expect(path).To(BeAnExistingFile())
		Expect(ok("list")).To(HaveLen(2))
	})

	It("lists from its identity index, and tells a store file replaced at its path by another's", func() {
		acme := filepath.Join(root, filepath.FromSlash(ok("provision", "tenant:acme")[0]["path"].(string)))
		beta := filepath.Join(root, filepath.FromSlash(ok("provision", "tenant:beta")[0]["path"].(string)))
		first := fleetRun("list")
		Expect(first.code).To(Equal(0), first.stderr)
		index := filepath.Join(root, ".fleet-index")
		fi, err := os.Lstat(index)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		again := fleetRun("list")
		Expect(again.code).To(Equal(0), again.stderr)
		Expect(again.stdout).To(Equal(first.stdout))
		Expect(again.stderr).To(BeEmpty(), "the index is no stray")

		// beta's file, renamed over acme's (same size), its mtime set to acme's
		old, err := os.Lstat(acme)
		Expect(err).NotTo(HaveOccurred())
		data, err := os.ReadFile(beta)
		Expect(err).NotTo(HaveOccurred())
		Expect(int64(len(data))).To(Equal(old.Size()))
		Expect(os.WriteFile(acme+".new", data, 0o600)).To(Succeed())
		Expect(os.Chtimes(acme+".new", old.ModTime(), old.ModTime())).To(Succeed())
		Expect(os.Rename(acme+".new", acme)).To(Succeed())
		r := fleetRun("list")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(decodeLines(r.stdout)).To(ConsistOf(HaveKeyWithValue("key", "tenant:beta")))
		Expect(r.stderr).To(ContainSubstring("misplaced: records tenant:beta"))

		Expect(os.WriteFile(index, []byte("not an index"), 0o600)).To(Succeed())
		r = fleetRun("stats")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(decodeLines(r.stdout)[0]).To(HaveKeyWithValue("stores", num("1")))
		Expect(r.stderr).To(ContainSubstring("fleet index ignored"))
		r = fleetRun("stats")
		Expect(r.stderr).To(BeEmpty(), "rebuilt by the stats before")
	})

	DescribeTable("fails with one line and exit 1, changing nothing",
		func(code string, setup func(), args ...string) {
			if setup != nil {
				setup()
			}
			before := treeOf(root)
			r := fleetRun(args...)
			Expect(r.code).To(Equal(1), r.stderr)
			Expect(r.stdout).To(BeEmpty())
			Expect(r.stderr).To(HavePrefix("query: " + code + ": "))
			Expect(strings.Count(r.stderr, "\n")).To(Equal(1))
			msg := strings.TrimPrefix(r.stderr, "query: "+code+": ")
			Expect(msg).NotTo(HavePrefix(code), "the message does not repeat its code")
			Expect(msg).NotTo(HavePrefix(strings.ReplaceAll(code, "_", " ")), "the message does not repeat its code")
			Expect(treeOf(root)).To(Equal(before))
		},
		Entry("a refused tenant id", "invalid", nil, "provision", "tenant:Acme"),
		Entry("a key of the other mode", "invalid", nil, "provision", "slot:1"),
		Entry("a key that is no key", "invalid", nil, "provision", "acme"),
		Entry("a second provision", "exists", func() { ok("provision", "tenant:acme") }, "provision", "tenant:acme"),
		Entry("a delete of a missing store", "not_found", nil, "delete", "tenant:ghost", "--force"),
		Entry("a backup of a missing store", "not_found", nil, "backup", "tenant:ghost", "/tmp/never-written.db"),
		Entry("an import of a file that is no store", "invalid_source", func() {
			Expect(os.WriteFile(filepath.Join(dir, "junk.db"), []byte("junk"), 0o600)).To(Succeed())
		}, "import", "tenant:acme", "junk.db"),
		Entry("a template naming an engine file of another template", "invalid", func() { ok("provision", "tenant:acme") },
			"provision", "tenant:acme", "--path", "{bucket}/{tenant}.db.lock"),
		Entry("a template naming an engine folder of another template", "invalid", func() { ok("provision", "tenant:acme") },
			"list", "--path", "{bucket}/{tenant}.db.spool"),
		Entry("a backup into a folder that does not exist", "not_found", func() { ok("provision", "tenant:acme") },
			"backup", "tenant:acme", "no-such-folder/acme.bak"),
		Entry("a backup to an empty DEST", "invalid", func() { ok("provision", "tenant:acme") },
			"backup", "tenant:acme", ""),
		Entry("a backup over a file", "exists", func() {
			ok("provision", "tenant:acme")
			Expect(os.WriteFile(filepath.Join(dir, "taken.bak"), nil, 0o600)).To(Succeed())
		}, "backup", "tenant:acme", "taken.bak"),
		Entry("a backup into the fleet root", "invalid", func() { ok("provision", "tenant:acme") },
			"backup", "tenant:acme", "fleet/acme.bak"),
		Entry("a backup into a bucket folder of the fleet root", "invalid", func() { ok("provision", "tenant:acme") },
			"backup", "tenant:acme", "fleet/198/acme.bak"),
		Entry("a backup of a misplaced store", "misplaced", func() {
			acme := filepath.Join(root, filepath.FromSlash(ok("provision", "tenant:acme")[0]["path"].(string)))
			beta := filepath.Join(root, filepath.FromSlash(ok("provision", "tenant:beta")[0]["path"].(string)))
			data, err := os.ReadFile(acme)
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(beta, data, 0o600)).To(Succeed())
		}, "backup", "tenant:beta", "beta.bak"),
	)

	It("adopts a single store not made by a fleet with import --adopt, and refuses it without", func() {
		single := newStore()
		single.ok("", "kind", "apply", kindsFile())
		single.ok(`{"msg":"kept"}`+"\n", "append", "--stream", "e1", "--kind", "events")
		live, err := filepath.Glob(filepath.Join(single.dir, "v1", "*"))
		Expect(err).NotTo(HaveOccurred())
		live = slicesDelete(live, func(p string) bool { return strings.HasSuffix(p, "-wal") || strings.HasSuffix(p, "-shm") })
		Expect(live).To(HaveLen(1))
		srcBefore, err := os.ReadFile(live[0])
		Expect(err).NotTo(HaveOccurred())

		r := fleetRun("import", "tenant:acme", live[0])
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: invalid_source: "))
		Expect(r.stderr).To(ContainSubstring("records no fleet key"))

		out := ok("import", "tenant:acme", live[0], "--adopt")
		Expect(out).To(ConsistOf(HaveKeyWithValue("key", "tenant:acme")))
		Expect(ok("list", "--open")).To(ConsistOf(HaveKeyWithValue("key", "tenant:acme")))
		got := runQuery(dir, nil, `{"msg":"added"}`+"\n", "fleet", "append", "tenant:acme", "--root", root, "--stream", "e1", "--kind", "events")
		Expect(got.code).To(Equal(0), got.stderr)
		Expect(decodeLines(got.stdout)).To(ConsistOf(HaveKeyWithValue("from", num("2"))), "the adopted store's rows are kept")
		srcAfter, err := os.ReadFile(live[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(srcAfter).To(Equal(srcBefore), "the source is unchanged")

		// A store of another key is never given this one.
		r = fleetRun("import", "tenant:beta", filepath.Join(root, filepath.FromSlash(out[0]["path"].(string))), "--adopt")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: invalid_source: "))
		Expect(r.stderr).To(ContainSubstring("records key tenant:acme"))
	})

	It("pages through the stores by key with list --limit and --after", func() {
		ids := []string{"e", "a", "d", "c", "b"}
		for _, id := range ids {
			ok("provision", "tenant:"+id)
		}
		var got []string
		after, pages := "", 0
		for ; pages < 10; pages++ {
			args := []string{"list", "--limit", "2"}
			if after != "" {
				args = append(args, "--after", after)
			}
			lines := ok(args...)
			after = ""
			for _, l := range lines {
				if next, isNext := l["next"]; isNext {
					Expect(l).To(HaveLen(1))
					after = next.(string)
					continue
				}
				Expect(l).To(HaveKey("path"))
				got = append(got, l["key"].(string))
			}
			if after == "" {
				break
			}
		}
		Expect(got).To(Equal([]string{"tenant:a", "tenant:b", "tenant:c", "tenant:d", "tenant:e"}))
		Expect(pages).To(Equal(2), "pages of 2, 2 and 1")

		r := fleetRun("list", "--limit", "0")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: invalid: "))
		r = fleetRun("list", "--open", "--limit", "2")
		Expect(r.code).To(Equal(2), r.stderr)
	})

	It("works on a slot fleet with its own keys and template", func() {
		r := runQuery(dir, nil, "", "fleet", "provision", "slot:42", "--root", root, "--mode", "slot")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(filepath.Join(root, "000", "slot-00042.db")).To(BeAnExistingFile())
		r = runQuery(dir, nil, "", "fleet", "list", "--root", root, "--mode", "slot")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(decodeLines(r.stdout)).To(ConsistOf(HaveKeyWithValue("key", "slot:00042")))
		r = runQuery(dir, nil, "", "fleet", "provision", "tenant:acme", "--root", root, "--mode", "slot")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: invalid: "))
	})

	It("lists every store with --open and exits 1 with unreadable when one cannot be read", func() {
		ok("provision", "tenant:acme")
		path := filepath.Join(root, ok("provision", "tenant:beta")[0]["path"].(string))
		Expect(os.WriteFile(path, []byte(strings.Repeat("x", 8192)), 0o600)).To(Succeed())
		r := fleetRun("list", "--open")
		Expect(r.code).To(Equal(1))
		Expect(decodeLines(r.stdout)).To(HaveLen(2))
		Expect(r.stderr).To(ContainSubstring("query: unreadable: 1 of 2 stores cannot be read: tenant:beta\n"), "the message does not repeat its code")
	})

	It("refuses a root that does not exist, creating nothing", func() {
		missing := filepath.Join(dir, "nope")
		r := runQuery(dir, nil, "", "fleet", "list", "--root", missing)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: not_found: "))
		Expect(missing).NotTo(BeADirectory())
	})

	DescribeTable("is a usage error (exit 2) when the command line is wrong",
		func(args ...string) {
			r := runQuery(dir, nil, "", args...)
			Expect(r.code).To(Equal(2), r.stderr)
			Expect(r.stderr).To(HavePrefix("query: usage: "))
		},
		Entry("no --root", "fleet", "list"),
		Entry("delete without --force", "fleet", "delete", "tenant:acme", "--root", "fleet"),
		Entry("a bad --mode", "fleet", "list", "--root", "fleet", "--mode", "user"),
		Entry("a missing key", "fleet", "provision", "--root", "fleet"),
	)
})

// treeOf lists every path under dir.
func treeOf(dir string) []string {
	var out []string
	_ = filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// slicesDelete returns s without the elements del says yes to.
func slicesDelete(s []string, del func(string) bool) []string {
	var out []string
	for _, v := range s {
		if !del(v) {
			out = append(out, v)
		}
	}
	return out
}
