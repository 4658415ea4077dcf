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

var _ = Describe("query drakkar status", func() {
	It("prints a running worker's backlog, last seal, archive folder, peers and next rotation", func() {
		dir := GinkgoT().TempDir()
		shared := filepath.Join(dir, "shared")
		Expect(os.MkdirAll(shared, 0o700)).To(Succeed())
		config := filepath.Join(dir, "worker.yaml")
		Expect(os.WriteFile(config, []byte(workerYAML(shared, false)), 0o600)).To(Succeed())
		w := startWorker(dir, shared, "w1", "c1", config)
		w.record(`{"event":"task_started","task_id":"a"}` + "\n")

		type status struct {
			Worker   string
			Recorder struct {
				Owner        bool
				Backlog      []map[string]any
				LastSeal     *struct{ OK bool } `json:"last_seal"`
				NextRotation *time.Time         `json:"next_rotation"`
			}
			Archive struct{ Folder string }
			Peers   []any
		}
		var st status
		// Rotation every 3.6 s: the first file is sealed and moved soon.
		Eventually(func() bool {
			r := runQuery(dir, nil, "", "drakkar", "status", "--url", w.url, "--token", fleetToken)
			Expect(r.code).To(Equal(0), r.stderr)
			Expect(strings.Count(r.stdout, "\n")).To(Equal(1))
			st = status{}
			Expect(json.Unmarshal([]byte(r.stdout), &st)).To(Succeed())
			return st.Recorder.LastSeal != nil
		}).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(BeTrue())
		Expect(st.Worker).To(Equal("w1"))
		Expect(st.Recorder.Owner).To(BeTrue())
		Expect(st.Recorder.LastSeal.OK).To(BeTrue())
		Expect(st.Recorder.NextRotation).NotTo(BeNil())
		Expect(st.Archive.Folder).To(Equal(filepath.Join(shared, "history", "c1")))
		Expect(st.Peers).NotTo(BeNil())

		r := runQuery(dir, nil, "", "drakkar", "status", "--url", w.url, "--token", "wrong")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: invalid: worker at " + w.url + " answered 401"))
		Expect(r.stdout).To(BeEmpty())
	})

	It("refuses a URL that is not http", func() {
		r := runQuery(GinkgoT().TempDir(), nil, "", "drakkar", "status", "--url", "ftp://x")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(Equal("query: invalid: --url \"ftp://x\": want http://HOST:PORT\n"))
	})
})

var _ = Describe("query drakkar typed errors", func() {
	long := strings.Repeat("w", 300)
	DescribeTable("a missing file or folder, or a name too long, fails with its code and touches nothing",
		func(want string, args ...string) {
			dir := GinkgoT().TempDir()
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "DIR", dir)
			}
			r := runQuery(dir, nil, "", append([]string{"drakkar"}, args...)...)
			Expect(r.code).To(Equal(1))
			Expect(r.stdout).To(BeEmpty())
			Expect(r.stderr).To(Equal(strings.ReplaceAll(want, "DIR", dir) + "\n"))
			ents, err := os.ReadDir(dir)
			Expect(err).NotTo(HaveOccurred())
			Expect(ents).To(BeEmpty())
		},
		Entry("meta of a missing meta file", "query: not_found: no meta file DIR/none.db.meta.json", "meta", "DIR/none.db.meta.json"),
		Entry("meta of a missing sealed file", "query: not_found: no meta file DIR/none.db.meta.json", "meta", "DIR/none.db"),
		Entry("peers without a registry folder", "query: not_found: no registry folder DIR/fleet/workers: no worker has started with this shared folder",
			"peers", "--shared", "DIR"),
		Entry("cache get with a name too long", "query: invalid: recorder config: worker.name: must be at most 200 bytes, got 300",
			"cache", "get", "--storage", "DIR", "--name", long, "k"),
		Entry("cache set with a name too long", "query: invalid: recorder config: worker.name: must be at most 200 bytes, got 300",
			"cache", "set", "--storage", "DIR", "--name", long, "k", "1"),
	)
})
