// Specs of the meta file and the archive lock body: the spec's examples
// byte for byte, strict decoding, and the durable write.

package dbfiles_test

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

func sampleMeta() dbfiles.Meta {
	first := time.Date(2026, 10, 13, 8, 0, 0, 0, time.UTC)
	last := time.Date(2026, 10, 13, 8, 59, 59, 871_000_000, time.UTC)
	return dbfiles.Meta{
		Schema: 1, Worker: "search-worker-3", Instance: "9c41e0b27fd34a1e", Cluster: "search",
		FirstEventTS: &first, LastEventTS: &last,
		SealedAt:   time.Date(2026, 10, 13, 9, 0, 2, 410_000_000, time.UTC),
		SizeBytes:  48211968,
		Tables:     map[string]int64{"events": 412093, "worker_config": 1, "worker_state": 360},
		EventTypes: map[string]int64{"task_completed": 120211, "task_started": 120400},
	}
}

var _ = Describe("The meta file", func() {
	It("decodes the spec's example to its values and encodes it back byte for byte", func() {
		b := []byte(fixture("history_meta.json"))
		m, err := dbfiles.DecodeMeta(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(m).To(Equal(sampleMeta()))
		out, err := dbfiles.EncodeMeta(m)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal(b))
	})

	It("writes null event times and empty maps for a file with no events", func() {
		m := sampleMeta()
		m.FirstEventTS, m.LastEventTS, m.EventTypes, m.Schema = nil, nil, nil, 0
		out, err := dbfiles.EncodeMeta(m)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(out)).To(ContainSubstring(`"event_types":{},"first_event_ts":null,`))
		Expect(string(out)).To(ContainSubstring(`"last_event_ts":null,"schema":1,`))
		back, err := dbfiles.DecodeMeta(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(back.FirstEventTS).To(BeNil())
		Expect(back.EventTypes).To(BeEmpty())
	})

	DescribeTable("DecodeMeta refuses what breaks schema 1",
		func(from, to string) {
			b := strings.Replace(fixture("history_meta.json"), from, to, 1)
			Expect(b).NotTo(Equal(fixture("history_meta.json")))
			_, err := dbfiles.DecodeMeta([]byte(b))
			Expect(err).To(MatchError(dbfiles.ErrBadMeta))
		},
		Entry("schema 2", `"schema":1`, `"schema":2`),
		Entry("schema as a string", `"schema":1`, `"schema":"1"`),
		Entry("schema as a float", `"schema":1`, `"schema":1.0`),
		Entry("a size with a fraction", `"size_bytes":48211968`, `"size_bytes":48211968.5`),
		Entry("a negative count", `"worker_config":1`, `"worker_config":-1`),
		Entry("a time without microseconds", `"sealed_at":"2026-10-13T09:00:02.410000Z"`, `"sealed_at":"2026-10-13T09:00:02.41Z"`),
		Entry("a time with an offset", `"sealed_at":"2026-10-13T09:00:02.410000Z"`, `"sealed_at":"2026-10-13T09:00:02.410000+00:00"`),
		Entry("a null sealed_at", `"sealed_at":"2026-10-13T09:00:02.410000Z"`, `"sealed_at":null`),
		Entry("only one event time", `"first_event_ts":"2026-10-13T08:00:00.000000Z"`, `"first_event_ts":null`),
		Entry("a short instance", `"instance":"9c41e0b27fd34a1e"`, `"instance":"9c41e0b2"`),
		Entry("an uppercase instance", `"instance":"9c41e0b27fd34a1e"`, `"instance":"9C41E0B27FD34A1E"`),
		Entry("an unknown key", `"schema":1`, `"schema":1,"extra":0`),
		Entry("a missing key", `"cluster":"search",`, ``),
		Entry("a worker that is a number", `"worker":"search-worker-3"`, `"worker":3`),
		Entry("tables as a list", `"tables":{"events":412093,"worker_config":1,"worker_state":360}`, `"tables":[]`),
		Entry("trailing data", `"worker":"search-worker-3"}`, `"worker":"search-worker-3"}{}`),
		Entry("a list instead of an object", `{"cluster"`, `[{"cluster"`),
	)

	It("refuses to encode a meta it could not decode", func() {
		m := sampleMeta()
		m.Schema = 2
		_, err := dbfiles.EncodeMeta(m)
		Expect(err).To(MatchError(dbfiles.ErrBadMeta))
		m = sampleMeta()
		m.LastEventTS = nil
		_, err = dbfiles.EncodeMeta(m)
		Expect(err).To(MatchError(dbfiles.ErrBadMeta))
	})

	It("writes the file durably with mode 0600 and no trailing newline, and reads it back", func() {
		path := filepath.Join(GinkgoT().TempDir(), "w-2026-10-13__08_00_00.db.meta.json")
		Expect(dbfiles.WriteMeta(path, sampleMeta())).To(Succeed())
		fi, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		b, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(Equal(fixture("history_meta.json")))
		m, err := dbfiles.ReadMeta(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(m).To(Equal(sampleMeta()))
	})

	It("leaves no file when the meta is bad, and reports a bad file as ErrBadMeta", func() {
		dir := GinkgoT().TempDir()
		m := sampleMeta()
		m.Instance = "x"
		Expect(dbfiles.WriteMeta(filepath.Join(dir, "a.db.meta.json"), m)).To(MatchError(dbfiles.ErrBadMeta))
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(BeEmpty())
		Expect(os.WriteFile(filepath.Join(dir, "b.db.meta.json"), []byte("{}"), 0o600)).To(Succeed())
		_, err = dbfiles.ReadMeta(filepath.Join(dir, "b.db.meta.json"))
		Expect(err).To(MatchError(dbfiles.ErrBadMeta))
		_, err = dbfiles.ReadMeta(filepath.Join(dir, "missing"))
		Expect(err).To(MatchError(os.ErrNotExist))
	})
})

var _ = Describe("The archive lock body", func() {
	want := dbfiles.LockBody{
		AcquiredAt: time.Date(2026, 10, 14, 2, 0, 0, 125_000_000, time.UTC),
		Instance:   "9c41e0b27fd34a1e", Token: "5f0c1d2e3a4b6978", Worker: "search-worker-3",
	}

	It("decodes the spec's example and encodes it back byte for byte", func() {
		b := []byte(fixture("archive_lock.json"))
		l, err := dbfiles.DecodeLock(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(l).To(Equal(want))
		out, err := dbfiles.EncodeLock(l)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal(b))
	})

	DescribeTable("DecodeLock refuses a body that is not the spec's",
		func(from, to string) {
			b := strings.Replace(fixture("archive_lock.json"), from, to, 1)
			_, err := dbfiles.DecodeLock([]byte(b))
			Expect(err).To(MatchError(dbfiles.ErrBadLock))
		},
		Entry("a token that is not hex", `"token":"5f0c1d2e3a4b6978"`, `"token":"5f0c1d2e3a4b697z"`),
		Entry("a missing worker", `,"worker":"search-worker-3"`, ``),
		Entry("an extra key", `{"acquired_at"`, `{"pid":1,"acquired_at"`),
		Entry("a bad time", `02:00:00.125000Z`, `02:00:00.125Z`),
		Entry("not JSON", `{`, `{{`),
	)
})
