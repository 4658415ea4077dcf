// query drakkar archive and merge, run as the real binary.

package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("query drakkar archive and merge", func() {
	var dir, storage, shared, hist string

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		storage, shared = filepath.Join(dir, "storage"), filepath.Join(dir, "shared")
		hist = filepath.Join(shared, "history", "c1")
	})

	// sealAs records events as worker w and renames the sealed file (and
	// its meta file) to the start time stamp, e.g. "2026-10-13__08_00_00",
	// placing it in that window.
	sealAs := func(w, stamp string, events ...string) string {
		r := runQuery(dir, nil, strings.Join(events, "\n")+"\n", "drakkar", "record", "--storage", storage,
			"--shared", shared, "--name", w, "--cluster", "c1")
		Expect(r.code).To(Equal(0), r.stderr)
		var out struct{ Sealed string }
		Expect(json.Unmarshal([]byte(r.stdout), &out)).To(Succeed())
		name := w + "-" + stamp + ".db"
		Expect(os.Rename(out.Sealed+".meta.json", filepath.Join(hist, name+".meta.json"))).To(Succeed())
		Expect(os.Rename(out.Sealed, filepath.Join(hist, name))).To(Succeed())
		return filepath.Join(hist, name)
	}

	It("archive runs one pass: the due window is published and its sources deleted, and the report says so", func() {
		a := sealAs("w1", "2026-10-13__08_00_00", `{"event":"task_started","task_id":"a"}`)
		b := sealAs("w-2", "2026-10-13__20_00_00", `{"event":"task_started","task_id":"b"}`, `{"event":"task_completed","task_id":"b"}`)
		r := runQuery(dir, nil, "", "drakkar", "archive", "--shared", shared, "--cluster", "c1", "--name", "ops",
			"--set", "history.archive.due_after_hours=24", "--set", "history.archive.retention_days=0")
		Expect(r.code).To(Equal(0), r.stderr)
		var rep struct {
			Locked, Fenced bool
			Published      []struct {
				Archive string
				Sources int
				Events  int
			}
			Deleted []string
		}
		Expect(json.Unmarshal([]byte(r.stdout), &rep)).To(Succeed())
		Expect(rep.Locked).To(BeTrue())
		Expect(rep.Published).To(HaveLen(1))
		Expect(rep.Published[0].Archive).To(Equal("c1-2026-10-13_00-00__2026-10-14_00-00.db.gz"))
		Expect(rep.Published[0].Sources).To(Equal(2))
		Expect(rep.Published[0].Events).To(Equal(3))
		Expect(rep.Deleted).To(ConsistOf(filepath.Base(a), filepath.Base(b)))
		ents, err := os.ReadDir(hist)
		Expect(err).NotTo(HaveOccurred())
		Expect(ents).To(HaveLen(1))
		Expect(ents[0].Name()).To(Equal(rep.Published[0].Archive))
	})

	It("merge prints each source's outcome and writes the merged file", func() {
		a := sealAs("w1", "2026-10-13__08_00_00", `{"event":"task_started","task_id":"a"}`)
		b := sealAs("w2", "2026-10-13__09_00_00", `{"event":"task_started","task_id":"b"}`)
		junk := filepath.Join(dir, "junk.db")
		Expect(os.WriteFile(junk, []byte("not sqlite"), 0o600)).To(Succeed())
		out := filepath.Join(dir, "m.db")
		r := runQuery(dir, nil, "", "drakkar", "merge", "--out", out, a, b, junk)
		Expect(r.code).To(Equal(0), r.stderr)
		var res struct {
			Out     string
			Events  int
			Cluster string
			Sources []struct{ Path, Status, Error string }
		}
		Expect(json.Unmarshal([]byte(r.stdout), &res)).To(Succeed())
		Expect(res.Out).To(Equal(out))
		Expect(res.Events).To(Equal(2))
		Expect(res.Cluster).To(Equal("c1"))
		Expect(res.Sources).To(HaveLen(3))
		Expect(res.Sources[0].Status).To(Equal("merged"))
		Expect(res.Sources[2].Status).To(Equal("skipped"))
		Expect(res.Sources[2].Error).To(ContainSubstring("not a SQLite database"))
		Expect(res.Sources[2].Error).To(HavePrefix("merge: source unreadable: "), "the code word is not repeated")
		fi, err := os.Stat(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
	})

	DescribeTable("refuses bad input with one line, touching nothing",
		func(args []string, code int, want string) {
			a := sealAs("w1", "2026-10-13__08_00_00", `{"event":"x"}`)
			for i, arg := range args {
				args[i] = strings.NewReplacer("SHARED", shared, "SOURCE", a).Replace(arg)
			}
			r := runQuery(dir, nil, "", append([]string{"drakkar"}, args...)...)
			Expect(r.code).To(Equal(code))
			Expect(strings.Count(r.stderr, "\n")).To(Equal(1), r.stderr)
			Expect(r.stderr).To(ContainSubstring(want))
			Expect(r.stdout).To(BeEmpty())
			Expect(a).To(BeAnExistingFile())
			Expect(filepath.Join(hist, ".archive.lock")).NotTo(BeAnExistingFile())
		},
		Entry("an unknown key", []string{"archive", "--shared", "SHARED", "--cluster", "c1", "--set", "history.archive.nope=1"}, 1, "history.archive.nope"),
		Entry("a window that is not whole minutes", []string{"archive", "--shared", "SHARED", "--cluster", "c1",
			"--set", "ui.recorder.rotation_interval_hours=0.001", "--set", "history.archive.window_hours=0.001"}, 1, "whole number of minutes"),
		Entry("a retention shorter than due + window", []string{"archive", "--shared", "SHARED", "--cluster", "c1",
			"--set", "history.archive.retention_days=1"}, 1, "history.archive.retention_days"),
		Entry("--set without =", []string{"archive", "--shared", "SHARED", "--cluster", "c1", "--set", "x"}, 2, "key=value"),
		Entry("no cluster", []string{"archive", "--shared", "SHARED"}, 2, "cluster"),
		Entry("merge into an existing file", []string{"merge", "--out", "SOURCE", "SOURCE"}, 1, "already exists"),
		Entry("merge without --out", []string{"merge", "SOURCE"}, 2, "out"),
		Entry("a cluster whose archive names cannot fit in 255 bytes", []string{"archive", "--shared", "SHARED", "--cluster", strings.Repeat("c", 193)}, 1, "invalid: archive options: cluster its folder name is 193 bytes, at most 192"),
	)

	It("archive exits 1 and says why when a due window cannot be published, after printing the report", func() {
		a := sealAs("w1", "2026-10-13__08_00_00", `{"event":"task_started","task_id":"a"}`)
		final := filepath.Join(hist, "c1-2026-10-13_00-00__2026-10-14_00-00.db.gz")
		Expect(os.WriteFile(final, []byte("junk written by something else"), 0o600)).To(Succeed())
		r := runQuery(dir, nil, "", "drakkar", "archive", "--shared", shared, "--cluster", "c1",
			"--set", "history.archive.due_after_hours=24", "--set", "history.archive.retention_days=0")
		Expect(r.code).To(Equal(1), r.stdout)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		Expect(lines[len(lines)-1]).To(HavePrefix("query: internal: due windows not archived: 1 window(s), first c1-2026-10-13_00-00__2026-10-14_00-00.db.gz: corrupt: archive: the archive at the final name is unreadable"))
		var rep struct{ Failed []struct{ Archive string } }
		Expect(json.Unmarshal([]byte(r.stdout), &rep)).To(Succeed())
		Expect(rep.Failed).To(HaveLen(1))
		Expect(a).To(BeAnExistingFile(), "the source stays")
	})
})
