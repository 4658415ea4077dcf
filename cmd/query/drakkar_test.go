// query drakkar record, ls and meta, run as the real binary.

package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("query drakkar", func() {
	var dir, storage, shared string

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		storage, shared = filepath.Join(dir, "storage"), filepath.Join(dir, "shared")
	})

	record := func(stdin string, extra ...string) result {
		args := append([]string{"drakkar", "record", "--storage", storage, "--shared", shared, "--name", "w1", "--cluster", "c1"}, extra...)
		return runQuery(dir, nil, stdin, args...)
	}

	It("records events into a new live file, seals it into the history folder on exit, and ls and meta show it", func() {
		r := record(`{"event":"task_started","task_id":"t1","args":["a",1],"ts":1760342400.5}
{"event":"annotation","metadata":{"z":1,"a":"\u2028"}}
`)
		Expect(r.code).To(Equal(0), r.stderr)
		var out map[string]any
		Expect(json.Unmarshal([]byte(r.stdout), &out)).To(Succeed())
		Expect(out).To(HaveKeyWithValue("appended", 2.0))
		Expect(out).To(HaveKeyWithValue("from", 1.0))
		Expect(out).To(HaveKeyWithValue("to", 2.0))
		Expect(out).To(HaveKeyWithValue("spooled", false))
		file := out["file"].(string)
		Expect(filepath.Base(file)).To(MatchRegexp(`^w1-\d{4}-\d\d-\d\d__\d\d_\d\d_\d\d\.db$`))
		sealed := filepath.Join(shared, "history", "c1", filepath.Base(file))
		Expect(out).To(HaveKeyWithValue("sealed", sealed))
		Expect(sealed).To(BeAnExistingFile())

		ls := runQuery(dir, nil, "", "drakkar", "ls", "--shared", shared)
		Expect(ls.code).To(Equal(0), ls.stderr)
		var h struct {
			Folders []struct {
				Name  string
				Files []struct {
					Path, Kind string
					Meta       map[string]any
				}
			}
		}
		Expect(json.Unmarshal([]byte(ls.stdout), &h)).To(Succeed())
		Expect(h.Folders).To(HaveLen(1))
		Expect(h.Folders[0].Name).To(Equal("c1"))
		Expect(h.Folders[0].Files).To(HaveLen(1))
		Expect(h.Folders[0].Files[0].Path).To(Equal("history/c1/" + filepath.Base(file)))
		Expect(h.Folders[0].Files[0].Kind).To(Equal("sealed"))
		Expect(h.Folders[0].Files[0].Meta).To(HaveKeyWithValue("worker", "w1"))

		meta := runQuery(dir, nil, "", "drakkar", "meta", sealed)
		Expect(meta.code).To(Equal(0), meta.stderr)
		onDisk, err := os.ReadFile(sealed + ".meta.json")
		Expect(err).NotTo(HaveOccurred())
		Expect(meta.stdout).To(Equal(string(onDisk) + "\n"))
	})

	It("does not collide with a run of the same second", func() {
		a := record(`{"event":"annotation"}` + "\n")
		b := record(`{"event":"annotation"}` + "\n")
		Expect(a.code).To(Equal(0), a.stderr)
		Expect(b.code).To(Equal(0), b.stderr)
		ents, err := os.ReadDir(filepath.Join(shared, "history", "c1"))
		Expect(err).NotTo(HaveOccurred())
		var dbs []string
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".db") {
				dbs = append(dbs, e.Name())
			}
		}
		Expect(dbs).To(HaveLen(2))
	})

	DescribeTable("refuses bad input with one line, writing nothing",
		func(stdin string, extra []string, code int, want string) {
			r := record(stdin, extra...)
			Expect(r.code).To(Equal(code))
			Expect(strings.Count(r.stderr, "\n")).To(Equal(1), r.stderr)
			Expect(r.stderr).To(ContainSubstring(want))
			Expect(r.stdout).To(BeEmpty())
			Expect(filepath.Join(shared, "history")).NotTo(BeADirectory())
		},
		Entry("not JSON", "{\n", nil, 1, "line 1"),
		Entry("an unknown column", `{"event":"x","nope":1}`+"\n", nil, 1, "nope"),
		Entry("a bad second line", `{"event":"x"}`+"\n"+`{"event":5}`+"\n", nil, 1, "line 2"),
		Entry("an unknown config key", `{"event":"x"}`+"\n", []string{"--set", "ui.recorder.nope=1"}, 1, "ui.recorder.nope"),
		Entry("a bad config value", `{"event":"x"}`+"\n", []string{"--set", "ui.recorder.max_buffer=5"}, 1, "ui.recorder.max_buffer"),
		Entry("--set without =", `{"event":"x"}`+"\n", []string{"--set", "x"}, 2, "key=value"),
		Entry("invalid UTF-8 in an event", "{\"event\":\"a\xff\xfe\"}\n", nil, 1, "query: invalid: stdin line 1: bad event: not UTF-8 text"),
		Entry("a lone surrogate", `{"event":"a\ud800"}`+"\n", nil, 1, `query: invalid: stdin line 1: bad event: a lone surrogate (\ud800) in text`),
		Entry("an escaped NUL", `{"event":"x"}`+"\n"+`{"event":"x","stdout":"a\u0000"}`+"\n", nil, 1, `query: invalid: stdin line 2: bad event: an escaped NUL (\u0000) in text`),
		Entry("a cluster whose archive names cannot fit in 255 bytes", `{"event":"x"}`+"\n", []string{"--cluster", strings.Repeat("c", 215)}, 1,
			"query: invalid: recorder config: cluster.name: its folder name is 215 bytes, at most 192"),
	)

	DescribeTable("writes nothing at all for input without an event",
		func(stdin string) {
			r := record(stdin)
			Expect(r.code).To(Equal(0), r.stderr)
			var out map[string]any
			Expect(json.Unmarshal([]byte(r.stdout), &out)).To(Succeed())
			Expect(out).To(HaveKeyWithValue("file", ""))
			Expect(out).To(HaveKeyWithValue("appended", 0.0))
			Expect(out).NotTo(HaveKey("sealed"))
			Expect(storage).NotTo(BeADirectory())
			Expect(shared).NotTo(BeADirectory())
		},
		Entry("empty input", ""),
		Entry("blank lines only", "\n  \n\t\n"),
	)

	It("meta refuses a file that is not a meta object", func() {
		p := filepath.Join(dir, "x.db.meta.json")
		Expect(os.WriteFile(p, []byte(`{"schema":2}`), 0o600)).To(Succeed())
		r := runQuery(dir, nil, "", "drakkar", "meta", p)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: invalid:"))
	})
})
