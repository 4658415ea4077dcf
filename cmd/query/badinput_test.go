// Bad input through the real binary: each case exits 1 with one line
// "query: <code>: <message>" on stderr, prints nothing on stdout, and
// changes nothing in the store — whether the command owns the store or
// another process (query serve) does.

package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// badCase is one refused command: its input and arguments, the code it
// must fail with and a fragment its message must contain.
type badCase struct {
	stdin string
	args  []string
	code  string
	says  string
}

// snapshot is everything a refused command must leave as it was: the
// kinds, the meta of every live stream (s1 and sealed1), s1's meta on its
// own and its rows.
type snapshot struct {
	kinds, streams, s1, s1rows string
}

func (s *store) snapshot() snapshot {
	return snapshot{
		kinds:   s.ok("", "kind", "list"),
		streams: s.ok("", "streams"),
		s1:      s.ok("", "meta", "--stream", "s1"),
		s1rows:  s.ok("", "scan", "--stream", "s1"),
	}
}

func appendJobs(stdin string) badCase {
	return badCase{stdin: stdin, args: []string{"append", "--stream", "s1", "--kind", "jobs"}}
}

func (c badCase) fails(code, says string) badCase {
	c.code, c.says = code, says
	return c
}

func kindApply(file string) badCase {
	return badCase{stdin: file, args: []string{"kind", "apply", "-"}}
}

const (
	jobsChangedType    = `{"kinds":[{"name":"jobs","columns":[{"name":"id","type":"string","required":true},{"name":"name","type":"string"},{"name":"at","type":"datetime"},{"name":"payload","type":"json"},{"name":"score","type":"number"},{"name":"ok","type":"bool"}],"key":["id"]}]}`
	jobsChangedKey     = `{"kinds":[{"name":"jobs","columns":[{"name":"id","type":"integer","required":true},{"name":"name","type":"string"},{"name":"at","type":"datetime"},{"name":"payload","type":"json"},{"name":"score","type":"number"},{"name":"ok","type":"bool"}],"key":["name"]}]}`
	jobsChangedPolicy  = `{"kinds":[{"name":"jobs","columns":[{"name":"id","type":"integer","required":true},{"name":"name","type":"string"},{"name":"at","type":"datetime"},{"name":"payload","type":"json"},{"name":"score","type":"number"},{"name":"ok","type":"bool"}],"key":["id"],"onConflict":"replace"}]}`
	bareTTLKinds       = `{"kinds":[{"name":"k2","columns":[{"name":"a","type":"string"}],"retention":{"mode":"stream","ttl":86400}}]}`
	jsonKeyKinds       = `{"kinds":[{"name":"k2","columns":[{"name":"doc","type":"json"}],"key":["doc"]}]}`
	lwwKeyVersionKinds = `{"kinds":[{"name":"k2","columns":[{"name":"a","type":"string"},{"name":"v","type":"integer"}],"key":["a","v"],"onConflict":"lww","lww":{"version":"v"}}]}`
	newThenConflict    = `{"kinds":[{"name":"fresh","columns":[{"name":"a","type":"string"}]},{"name":"events","columns":[{"name":"msg","type":"integer"}]}]}`
)

// badEntries are the refused commands, run without an owner (the command
// owns the store) and with query serve owning it (the command is a
// non-owner and must refuse before anything reaches the spool).
var badEntries = []any{
	Entry("unknown column", appendJobs(`{"id": 5, "colour": "red"}`).fails("invalid", `unknown column "colour"`)),
	Entry("a string into an integer", appendJobs(`{"id": "five"}`).fails("invalid", "stdin line 1: kind jobs: column id (integer)")),
	Entry("1.5 into an integer", appendJobs(`{"id": 1.5}`).fails("invalid", "column id")),
	Entry("a datetime that is not RFC 3339", appendJobs(`{"id": 5, "at": "01/05/2024 12:00"}`).fails("invalid", "column at")),
	Entry("a missing required column", appendJobs(`{"name": "no id"}`).fails("invalid", "column id is required")),
	Entry("one bad row among good ones", appendJobs(`{"id": 10}`+"\n\n"+`{"id": 11}`+"\n"+`{"id": "x"}`).fails("invalid", "stdin line 4: kind jobs: column id")),
	Entry("a malformed NDJSON line", appendJobs(`{"id": 10}`+"\n"+`{"id": 11,`).fails("invalid", "stdin line 2: malformed JSON")),
	Entry("a line that is not an object", appendJobs(`{"id": 10}`+"\n"+`[11]`).fails("invalid", "stdin line 2: want a JSON object")),
	Entry("empty input", appendJobs("").fails("invalid", "no rows (empty input)")),
	Entry("a key repeated in the input, refused by the store's own rule (rows count from 1)",
		appendJobs(`{"id": 10}`+"\n"+`{"id": 11}`+"\n"+`{"id": 10, "name": "again"}`).fails("invalid", "append to s1: kind jobs: rows 1 and 3 have the same key")),
	Entry("an invalid stream name",
		badCase{stdin: `{"id": 5}`, args: []string{"append", "--stream", "bad/name", "--kind", "jobs"}}.fails("invalid", `stream id "bad/name"`)),
	Entry("an invalid kind name",
		badCase{stdin: `{"id": 5}`, args: []string{"append", "--stream", "s1", "--kind", "9jobs"}}.fails("invalid", `kind name "9jobs"`)),
	Entry("an undeclared kind",
		badCase{stdin: `{"id": 5}`, args: []string{"append", "--stream", "s2", "--kind", "nokind"}}.fails("not_found", "nokind")),
	Entry("rows of another kind than the stream's",
		badCase{stdin: `{"msg": "x"}`, args: []string{"append", "--stream", "s1", "--kind", "events"}}.fails("schema_conflict", "")),
	Entry("an append to a sealed stream",
		badCase{stdin: `{"msg": "more"}`, args: []string{"append", "--stream", "sealed1", "--kind", "events"}}.fails("sealed", "sealed1")),
	Entry("a kind redeclared with a changed type", kindApply(jobsChangedType).fails("schema_conflict", "column id")),
	Entry("a kind redeclared with a changed key", kindApply(jobsChangedKey).fails("schema_conflict", "key")),
	Entry("a kind redeclared with a changed policy", kindApply(jobsChangedPolicy).fails("schema_conflict", "onConflict")),
	Entry("a kind file whose second kind conflicts declares neither", kindApply(newThenConflict).fails("schema_conflict", "events")),
	Entry("an invalid kind name in a kind file",
		kindApply(`{"kinds":[{"name":"bad-name","columns":[{"name":"a","type":"string"}]}]}`).fails("invalid", `kind name "bad-name"`)),
	Entry("an unknown column type in a kind file",
		kindApply(`{"kinds":[{"name":"k2","columns":[{"name":"a","type":"text"}]}]}`).fails("invalid", `unknown type "text"`)),
	Entry("an unknown field in a kind file",
		kindApply(`{"kinds":[{"name":"k2","colums":[]}]}`).fails("invalid", `unknown field "colums"`)),
	Entry("a kind file without kinds", kindApply(`{"kinds":[]}`).fails("invalid", "no kinds")),
	Entry("an empty kind file", kindApply("").fails("invalid", "kind file stdin: empty input")),
	Entry("a kind file whose column has a bad field, by kind, column and field",
		kindApply(`{"kinds":[{"name":"k2","columns":[{"name":"a","type":"string","required":"yes"}]}]}`).fails("invalid",
			`kind file stdin: kind 1 ("k2"): column 1 ("a"): field required: want true or false, got string`)),
	Entry("a bare-number ttl in a kind file", kindApply(bareTTLKinds).fails("invalid", `kind 1 ("k2"): retention: ttl 86400: want text like "24h"`)),
	Entry("a ttl below a second in a kind file", kindApply(strings.Replace(bareTTLKinds, "86400", `"86400ns"`, 1)).fails("invalid", "retention.ttl 86.4µs: want at least 1s")),
	Entry("a json key column in a kind file", kindApply(jsonKeyKinds).fails("invalid", "kind k2: key column doc is json")),
	Entry("an lww version that is a key column in a kind file", kindApply(lwwKeyVersionKinds).fails("invalid", "lww.version v is a key column")),
	Entry("a kind of more columns than SQLite allows in a kind file", kindApply(wideKindFile(1999)).fails("invalid", "kind k2: 1999 columns: a kind has at most 1998 columns")),
	Entry("a kind file that is not JSON", kindApply(`kinds: []`).fails("invalid", "kind file stdin")),
	Entry("a kind file that does not exist",
		badCase{args: []string{"kind", "apply", "/nonexistent/kinds.json"}}.fails("invalid", "/nonexistent/kinds.json")),
	Entry("scan of an unknown stream", badCase{args: []string{"scan", "--stream", "nope"}}.fails("not_found", "nope")),
	Entry("scan with a filter on an unknown column",
		badCase{args: []string{"scan", "--stream", "s1", "--where", "colour=red"}}.fails("invalid", `no column "colour"`)),
	Entry("scan with a filter value of the wrong type",
		badCase{args: []string{"scan", "--stream", "s1", "--where", "score>=high"}}.fails("invalid", `filter "score>=high"`)),
	Entry("scan with a filter without an operator",
		badCase{args: []string{"scan", "--stream", "s1", "--where", "score"}}.fails("invalid", "no operator")),
	Entry("scan sorted by a column without an index",
		badCase{args: []string{"scan", "--stream", "s1", "--sort", "name"}}.fails("invalid", "sorts only by")),
	Entry("scan with a time window on a kind without a time column",
		badCase{args: []string{"scan", "--stream", "s1", "--from", "2026-12-01T00:00:00Z"}}.fails("invalid", "time column")),
	Entry("scan with a from that is not a datetime",
		badCase{args: []string{"scan", "--stream", "s1", "--from", "noon"}}.fails("invalid", "--from")),
	Entry("scan in an unknown format", badCase{args: []string{"scan", "--stream", "s1", "--format", "xml"}}.fails("invalid", "format")),
	Entry("scan of a page larger than 1000 rows",
		badCase{args: []string{"scan", "--stream", "s1", "--page-size", "1001"}}.fails("invalid", "page_size")),
	Entry("scan with a cursor of nothing",
		badCase{args: []string{"scan", "--stream", "s1", "--page-size", "1", "--cursor", "nope"}}.fails("invalid", "cursor")),
	Entry("meta of an unknown stream", badCase{args: []string{"meta", "--stream", "nope"}}.fails("not_found", "nope")),
	Entry("seal of an unknown stream", badCase{args: []string{"seal", "--stream", "nope"}}.fails("not_found", "nope")),
	Entry("trim of an unknown stream",
		badCase{args: []string{"trim", "--stream", "nope", "--before", "2030-01-01T00:00:00Z"}}.fails("not_found", "nope")),
	Entry("expire of an unknown stream", badCase{args: []string{"expire", "--stream", "nope", "--ttl", "1h"}}.fails("not_found", "nope")),
	Entry("reopen at another generation than the current one",
		badCase{args: []string{"reopen", "--stream", "sealed1", "--generation", "2"}}.fails("not_found", "generation 2")),
	Entry("reopen of an unknown stream", badCase{args: []string{"reopen", "--stream", "nope", "--generation", "1"}}.fails("not_found", "nope")),
	Entry("delete of an unknown stream", badCase{args: []string{"delete", "--stream", "nope"}}.fails("not_found", "nope")),
	Entry("meta with an invalid stream name", badCase{args: []string{"meta", "--stream", ".."}}.fails("invalid", "stream id")),
	Entry("expire with a zero ttl", badCase{args: []string{"expire", "--stream", "s1", "--ttl", "0s"}}.fails("invalid", "ttl")),
	Entry("expire with a negative ttl", badCase{args: []string{"expire", "--stream", "s1", "--ttl=-1h"}}.fails("invalid", "ttl")),
	Entry("streams of an undeclared kind", badCase{args: []string{"streams", "--kind", "nothing"}}.fails("not_found", "kind nothing")),
	Entry("streams of an invalid kind name", badCase{args: []string{"streams", "--kind", "no-such"}}.fails("invalid", "kind name")),
}

var _ = Describe("bad input", func() {
	seededStores(func(st func() *store, served bool) {
		DescribeTable("is refused with its code and changes nothing", append([]any{
			func(c badCase) {
				s := st()
				before := s.snapshot()
				r := s.run(c.stdin, c.args...)
				Expect(r.code).To(Equal(1), "stdout %q stderr %q", r.stdout, r.stderr)
				Expect(r.stdout).To(BeEmpty())
				Expect(r.stderr).To(HaveSuffix("\n"))
				Expect(strings.Count(r.stderr, "\n")).To(Equal(1), "one line on stderr: %q", r.stderr)
				prefix := "query: " + c.code + ": "
				Expect(r.stderr).To(HavePrefix(prefix))
				msg := strings.TrimPrefix(strings.TrimSuffix(r.stderr, "\n"), prefix)
				Expect(msg).NotTo(HavePrefix(recordstore.SentinelForCode(c.code).Error()+":"), "the code is not repeated")
				Expect(msg).To(ContainSubstring(c.says))
				Expect(s.snapshot()).To(Equal(before))
				if served {
					expectNothingSpooled(s)
				}
			}}, badEntries...)...,
		)

		if !served {
			It("names an input file called after a code's word in full", func() {
				s := st()
				Expect(os.WriteFile(filepath.Join(s.dir, "invalid"), nil, 0o600)).To(Succeed())
				r := s.run("", "append", "--stream", "s1", "--kind", "jobs", "invalid")
				Expect(r.code).To(Equal(1), "stdout %q stderr %q", r.stdout, r.stderr)
				Expect(r.stderr).To(Equal("query: invalid: invalid: no rows (empty input)\n"))
			})
		}
	})
})

// seededStores declares body's specs twice — with no owner running, and
// with query serve owning the store — on a fresh store holding the kinds of
// kindsFile, jobRows in stream s1 and a sealed stream sealed1. st returns
// the running spec's store.
func seededStores(body func(st func() *store, served bool)) {
	for _, served := range []bool{false, true} {
		name := "with no owner running"
		if served {
			name = "with query serve owning the store"
		}
		Context(name, func() {
			var s *store
			BeforeEach(func() {
				s = newStore()
				s.ok("", "kind", "apply", kindsFile())
				s.ok(jobRows, "append", "--stream", "s1", "--kind", "jobs")
				s.ok(`{"msg":"last"}`, "append", "--stream", "sealed1", "--kind", "events")
				s.ok("", "seal", "--stream", "sealed1")
				if served {
					startServe(s)
				}
			})
			body(func() *store { return s }, served)
		})
	}
}

// expectNothingSpooled checks that every spool folder is empty.
func expectNothingSpooled(s *store) {
	GinkgoHelper()
	for _, state := range []spool.State{spool.StateTmp, spool.StateIncoming, spool.StateFailed, spool.StateTrash} {
		Expect(s.entries(state)).To(BeEmpty(), "nothing was spooled (%s)", state)
	}
}

// wideKindFile is a kind file declaring kind k2 with n string columns
// c0, c1, ...
func wideKindFile(n int) string {
	cols := make([]string, n)
	for i := range cols {
		cols[i] = fmt.Sprintf(`{"name":"c%d","type":"string"}`, i)
	}
	return `{"kinds":[{"name":"k2","columns":[` + strings.Join(cols, ",") + `]}]}`
}
