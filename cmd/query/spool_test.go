// query spool publish, ls, inspect, gc and retry through the real binary,
// against a real spool folder beside a temp store.

package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// spoolRows are two rows of kind jobs, with every column type.
const spoolRows = `{"id": 9223372036854775807, "name": "max", "at": "2024-05-01T12:00:00.5+02:00", "payload": {"b": [1, 2.5]}, "score": 1.25, "ok": true}

{"id": 2, "name": null}
`

// spoolDir opens the spool of s from the test, as another process would.
func (s *store) spoolDir() *spool.Dir {
	d, err := spool.Open(context.Background(), s.path, spool.Options{})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return d
}

// entries lists the names in one folder of s's spool.
func (s *store) entries(state spool.State) []string {
	ents, err := os.ReadDir(filepath.Join(spool.PathFor(s.path), string(state)))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	names := []string{}
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// publish publishes spoolRows to stream s1 with the kind file fixture and
// returns the batch name.
func (s *store) publish(args ...string) string {
	out := s.one(spoolRows, append([]string{"spool", "publish", "--stream", "s1", "--kind", "jobs", "--schema", kindsFile()}, args...)...)
	return out["batch"].(string)
}

// fails runs a command that must fail with code and returns its result.
func (s *store) fails(code, stdin string, args ...string) result {
	r := s.run(stdin, args...)
	ExpectWithOffset(1, r.code).To(Equal(1), "stdout %q stderr %q", r.stdout, r.stderr)
	ExpectWithOffset(1, r.stderr).To(HavePrefix("query: " + code + ": "))
	ExpectWithOffset(1, strings.Count(r.stderr, "\n")).To(Equal(1), "one line on stderr: %q", r.stderr)
	return r
}

var _ = Describe("query spool", func() {
	var s *store

	BeforeEach(func() {
		s = newStore()
	})

	Describe("publish, ls and inspect", func() {
		DescribeTable("publish one append batch in each format, listed and valid",
			func(format string) {
				out := s.one(spoolRows, "spool", "publish", "--stream", "s1", "--kind", "jobs",
					"--schema", kindsFile(), "--format", format)
				Expect(keys(out)).To(ConsistOf("batch", "path", "rows", "format"))
				Expect(out).To(HaveKeyWithValue("rows", num("2")))
				Expect(out).To(HaveKeyWithValue("format", format))
				name := out["batch"].(string)
				_, err := spool.ParseBatchName(name)
				Expect(err).NotTo(HaveOccurred())
				Expect(out["path"]).To(Equal(filepath.Join(spool.PathFor(s.path), "incoming", name)))
				Expect(filepath.Join(out["path"].(string), spool.ManifestFile)).To(BeARegularFile())
				Expect(s.entries(spool.StateTmp)).To(BeEmpty())

				ls := s.lines("", "spool", "ls")
				Expect(ls).To(HaveLen(1))
				Expect(keys(ls[0])).To(ConsistOf("batch", "producer", "seq", "created", "entries", "rows", "bytes", "applied"))
				Expect(ls[0]).To(HaveKeyWithValue("applied", BeNil()), "no owner answered")
				Expect(ls[0]).To(HaveKeyWithValue("batch", name))
				Expect(ls[0]).To(HaveKeyWithValue("producer", name[21:37]))
				Expect(ls[0]).To(HaveKeyWithValue("seq", num("1")))
				Expect(ls[0]["created"]).To(MatchRegexp(datetimeRE))
				Expect(ls[0]).To(HaveKeyWithValue("entries", num("1")))
				Expect(ls[0]).To(HaveKeyWithValue("rows", num("2")))
				data, err := filepath.Glob(filepath.Join(out["path"].(string), "e00001.*"))
				Expect(err).NotTo(HaveOccurred())
				Expect(data).To(HaveLen(1))
				fi, err := os.Stat(data[0])
				Expect(err).NotTo(HaveOccurred())
				Expect(ls[0]).To(HaveKeyWithValue("bytes", num(jsonInt(fi.Size()))))

				in := s.one("", "spool", "inspect", name)
				Expect(keys(in)).To(ConsistOf("batch", "valid", "error", "manifest"))
				Expect(in).To(HaveKeyWithValue("batch", name))
				Expect(in).To(HaveKeyWithValue("valid", true))
				Expect(in).To(HaveKeyWithValue("error", BeNil()))
				m := manifestOf(in)
				Expect(m.Name().String()).To(Equal(name))
				Expect(m.Producer.Build).To(HavePrefix("query "))
				Expect(m.Schemas).To(HaveLen(1))
				Expect(m.Schemas[0].Name).To(Equal("jobs"))
				Expect(m.Entries).To(HaveLen(1))
				Expect(m.Entries[0].Op).To(Equal(recordstore.OpAppend))
				Expect(m.Entries[0].Stream).To(Equal("s1"))
				Expect(m.Entries[0].Format).To(Equal(format))
				Expect(m.Entries[0].Rows).To(Equal(int64(2)))
			},
			Entry("ndjson", "ndjson"),
			Entry("ndjson.gz", "ndjson.gz"),
			Entry("parquet", "parquet"),
		)

		It("writes the rows' stored values, read back exactly by the spool", func() {
			name := s.publish()
			b, err := s.spoolDir().Load(context.Background(), spool.StateIncoming, name)
			Expect(err).NotTo(HaveOccurred())
			del, err := b.ReadAll(context.Background())
			Expect(err).NotTo(HaveOccurred())
			Expect(del.Entries[0].Rows).To(Equal([]recordstore.Values{
				{int64(9223372036854775807), "max", "2024-05-01T10:00:00.500000Z", `{"b":[1,2.5]}`, 1.25, int64(1)},
				{int64(2), nil, nil, nil, nil, nil},
			}))
		})

		It("reads a file argument, and neither opens the live database nor takes a lock", func() {
			f := writeFile(s.dir, "rows.ndjson", spoolRows)
			out := s.one("", "spool", "publish", "--stream", "s1", "--kind", "jobs", "--schema", kindsFile(), f)
			Expect(out).To(HaveKeyWithValue("rows", num("2")))
			Expect(filepath.Join(s.dir, "v1")).NotTo(BeAnExistingFile())
			Expect(s.path + ".lock").NotTo(BeAnExistingFile())
			Expect(s.path).NotTo(BeAnExistingFile())
		})

		It("reads the kind from the store's catalog without --schema, leaving the live file as it was", func() {
			s.ok("", "kind", "apply", kindsFile())
			live := filepath.Join(s.dir, "v1", "records.sqlite")
			before, err := os.ReadFile(live)
			Expect(err).NotTo(HaveOccurred())

			out := s.one(spoolRows, "spool", "publish", "--stream", "s1", "--kind", "jobs", "--format", "ndjson.gz")
			Expect(out).To(HaveKeyWithValue("rows", num("2")))
			after, err := os.ReadFile(live)
			Expect(err).NotTo(HaveOccurred())
			Expect(after).To(Equal(before))
			Expect(s.path + ".owner.json").NotTo(BeAnExistingFile())
			Expect(s.entries(spool.StateIncoming)).To(ConsistOf(out["batch"]))

			in := s.one("", "spool", "inspect", out["batch"].(string))
			Expect(in).To(HaveKeyWithValue("valid", true))
			stored := s.lines("", "kind", "list")[1] // events, jobs
			Expect(stored).To(HaveKeyWithValue("name", "jobs"))
			Expect(in["manifest"].(map[string]any)["schemas"]).To(Equal([]any{stored}))
		})

		It("is ingested, at the latest when it exits, by the next command that owns the store", func() {
			s.ok("", "kind", "apply", kindsFile())
			s.publish()
			Expect(s.entries(spool.StateIncoming)).To(HaveLen(1))
			s.ok("", "kind", "list")
			Expect(s.entries(spool.StateIncoming)).To(BeEmpty())
			Expect(s.lines("", "scan", "--stream", "s1")).To(HaveLen(2))
			Expect(s.one("", "meta", "--stream", "s1")).To(HaveKeyWithValue("total", num("2")))
		})

		It("lists batches oldest first, and failed ones only with --failed", func() {
			first, second := s.publish(), s.publish("--format", "ndjson.gz")
			ls := s.lines("", "spool", "ls")
			Expect(ls).To(HaveLen(2))
			Expect(ls[0]).To(HaveKeyWithValue("batch", first))
			Expect(ls[1]).To(HaveKeyWithValue("batch", second))
			Expect(s.ok("", "spool", "ls", "--failed")).To(BeEmpty())

			Expect(s.spoolDir().MoveToFailed(context.Background(), first, errors.New("refused for the test"))).To(Succeed())
			failed := s.lines("", "spool", "ls", "--failed")
			Expect(failed).To(HaveLen(1))
			Expect(failed[0]).To(HaveKeyWithValue("batch", first))
			Expect(failed[0]).To(HaveKeyWithValue("rows", num("2")))
			Expect(failed[0]).NotTo(HaveKey("applied"), "only incoming/ batches can be applied")
			Expect(s.lines("", "spool", "ls")).To(ConsistOf(HaveKeyWithValue("batch", second)))
		})

		It("inspects a failed batch too", func() {
			name := s.publish()
			Expect(s.spoolDir().MoveToFailed(context.Background(), name, errors.New("refused for the test"))).To(Succeed())
			Expect(s.one("", "spool", "inspect", name)).To(HaveKeyWithValue("valid", true))
		})
	})

	Describe("inspect of a damaged batch", func() {
		It("reports a corrupt data file as not valid, with its manifest, and exits 1", func() {
			name := s.publish()
			data := filepath.Join(spool.PathFor(s.path), "incoming", name, "e00001.ndjson")
			b, err := os.ReadFile(data)
			Expect(err).NotTo(HaveOccurred())
			b[3] ^= 0x20 // same size, another byte
			Expect(os.WriteFile(data, b, 0o600)).To(Succeed())

			r := s.fails("invalid", "", "spool", "inspect", name)
			Expect(r.stderr).To(ContainSubstring("checksum mismatch"))
			out := decodeLines(r.stdout)
			Expect(out).To(HaveLen(1))
			Expect(out[0]).To(HaveKeyWithValue("batch", name))
			Expect(out[0]).To(HaveKeyWithValue("valid", false))
			Expect(out[0]["error"]).To(HaveKeyWithValue("code", "invalid"))
			Expect(out[0]["error"]).To(HaveKeyWithValue("message", ContainSubstring("checksum mismatch")))
			Expect(strings.TrimPrefix(strings.TrimSpace(r.stderr), "query: invalid: ")).To(Equal(out[0]["error"].(map[string]any)["message"]))
			Expect(manifestOf(out[0]).Name().String()).To(Equal(name))
		})

		It("prints a null manifest when the manifest itself is broken", func() {
			name := s.publish()
			Expect(os.WriteFile(filepath.Join(spool.PathFor(s.path), "incoming", name, spool.ManifestFile), []byte(`{"format": 1,`), 0o600)).To(Succeed())
			r := s.fails("invalid", "", "spool", "inspect", name)
			out := decodeLines(r.stdout)
			Expect(out[0]).To(HaveKeyWithValue("valid", false))
			Expect(out[0]).To(HaveKeyWithValue("manifest", BeNil()))
			Expect(r.stderr).To(ContainSubstring("bad manifest"))
			ls := s.lines("", "spool", "ls")
			Expect(ls[0]).To(HaveKeyWithValue("batch", name))
			Expect(ls[0]).To(HaveKeyWithValue("rows", BeNil()))
		})
	})

	Describe("refused publishes leave nothing behind", func() {
		DescribeTable("exit 1 with the code, nothing in incoming/ or tmp/",
			func(stdin, code, says string, args ...string) {
				r := s.fails(code, stdin, append([]string{"spool", "publish", "--stream", "s1"}, args...)...)
				Expect(r.stdout).To(BeEmpty())
				Expect(r.stderr).To(ContainSubstring(says))
				if _, err := os.Stat(spool.PathFor(s.path)); err == nil {
					Expect(s.entries(spool.StateIncoming)).To(BeEmpty())
					Expect(s.entries(spool.StateTmp)).To(BeEmpty())
				}
			},
			Entry("a bad row, by its line", `{"id": 1}`+"\n\n"+`{"id": "x"}`, "invalid", "stdin line 3: kind jobs: column id",
				"--kind", "jobs", "--schema", kindsFile()),
			Entry("a malformed line", `{"id": 1}`+"\n"+`{"id": `, "invalid", "stdin line 2: malformed JSON",
				"--kind", "jobs", "--schema", kindsFile()),
			Entry("a key given twice, refused by the spool's own rule", `{"id": 1}`+"\n"+`{"id": 1}`, "invalid", "kind jobs: rows 1 and 2 have the same key",
				"--kind", "jobs", "--schema", kindsFile()),
			Entry("empty input", "", "invalid", "stdin: no rows", "--kind", "jobs", "--schema", kindsFile()),
			Entry("a kind the schema file lacks", `{"id": 1}`, "invalid", "does not declare kind nokind",
				"--kind", "nokind", "--schema", kindsFile()),
			Entry("an invalid kind in the schema file", `{"kinds":[{"name":"k2","columns":[{"name":"a","type":"text"}]}]}`, "invalid", `unknown type "text"`,
				"--kind", "k2", "--schema", "-", "/dev/null"),
			Entry("a kind of more columns than SQLite allows in the schema file", wideKindFile(1999), "invalid",
				"kind k2: 1999 columns: a kind has at most 1998 columns", "--kind", "k2", "--schema", "-", "/dev/null"),
			Entry("a bare-number ttl in the schema file", bareTTLKinds, "invalid", `ttl 86400: want text like "24h"`,
				"--kind", "k2", "--schema", "-", "/dev/null"),
			Entry("a json key column in the schema file", jsonKeyKinds, "invalid", "key column doc is json",
				"--kind", "k2", "--schema", "-", "/dev/null"),
			Entry("a schema file that does not exist", `{"id": 1}`, "invalid", "/nonexistent/kinds.json",
				"--kind", "jobs", "--schema", "/nonexistent/kinds.json"),
			Entry("an input file that does not exist", "", "invalid", "/nonexistent/rows.ndjson",
				"--kind", "jobs", "--schema", kindsFile(), "/nonexistent/rows.ndjson"),
			Entry("a bad stream name", `{"id": 1}`, "invalid", `stream id "a/b"`,
				"--kind", "jobs", "--schema", kindsFile(), "--stream", "a/b"),
		)

		It("refuses a kind the catalog does not declare, and a store that does not exist, as not_found", func() {
			r := s.fails("not_found", `{"id": 1}`, "spool", "publish", "--stream", "s1", "--kind", "jobs")
			Expect(r.stderr).To(ContainSubstring(s.path))
			Expect(filepath.Join(s.dir, "v1", "records.sqlite")).NotTo(BeAnExistingFile())

			s.ok("", "kind", "apply", kindsFile())
			r = s.fails("not_found", `{"id": 1}`, "spool", "publish", "--stream", "s1", "--kind", "nokind")
			Expect(r.stderr).To(ContainSubstring("nokind"))
			Expect(s.entries(spool.StateIncoming)).To(BeEmpty())
			Expect(s.entries(spool.StateTmp)).To(BeEmpty())
		})

		It("names the schema file's missing kind rather than the catalog's", func() {
			r := s.fails("invalid", `{"id": 1}`, "spool", "publish", "--stream", "s1", "--kind", "events2", "--schema", kindsFile())
			Expect(r.stderr).To(ContainSubstring(kindsFile()))
		})
	})

	Describe("gc", func() {
		It("removes old tmp entries, every trash entry and old failed batches, and keeps the rest", func() {
			dir := s.spoolDir()
			root := spool.PathFor(s.path)
			old := time.Now().Add(-48 * time.Hour)
			oldTmp := filepath.Join(root, "tmp", "0123456789abcdef-"+spool.NewID())
			youngTmp := filepath.Join(root, "tmp", "fedcba9876543210-"+spool.NewID())
			for _, p := range []string{oldTmp, youngTmp} {
				Expect(os.Mkdir(p, 0o700)).To(Succeed())
				writeFile(p, "e00001.ndjson", "{}\n")
			}
			Expect(os.Chtimes(oldTmp, old, old)).To(Succeed())

			trashed, failed, waiting := s.publish(), s.publish(), s.publish()
			Expect(dir.MoveToTrash(context.Background(), spool.StateIncoming, trashed)).To(Succeed())
			Expect(dir.MoveToFailed(context.Background(), failed, errors.New("refused for the test"))).To(Succeed())
			Expect(os.Chtimes(dir.Path(spool.StateFailed, failed), old, old)).To(Succeed())

			Expect(s.ok("", "spool", "gc")).To(Equal(`{"tmp":["` + filepath.Base(oldTmp) + `"],"failed":[],"trash":["` + trashed + `"]}` + "\n"))
			Expect(s.entries(spool.StateTmp)).To(ConsistOf(filepath.Base(youngTmp)))
			Expect(s.entries(spool.StateTrash)).To(BeEmpty())
			Expect(s.entries(spool.StateFailed)).To(ConsistOf(failed))
			Expect(s.entries(spool.StateIncoming)).To(ConsistOf(waiting))

			Expect(s.ok("", "spool", "gc", "--failed-age", "24h", "--tmp-age", "1h")).To(Equal(`{"tmp":[],"failed":["` + failed + `"],"trash":[]}` + "\n"))
			Expect(s.entries(spool.StateFailed)).To(BeEmpty())
			Expect(s.entries(spool.StateTmp)).To(ConsistOf(filepath.Base(youngTmp)))
		})

		It("prints empty lists when there is nothing to remove", func() {
			Expect(s.ok("", "spool", "gc")).To(Equal(`{"tmp":[],"failed":[],"trash":[]}` + "\n"))
		})

		It("removes a prepared folder left unused after --prepared-age", func() {
			dir := s.spoolDir()
			prepared := dir.Path(spool.StateTmp, "0123456789abcdef-0123456789abcdef0123456789abcdef")
			Expect(os.Mkdir(prepared, 0o700)).To(Succeed())
			writeFile(prepared, spool.ManifestFile, "")
			writeFile(prepared, "e00001.ndjson", "")
			t := time.Now().Add(-5 * time.Minute)
			Expect(os.Chtimes(prepared, t, t)).To(Succeed())
			Expect(s.ok("", "spool", "gc")).To(Equal(`{"tmp":[],"failed":[],"trash":[]}`+"\n"), "younger than the default 10m")
			Expect(s.ok("", "spool", "gc", "--prepared-age", "1m")).To(Equal(`{"tmp":["` + filepath.Base(prepared) + `"],"failed":[],"trash":[]}` + "\n"))
			Expect(s.entries(spool.StateTmp)).To(BeEmpty())
		})

		DescribeTable("refuses an age that is not positive",
			func(flag string) {
				r := s.fails("invalid", "", "spool", "gc", flag, "0s")
				Expect(r.stderr).To(ContainSubstring("must be positive"))
			},
			Entry("--tmp-age", "--tmp-age"),
			Entry("--failed-age", "--failed-age"),
			Entry("--prepared-age", "--prepared-age"),
		)
	})

	Describe("retry", func() {
		It("moves a failed batch back to incoming/ without its error.json", func() {
			name := s.publish()
			Expect(s.spoolDir().MoveToFailed(context.Background(), name, errors.New("refused for the test"))).To(Succeed())
			Expect(filepath.Join(spool.PathFor(s.path), "failed", name, spool.ErrorFile)).To(BeARegularFile())

			Expect(s.ok("", "spool", "retry", name)).To(Equal(`{"batch":"` + name + `","retried":true}` + "\n"))
			Expect(s.entries(spool.StateFailed)).To(BeEmpty())
			Expect(s.entries(spool.StateIncoming)).To(ConsistOf(name))
			Expect(filepath.Join(spool.PathFor(s.path), "incoming", name, spool.ErrorFile)).NotTo(BeAnExistingFile())
			Expect(s.one("", "spool", "inspect", name)).To(HaveKeyWithValue("valid", true))
		})

		It("puts back a batch the owner refused, which the next owner applies once what failed it is fixed", func() {
			s.ok("", "kind", "apply", kindsFile())
			name := s.publish()
			file := func(state spool.State) string {
				return filepath.Join(spool.PathFor(s.path), string(state), name, "e00001.ndjson")
			}
			good, err := os.ReadFile(file(spool.StateIncoming))
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(file(spool.StateIncoming), append(bytes.Clone(good), '\n'), 0o600)).To(Succeed())
			// A command that owns the store drains incoming/ before it exits.
			r := s.run(`{"id": 1, "name": "direct"}`, "append", "--stream", "s2", "--kind", "jobs")
			Expect(r.code).To(Equal(0), "stderr %q", r.stderr)
			Expect(r.stderr).To(ContainSubstring("checksum mismatch"), "the owner logs the batch it refused")
			Expect(s.entries(spool.StateFailed)).To(ConsistOf(name))

			Expect(os.WriteFile(file(spool.StateFailed), good, 0o600)).To(Succeed())
			Expect(s.ok("", "spool", "retry", name)).To(Equal(`{"batch":"` + name + `","retried":true}` + "\n"))
			s.ok(`{"id": 2, "name": "direct"}`, "append", "--stream", "s2", "--kind", "jobs")
			Expect(s.entries(spool.StateFailed)).To(BeEmpty())
			recs := s.lines("", "scan", "--stream", "s1")
			Expect(recs).To(HaveLen(2))
			Expect(recs[0]).To(HaveKeyWithValue("name", "max"))
		})

		It("refuses an unknown batch (not_found), one in incoming/ and a bad name (invalid)", func() {
			unknown := spool.BatchName{Created: time.Now(), Instance: "0123456789abcdef", Seq: 1, ID: spool.NewID()}.String()
			Expect(s.fails("not_found", "", "spool", "retry", unknown).stderr).To(ContainSubstring(unknown))
			Expect(s.fails("not_found", "", "spool", "inspect", unknown).stdout).To(BeEmpty())

			waiting := s.publish()
			Expect(s.fails("invalid", "", "spool", "retry", waiting).stderr).To(ContainSubstring("is in incoming/, not in failed/"))
			Expect(s.entries(spool.StateIncoming)).To(ConsistOf(waiting))

			Expect(s.fails("invalid", "", "spool", "retry", "nope").stderr).To(ContainSubstring("bad batch name"))
		})
	})

	Describe("a batch another implementation wrote", func() {
		DescribeTable("whose schema breaks a declaration rule is refused as invalid by the owner, and declares nothing",
			func(mutate func(kind map[string]any), says string, failed bool) {
				name := s.publish() // of kind jobs, which the store does not have yet
				path := filepath.Join(spool.PathFor(s.path), "incoming", name, spool.ManifestFile)
				raw, err := os.ReadFile(path)
				Expect(err).NotTo(HaveOccurred())
				var m map[string]any
				Expect(json.Unmarshal(raw, &m)).To(Succeed())
				mutate(m["schemas"].([]any)[0].(map[string]any))
				raw, err = json.Marshal(m)
				Expect(err).NotTo(HaveOccurred())
				Expect(os.WriteFile(path, raw, 0o600)).To(Succeed())

				// await owns the store: it applies the batch, and prints and
				// fails with its outcome.
				r := s.run("", "await", name)
				Expect(r.code).To(Equal(1), "stdout %q stderr %q", r.stdout, r.stderr)
				Expect(r.stderr).To(ContainSubstring("query: invalid: "))
				Expect(r.stderr).To(ContainSubstring(says))
				if failed { // a schema that does not even decode: the whole batch is refused
					Expect(s.entries(spool.StateFailed)).To(ConsistOf(name))
					raw, err = os.ReadFile(filepath.Join(spool.PathFor(s.path), "failed", name, spool.ErrorFile))
					Expect(err).NotTo(HaveOccurred())
					var f spool.Failure
					Expect(json.Unmarshal(raw, &f)).To(Succeed())
					Expect(f.Code).To(Equal("invalid"))
					Expect(f.Error).To(ContainSubstring(says))
				} else {
					Expect(s.entries(spool.StateFailed)).To(BeEmpty())
				}
				Expect(s.ok("", "kind", "list")).To(BeEmpty())
				Expect(s.run("", "meta", "--stream", "s1").code).To(Equal(1), "nothing was appended")
			},
			Entry("a bare-number ttl", func(k map[string]any) {
				k["retention"] = map[string]any{"mode": "stream", "ttl": 86400}
			}, "ttl 86400: want text like", true),
			Entry("more columns than SQLite allows", func(k map[string]any) {
				cols := k["columns"].([]any)
				for i := len(cols); i < recordstore.MaxColumns+1; i++ {
					cols = append(cols, map[string]any{"name": fmt.Sprintf("x%d", i), "type": "string"})
				}
				k["columns"] = cols
			}, "1999 columns", false),
			Entry("an lww version that is a key column", func(k map[string]any) {
				k["onConflict"], k["lww"] = "lww", map[string]any{"version": "id"}
			}, "lww.version id is a key column", false),
		)
	})
})

// manifestOf decodes the "manifest" field of a spool inspect line.
func manifestOf(line map[string]any) *spool.Manifest {
	raw, err := json.Marshal(line["manifest"])
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	m, err := spool.DecodeManifest(raw)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return m
}

// jsonInt renders n as a JSON integer literal.
func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
