// query drakkar's rough edges: help, paths and archive hints, run as the
// real binary.

package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("query drakkar output and help", func() {
	var dir, shared, hist string

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		shared = filepath.Join(dir, "shared")
		hist = filepath.Join(shared, "history", "c1")
	})

	DescribeTable("help of a drakkar subcommand leaves out the store flags",
		func(args ...string) {
			r := runQuery(dir, nil, "", args...)
			Expect(r.code).To(Equal(0), r.stderr)
			Expect(r.stdout).To(ContainSubstring("--log-level"))
			Expect(r.stdout).NotTo(ContainSubstring("--store"))
			Expect(r.stdout).NotTo(ContainSubstring("--read-only"))
		},
		Entry("record --help", "drakkar", "record", "--help"),
		Entry("archive --help", "drakkar", "archive", "--help"),
		Entry("help drakkar worker", "help", "drakkar", "worker"),
		Entry("drakkar --help", "drakkar", "--help"),
	)

	It("help of a store command still shows the store flags", func() {
		r := runQuery(dir, nil, "", "scan", "--help")
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring("--store"))
		Expect(r.stdout).To(ContainSubstring("--read-only"))
	})

	It("record prints file and sealed both absolute when given relative folders", func() {
		r := runQuery(dir, nil, `{"event":"task_started","task_id":"a"}`+"\n", "drakkar", "record",
			"--storage", "storage", "--shared", "shared", "--name", "w1", "--cluster", "c1")
		Expect(r.code).To(Equal(0), r.stderr)
		var out struct{ File, Sealed string }
		Expect(json.Unmarshal([]byte(r.stdout), &out)).To(Succeed())
		Expect(filepath.IsAbs(out.File)).To(BeTrue(), out.File)
		Expect(filepath.IsAbs(out.Sealed)).To(BeTrue(), out.Sealed)
		Expect(filepath.Dir(out.File)).To(Equal(filepath.Join(dir, "storage")))
		Expect(out.Sealed).To(Equal(filepath.Join(hist, filepath.Base(out.File))))
		Expect(out.Sealed).To(BeAnExistingFile())
	})

	It("a truncated event line is called truncated, and nothing is recorded", func() {
		r := runQuery(dir, nil, `{"event":"task_started","task_id":"a"}`+"\n"+`{"event":"task_sta`+"\n", "drakkar", "record",
			"--storage", "storage", "--shared", "shared", "--name", "w1", "--cluster", "c1")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("line 2"))
		Expect(r.stderr).To(ContainSubstring("truncated JSON"))
		Expect(r.stderr).NotTo(ContainSubstring("not a JSON object"))
		Expect(hist).NotTo(BeADirectory())
	})

	It("archive with nothing due says when the next window is due", func() {
		r := runQuery(dir, nil, `{"event":"task_started","task_id":"a"}`+"\n", "drakkar", "record",
			"--storage", "storage", "--shared", "shared", "--name", "w1", "--cluster", "c1")
		Expect(r.code).To(Equal(0), r.stderr)
		r = runQuery(dir, nil, "", "drakkar", "archive", "--shared", shared, "--cluster", "c1",
			"--set", "history.archive.due_after_hours=24", "--set", "history.archive.retention_days=0")
		Expect(r.code).To(Equal(0), r.stderr)
		var rep struct {
			Locked    bool
			Published []any
			NextDue   *time.Time `json:"next_due"`
		}
		Expect(json.Unmarshal([]byte(r.stdout), &rep)).To(Succeed())
		Expect(rep.Locked).To(BeTrue())
		Expect(rep.Published).To(BeEmpty())
		Expect(rep.NextDue).NotTo(BeNil())
		Expect(*rep.NextDue).To(BeTemporally(">", time.Now().Add(23*time.Hour)))
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		Expect(lines[len(lines)-1]).To(Equal("query: nothing due; the next window is due at " + rep.NextDue.Format(time.RFC3339)))
	})

	It("archive that loses the lock names the holder", func() {
		Expect(os.MkdirAll(hist, 0o700)).To(Succeed())
		lock := filepath.Join(hist, ".archive.lock")
		acquired := time.Now().UTC().Truncate(time.Second)
		body := `{"acquired_at":"` + acquired.Format("2006-01-02T15:04:05.000000Z") +
			`","instance":"aaaaaaaaaaaaaaaa","token":"bbbbbbbbbbbbbbbb","worker":"other-worker"}`
		Expect(os.WriteFile(lock, []byte(body), 0o600)).To(Succeed())
		r := runQuery(dir, nil, "", "drakkar", "archive", "--shared", shared, "--cluster", "c1")
		Expect(r.code).To(Equal(0), r.stderr)
		var rep struct {
			Locked bool
			Holder *struct{ Worker, Instance, Token string }
		}
		Expect(json.Unmarshal([]byte(r.stdout), &rep)).To(Succeed())
		Expect(rep.Locked).To(BeFalse())
		Expect(rep.Holder).NotTo(BeNil())
		Expect(rep.Holder.Worker).To(Equal("other-worker"))
		Expect(strings.TrimSpace(r.stderr)).To(Equal("query: skipped: worker other-worker (instance aaaaaaaaaaaaaaaa, token bbbbbbbbbbbbbbbb) holds " +
			lock + " since " + acquired.Format(time.RFC3339)))
		Expect(os.ReadFile(lock)).To(Equal([]byte(body)))
	})
})
