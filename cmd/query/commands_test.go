// Happy paths of every command through the real binary, and the exact
// shape of what each prints.

package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/sqlite"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

const (
	jobRows = `{"id": 9223372036854775807, "name": "max", "at": "2024-05-01T12:00:00.123456789+02:00", "payload": {"b": [1, 2.5, "x"], "a": null}, "score": 1.25, "ok": true}
{"id": -9223372036854775808, "name": null}
`
	jobScan = `{"_seq":1,"at":"2024-05-01T10:00:00.123456Z","id":9223372036854775807,"name":"max","ok":true,"payload":{"b":[1,2.5,"x"],"a":null},"score":1.25}
{"_seq":2,"at":null,"id":-9223372036854775808,"name":null,"ok":null,"payload":null,"score":null}
`
)

var metaKeys = []string{"stream", "kind", "generation", "total", "lowSeq", "highSeq", "sealed", "createdAt", "updatedAt", "expiresAt"}

// datetimeRE is the printed form of a datetime: RFC 3339 UTC, microseconds.
const datetimeRE = `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`

var _ = Describe("query commands", func() {
	var s *store

	BeforeEach(func() {
		s = newStore()
	})

	Describe("kind apply and kind list", func() {
		It("creates the kinds of a file, one status line per kind", func() {
			Expect(s.ok("", "kind", "apply", kindsFile())).To(Equal(
				`{"name":"jobs","status":"created"}` + "\n" + `{"name":"events","status":"created"}` + "\n"))
		})

		It("reports unchanged on a second apply and updated when a column is added", func() {
			s.ok("", "kind", "apply", kindsFile())
			Expect(s.ok("", "kind", "apply", kindsFile())).To(Equal(
				`{"name":"jobs","status":"unchanged"}` + "\n" + `{"name":"events","status":"unchanged"}` + "\n"))
			more := `{"kinds":[{"name":"events","columns":[{"name":"msg","type":"string"},{"name":"level","type":"integer"}]}]}`
			Expect(s.ok(more, "kind", "apply", "-")).To(Equal(`{"name":"events","status":"updated"}` + "\n"))
		})

		It("lists every declared kind as its JSON declaration, sorted by name", func() {
			s.ok("", "kind", "apply", kindsFile())
			out := s.ok("", "kind", "list")
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			Expect(lines).To(HaveLen(2))
			var events, jobs recordstore.Kind
			Expect(json.Unmarshal([]byte(lines[0]), &events)).To(Succeed())
			Expect(json.Unmarshal([]byte(lines[1]), &jobs)).To(Succeed())
			Expect(events.Name).To(Equal("events"))
			Expect(events.Columns).To(Equal([]recordstore.Column{{Name: "msg", Type: recordstore.TypeString}}))
			Expect(jobs.Name).To(Equal("jobs"))
			Expect(jobs.Key).To(Equal([]string{"id"}))
			Expect(jobs.Policy()).To(Equal(recordstore.ConflictSkip))
			Expect(jobs.Columns).To(HaveLen(6))
			Expect(jobs.Columns[0]).To(Equal(recordstore.Column{Name: "id", Type: recordstore.TypeInteger, Required: true}))
		})

		It("prints nothing for a store without kinds", func() {
			// A write creates the store (a read of a path with no store
			// is not_found); deleting a stream it does not have adds no kind.
			Expect(s.run("", "delete", "--stream", "x").code).To(Equal(1))
			Expect(s.ok("", "kind", "list")).To(BeEmpty())
		})
	})

	Describe("append and scan", func() {
		BeforeEach(func() {
			s.ok("", "kind", "apply", kindsFile())
		})

		It("appends a file and prints the window it wrote", func() {
			f := writeFile(s.dir, "jobs.ndjson", jobRows)
			Expect(s.ok("", "append", "--stream", "s1", "--kind", "jobs", f)).To(Equal(
				`{"stream":"s1","kind":"jobs","from":1,"to":2,"appended":2,"skipped":0,"replaced":0,"role":"owner"}` + "\n"))
		})

		It("round-trips int64 extremes, json values, datetimes and nulls exactly", func() {
			s.ok(jobRows, "append", "--stream", "s1", "--kind", "jobs", "--format", "ndjson", "-")
			Expect(s.ok("", "scan", "--stream", "s1")).To(Equal(jobScan))
		})

		It("reads stdin when no file is given, and continues the seqs", func() {
			s.ok(jobRows, "append", "--stream", "s1", "--kind", "jobs")
			res := s.one(`{"id": 7}`+"\n"+`{"id": 9223372036854775807, "name": "dup"}`+"\n",
				"append", "--stream", "s1", "--kind", "jobs")
			Expect(res).To(Equal(map[string]any{"stream": "s1", "kind": "jobs",
				"from": num("3"), "to": num("3"), "appended": num("1"), "skipped": num("1"), "replaced": num("0"), "role": "owner"}))
		})

		It("counts replaced rows for a replace kind", func() {
			s.ok(`{"kinds":[{"name":"latest","columns":[{"name":"k","type":"string"},{"name":"v","type":"integer"}],"key":["k"],"onConflict":"replace"}]}`,
				"kind", "apply", "-")
			s.ok(`{"k":"a","v":1}`+"\n"+`{"k":"b","v":2}`, "append", "--stream", "l", "--kind", "latest")
			res := s.one(`{"k":"a","v":3}`, "append", "--stream", "l", "--kind", "latest")
			Expect(res["appended"]).To(Equal(num("1")))
			Expect(res["replaced"]).To(Equal(num("1")))
			Expect(s.ok("", "scan", "--stream", "l")).To(Equal(
				`{"_seq":2,"k":"b","v":2}` + "\n" + `{"_seq":3,"k":"a","v":3}` + "\n"))
		})

		It("honours --after and --limit", func() {
			s.ok(jobRows, "append", "--stream", "s1", "--kind", "jobs")
			s.ok(`{"id": 3}`, "append", "--stream", "s1", "--kind", "jobs")
			Expect(s.ok("", "scan", "--stream", "s1", "--after", "1", "--limit", "1")).To(Equal(
				`{"_seq":2,"at":null,"id":-9223372036854775808,"name":null,"ok":null,"payload":null,"score":null}` + "\n"))
			Expect(s.lines("", "scan", "--stream", "s1", "--after", "2")).To(ConsistOf(HaveKeyWithValue("_seq", num("3"))))
			Expect(s.ok("", "scan", "--stream", "s1", "--after", "3")).To(BeEmpty())
		})

		It("with --batch-rows appends in batches as owner and prints their windows together", func() {
			res := s.one(msgLines("m", 0, 2500), "append", "--stream", "big", "--kind", "events", "--batch-rows", "1000")
			Expect(res).To(Equal(map[string]any{"stream": "big", "kind": "events", "from": num("1"), "to": num("2500"),
				"appended": num("2500"), "skipped": num("0"), "replaced": num("0"), "role": "owner", "batches": num("3")}))
			Expect(s.lines("", "scan", "--stream", "big")).To(HaveLen(2500))
			Expect(s.entries(spool.StateTrash)).To(BeEmpty(), "as owner nothing goes through the spool")
		})

		It("with --batch-rows applies the rows before a bad one, and says how many", func() {
			in := msgLines("m", 0, 1499) + `{"msg": 5}` + "\n" + msgLines("n", 0, 500)
			r := s.fails("invalid", in, "append", "--stream", "big", "--kind", "events", "--batch-rows", "1000")
			Expect(r.stderr).To(ContainSubstring("stdin line 1500"))
			Expect(r.stderr).To(ContainSubstring("(applied: 1499 rows in 2 batches)"))
			Expect(s.lines("", "scan", "--stream", "big")).To(HaveLen(1499))
		})

		It("with --batch-rows counts a replacing row once in what it applied", func() {
			s.ok(`{"kinds":[{"name":"latest","columns":[{"name":"k","type":"string"},{"name":"v","type":"integer"}],"key":["k"],"onConflict":"replace"}]}`,
				"kind", "apply", "-")
			s.ok(`{"k":"a","v":1}`, "append", "--stream", "l", "--kind", "latest")
			r := s.fails("invalid", `{"k":"a","v":2}`+"\n"+`{"k":"b","v":3}`+"\n"+`{"k":"c","v":"x"}`+"\n",
				"append", "--stream", "l", "--kind", "latest", "--batch-rows", "10")
			Expect(r.stderr).To(ContainSubstring("stdin line 3"))
			Expect(r.stderr).To(ContainSubstring("(applied: 2 rows in 1 batch)"))
			Expect(s.ok("", "scan", "--stream", "l")).To(Equal(
				`{"_seq":2,"k":"a","v":2}` + "\n" + `{"_seq":3,"k":"b","v":3}` + "\n"))
		})

		It("with --batch-rows refuses a batch that repeats a key, whole, and keeps the batches before it", func() {
			r := s.fails("invalid", `{"id":1}`+"\n"+`{"id":2}`+"\n"+`{"id":3}`+"\n"+`{"id":3}`+"\n", "append", "--stream", "j", "--kind", "jobs", "--batch-rows", "2")
			Expect(r.stderr).To(ContainSubstring("kind jobs: rows 1 and 2 have the same key"), "the rows of the second batch")
			Expect(r.stderr).To(ContainSubstring("(applied: 2 rows in 1 batch)"))
			Expect(s.lines("", "scan", "--stream", "j")).To(HaveLen(2), "the first batch only")
		})

		It("with --batch-rows checks repeated keys over each batch", func() {
			By("a key seen in the batch before is not repeated in this one")
			res := s.one(`{"id":1}`+"\n"+`{"id":2}`+"\n"+`{"id":1}`+"\n", "append", "--stream", "j", "--kind", "jobs", "--batch-rows", "2")
			Expect(res["batches"]).To(Equal(num("2")))
			Expect(res["appended"]).To(Equal(num("2")))
			Expect(res["skipped"]).To(Equal(num("1")), "the third row meets the stored key 1")

			By("a key repeated 1,099 rows later in a batch of 2,000 is refused with its batch")
			var in strings.Builder
			for i := 1; i <= 1500; i++ {
				id := 100 + i
				if i == 1100 {
					id = 101
				}
				fmt.Fprintf(&in, `{"id":%d}`+"\n", id)
			}
			r := s.fails("invalid", in.String(), "append", "--stream", "k", "--kind", "jobs", "--batch-rows", "2000")
			Expect(r.stderr).To(ContainSubstring("kind jobs: rows 1 and 1100 have the same key"))
			Expect(r.stderr).To(ContainSubstring("(applied: 0 rows in 0 batches)"))
			Expect(s.run("", "meta", "--stream", "k").code).To(Equal(1), "nothing of the batch was applied")
		})

		It("with --batch-rows cuts batches of exactly N rows when N is not a multiple of its read size", func() {
			res := s.one(msgLines("m", 0, 3000), "append", "--stream", "big", "--kind", "events", "--batch-rows", "1500")
			Expect(res["batches"]).To(Equal(num("2")))
			Expect(res["to"]).To(Equal(num("3000")))
		})

		It("pages through a stream longer than one scan page", func() {
			var in strings.Builder
			for i := 1; i <= 2500; i++ {
				fmt.Fprintf(&in, `{"msg":"m%d"}`+"\n", i)
			}
			res := s.one(in.String(), "append", "--stream", "big", "--kind", "events")
			Expect(res["to"]).To(Equal(num("2500")))

			all := s.lines("", "scan", "--stream", "big")
			Expect(all).To(HaveLen(2500))
			for i, row := range all {
				Expect(row["_seq"]).To(Equal(num(fmt.Sprint(i + 1))))
				Expect(row["msg"]).To(Equal(fmt.Sprintf("m%d", i+1)))
			}
			Expect(s.lines("", "scan", "--stream", "big", "--limit", "1200")).To(HaveLen(1200))
			tail := s.lines("", "scan", "--stream", "big", "--after", "1999")
			Expect(tail).To(HaveLen(501))
			Expect(tail[0]["_seq"]).To(Equal(num("2000")))
		})
	})

	Describe("meta and streams", func() {
		BeforeEach(func() {
			s.ok("", "kind", "apply", kindsFile())
			s.ok(jobRows, "append", "--stream", "s1", "--kind", "jobs")
			s.ok(`{"msg":"hi"}`, "append", "--stream", "e1", "--kind", "events")
		})

		It("prints a stream's meta with exactly the documented fields", func() {
			m := s.one("", "meta", "--stream", "s1")
			Expect(keys(m)).To(ConsistOf(metaKeys))
			Expect(m).To(HaveKeyWithValue("stream", "s1"))
			Expect(m).To(HaveKeyWithValue("kind", "jobs"))
			Expect(m).To(HaveKeyWithValue("total", num("2")))
			Expect(m).To(HaveKeyWithValue("lowSeq", num("1")))
			Expect(m).To(HaveKeyWithValue("highSeq", num("2")))
			Expect(m).To(HaveKeyWithValue("sealed", false))
			Expect(m).To(HaveKeyWithValue("expiresAt", BeNil()))
			Expect(m["createdAt"]).To(MatchRegexp(datetimeRE))
			Expect(m["updatedAt"]).To(MatchRegexp(datetimeRE))
		})

		It("lists every live stream, sorted, or those of one kind", func() {
			all := s.lines("", "streams")
			Expect(all).To(HaveLen(2))
			Expect(all[0]).To(HaveKeyWithValue("stream", "e1"))
			Expect(all[1]).To(HaveKeyWithValue("stream", "s1"))
			Expect(keys(all[0])).To(ConsistOf(metaKeys))

			jobs := s.lines("", "streams", "--kind", "jobs")
			Expect(jobs).To(HaveLen(1))
			Expect(jobs[0]).To(HaveKeyWithValue("stream", "s1"))
			s.ok(`{"kinds":[{"name":"idle","columns":[{"name":"a","type":"string"}]}]}`, "kind", "apply", "-")
			Expect(s.ok("", "streams", "--kind", "idle")).To(BeEmpty())
		})
	})

	Describe("seal, expire, trim and delete", func() {
		BeforeEach(func() {
			s.ok("", "kind", "apply", kindsFile())
			s.ok(jobRows, "append", "--stream", "s1", "--kind", "jobs")
		})

		It("seals a stream and prints its meta after, idempotently", func() {
			m := s.one("", "seal", "--stream", "s1")
			Expect(keys(m)).To(ConsistOf(metaKeys))
			Expect(m).To(HaveKeyWithValue("sealed", true))
			Expect(s.one("", "seal", "--stream", "s1")).To(HaveKeyWithValue("sealed", true))
			Expect(s.one("", "meta", "--stream", "s1")).To(HaveKeyWithValue("sealed", true))
		})

		It("reopens a sealed stream at its current generation", func() {
			s.ok("", "seal", "--stream", "s1")
			gen := s.one("", "meta", "--stream", "s1")["generation"].(json.Number).String()
			m := s.one("", "reopen", "--stream", "s1", "--generation", gen)
			Expect(keys(m)).To(ConsistOf(metaKeys))
			Expect(m).To(HaveKeyWithValue("sealed", false))
			Expect(m).To(HaveKeyWithValue("generation", num(gen)))
			res := s.one(`{"id": 3}`, "append", "--stream", "s1", "--kind", "jobs")
			Expect(res["from"]).To(Equal(num("3")))
		})

		It("sets an expiry ttl from now", func() {
			m := s.one("", "expire", "--stream", "s1", "--ttl", "1h")
			Expect(keys(m)).To(ConsistOf(metaKeys))
			Expect(m["expiresAt"]).To(MatchRegexp(datetimeRE))
			at, err := time.Parse(time.RFC3339Nano, m["expiresAt"].(string))
			Expect(err).NotTo(HaveOccurred())
			Expect(at).To(BeTemporally("~", time.Now().Add(time.Hour), 5*time.Minute))
		})

		It("trims the rows appended before a time", func() {
			past := s.one("", "trim", "--stream", "s1", "--before", "2000-01-01T00:00:00Z")
			Expect(past).To(HaveKeyWithValue("total", num("2")))

			future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
			m := s.one("", "trim", "--stream", "s1", "--before", future)
			Expect(keys(m)).To(ConsistOf(metaKeys))
			Expect(m).To(HaveKeyWithValue("total", num("0")))
			Expect(m).To(HaveKeyWithValue("highSeq", num("2")))
			Expect(m).To(HaveKeyWithValue("lowSeq", num("3")))
			Expect(s.ok("", "scan", "--stream", "s1")).To(BeEmpty())
		})

		It("deletes a stream; appending again starts a new generation at seq 1", func() {
			before := s.one("", "meta", "--stream", "s1")
			Expect(s.ok("", "delete", "--stream", "s1")).To(Equal(`{"stream":"s1","deleted":true}` + "\n"))

			r := s.run("", "meta", "--stream", "s1")
			Expect(r.code).To(Equal(1))
			Expect(r.stderr).To(HavePrefix("query: not_found: "))

			res := s.one(`{"id": 1}`, "append", "--stream", "s1", "--kind", "jobs")
			Expect(res["from"]).To(Equal(num("1")))
			after := s.one("", "meta", "--stream", "s1")
			Expect(after["generation"]).NotTo(Equal(before["generation"]))
			Expect(after).To(HaveKeyWithValue("total", num("1")))
		})
	})

	Describe("choosing the store", func() {
		It("uses $RECORDS_STORE when --store is not given", func() {
			s.ok("", "kind", "apply", kindsFile())
			r := runQuery(s.dir, []string{"RECORDS_STORE=" + s.path}, "", "kind", "list")
			Expect(r.code).To(Equal(0), r.stderr)
			Expect(decodeLines(r.stdout)).To(HaveLen(2))
		})

		It("defaults to ./data/records.sqlite", func() {
			dir := GinkgoT().TempDir()
			r := runQuery(dir, nil, "", "kind", "apply", kindsFile())
			Expect(r.code).To(Equal(0), r.stderr)
			Expect(filepath.Join(dir, "data")).To(BeADirectory())
			other := &store{dir: dir, path: filepath.Join(dir, "data", "records.sqlite")}
			Expect(other.lines("", "kind", "list")).To(HaveLen(2))
			_, err := os.Stat(filepath.Join(s.dir, "data"))
			Expect(os.IsNotExist(err)).To(BeTrue())
		})
	})

	It("fails with corrupt, naming the live file, when that file is not a database, and leaves it as it is", func() {
		s.ok("", "kind", "apply", kindsFile())
		live := sqlite.LivePath(s.path)
		junk := bytes.Repeat([]byte("not a database "), 1000)
		Expect(os.WriteFile(live, junk, 0o600)).To(Succeed())
		for _, args := range [][]string{{"kind", "list"}, {"streams"}, {"append", "--stream", "s", "--kind", "events", "-"}} {
			r := s.run(`{"msg":"x"}`+"\n", args...)
			Expect(r.code).To(Equal(1), "query %v", args)
			Expect(r.stderr).To(HavePrefix("query: corrupt: "))
			Expect(r.stderr).To(ContainSubstring(live))
		}
		data, err := os.ReadFile(live)
		Expect(err).NotTo(HaveOccurred())
		Expect(data).To(Equal(junk))
	})

	It("prints its version", func() {
		v := s.one("", "version")
		Expect(v).To(HaveKey("version"))
		Expect(v["go"]).To(HavePrefix("go1."))
	})
})
