// The recorder, archive, merge, cache and fleet commands under a folder
// whose name holds every byte a SQLite file URI must escape, run as the
// real binary.

package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("a folder named a #?%b", func() {
	It("holds a worker's recorder, archive (folded), merge, cache and fleet, and nothing is opened beside it", func() {
		dir := GinkgoT().TempDir()
		base := filepath.Join(dir, "a #?%b")
		storage, shared := filepath.Join(base, "storage"), filepath.Join(base, "shared")
		hist := filepath.Join(shared, "history", "c1")
		ok := func(stdin string, args ...string) string {
			r := runQuery(dir, nil, stdin, args...)
			ExpectWithOffset(1, r.code).To(Equal(0), r.stderr)
			return r.stdout
		}
		// sealAs records one event as worker w and renames the sealed file
		// into the window of stamp.
		sealAs := func(w, stamp string) string {
			var out struct{ Sealed string }
			Expect(json.Unmarshal([]byte(ok(`{"event":"task_started","task_id":"`+w+`"}`+"\n", "drakkar", "record",
				"--storage", storage, "--shared", shared, "--name", w, "--cluster", "c1")), &out)).To(Succeed())
			Expect(out.Sealed).To(HavePrefix(hist))
			name := w + "-" + stamp + ".db"
			Expect(os.Rename(out.Sealed+".meta.json", filepath.Join(hist, name+".meta.json"))).To(Succeed())
			Expect(os.Rename(out.Sealed, filepath.Join(hist, name))).To(Succeed())
			return filepath.Join(hist, name)
		}
		type report struct {
			Published []struct {
				Archive string
				Folded  bool
				Events  int
			}
			Failed []any
		}
		archive := func() report {
			var rep report
			Expect(json.Unmarshal([]byte(ok("", "drakkar", "archive", "--shared", shared, "--cluster", "c1",
				"--set", "history.archive.due_after_hours=24", "--set", "history.archive.retention_days=0")), &rep)).To(Succeed())
			Expect(rep.Failed).To(BeEmpty())
			return rep
		}

		a := sealAs("w1", "2026-10-13__08_00_00")
		var m struct {
			Events  int
			Sources []struct{ Status string }
		}
		Expect(json.Unmarshal([]byte(ok("", "drakkar", "merge", "--out", filepath.Join(base, "m.db"), a)), &m)).To(Succeed())
		Expect(m.Events).To(Equal(1))
		Expect(m.Sources[0].Status).To(Equal("merged"))

		first := archive()
		Expect(first.Published).To(HaveLen(1))
		sealAs("w2", "2026-10-13__09_00_00")
		second := archive()
		Expect(second.Published).To(HaveLen(1))
		Expect(second.Published[0].Folded).To(BeTrue())
		Expect(second.Published[0].Events).To(Equal(2))

		ok("", "drakkar", "cache", "set", "--storage", storage, "--name", "w1", "k", `"v"`)
		Expect(ok("", "drakkar", "cache", "get", "--storage", storage, "--name", "w1", "k")).To(ContainSubstring(`"value":"\"v\""`))

		root := filepath.Join(base, "fleet")
		Expect(os.Mkdir(root, 0o700)).To(Succeed())
		ok("", "fleet", "provision", "tenant:acme", "--root", root, "--kinds", kindsFile())
		Expect(ok("", "fleet", "list", "--open", "--root", root, "--kinds", kindsFile())).To(ContainSubstring(`"tenant:acme"`))

		ents, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		Expect(names).To(Equal([]string{"a #?%b"}), "nothing beside the folder")
		ents, err = os.ReadDir(hist)
		Expect(err).NotTo(HaveOccurred())
		Expect(ents).To(HaveLen(1), "only the archive: %v", ents)
		Expect(strings.HasSuffix(ents[0].Name(), ".db.gz")).To(BeTrue())
	})
})
