// query append --schema: declaring the kind from a kind file before the
// append, with or without an owner running; bad schemas refused before
// anything is declared; and a store whose owner runs a build of another
// catalog version (played by this test process), which the query binary
// opens detached — writes through the spool, reads fail with
// catalog_version, and a detached serve answers reads with 503.

package main_test

import (
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// otherCatalogVersion is the catalog version of the owner this test
// process plays.
const otherCatalogVersion = sqlite.CatalogVersion + 1

// ownAsOtherVersion makes this test process the owner of the store at path
// as a build of otherCatalogVersion: its state file says that version, so
// the query binary (a build of sqlite.CatalogVersion) opens the store
// detached. Its live file is the SQLite backend's own, so that the spec
// can read what it applied. It is closed at the end of the spec.
func ownAsOtherVersion(path string) *owner.Store[*sqlite.Backend] {
	GinkgoHelper()
	st, err := owner.Open(context.Background(), owner.Options[*sqlite.Backend]{
		Path:           path,
		CatalogVersion: otherCatalogVersion,
		Build:          "records catalog v" + strconv.Itoa(otherCatalogVersion),
		Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*sqlite.Backend, error) {
			return sqlite.Open(ctx, path, sqlite.Options{ReadOnly: readOnly, Submit: submit, SweepInterval: -1})
		},
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(st.Close()).To(Succeed()) })
	Expect(st.Role()).To(Equal(owner.RoleOwner))
	return st
}

// ids returns the id column of every row of stream, read by the owner.
func ids(st *owner.Store[*sqlite.Backend], stream string) []int64 {
	GinkgoHelper()
	recs, err := st.Backend().Scan(context.Background(), stream, recordstore.ScanOptions{})
	Expect(err).NotTo(HaveOccurred())
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Values["id"].(int64)
	}
	return out
}

// detachedWarning is the line a detached command logs on stderr (at the
// default level, warn).
var detachedWarning = regexp.MustCompile(`(?m)^time=\S+ level=WARN msg="detached: the owner runs another catalog version; reads fail, writes go through the spool" .*owner_catalog_version=` +
	strconv.Itoa(otherCatalogVersion) + ` catalog_version=` + strconv.Itoa(sqlite.CatalogVersion) + `\n`)

// detached runs a command against a store this process owns as a build of
// otherCatalogVersion, and returns its result without the detached
// warning on stderr (there when the command opened the store).
func (s *store) detached(stdin string, args ...string) result {
	r := s.run(stdin, args...)
	r.stderr = detachedWarning.ReplaceAllString(r.stderr, "")
	return r
}

// detachedOne runs a command that must succeed detached with one JSON
// object as output.
func (s *store) detachedOne(stdin string, args ...string) map[string]any {
	GinkgoHelper()
	r := s.detached(stdin, args...)
	Expect(r.code).To(Equal(0), "query %v: %s", args, r.stderr)
	Expect(r.stderr).To(BeEmpty())
	out := decodeLines(r.stdout)
	Expect(out).To(HaveLen(1))
	return out[0]
}

// failsWith checks that a run failed with exit 1, one line "query: code:
// ..." on stderr containing says, and nothing on stdout.
func failsWith(r result, code, says string) {
	GinkgoHelper()
	Expect(r.code).To(Equal(1), "stdout %q stderr %q", r.stdout, r.stderr)
	Expect(r.stdout).To(BeEmpty())
	Expect(r.stderr).To(HavePrefix("query: " + code + ": "))
	Expect(strings.Count(r.stderr, "\n")).To(Equal(1), "one line on stderr: %q", r.stderr)
	Expect(r.stderr).To(ContainSubstring(says))
}

// Kind files for --schema.
const (
	eventsOnly     = `{"kinds":[{"name":"events","columns":[{"name":"msg","type":"string"}]}]}`
	jobsBadType    = `{"kinds":[{"name":"jobs","columns":[{"name":"id","type":"blob"}]}]}`
	freshKind      = `{"kinds":[{"name":"fresh","columns":[{"name":"a","type":"string"}]}]}`
	malformedKinds = `{"kinds": [`
)

var _ = Describe("query append --schema", func() {
	for _, served := range []bool{false, true} {
		name, role := "with no owner running", "owner"
		if served {
			name, role = "with query serve owning the store", "spooled"
		}
		Context(name, func() {
			It("declares the kind from the file, then appends, as kind apply followed by append would", func() {
				s := newStore()
				if served {
					startServe(s)
				}
				Expect(s.one(jobRows, "append", "--stream", "s1", "--kind", "jobs", "--schema", kindsFile())).To(Equal(map[string]any{
					"stream": "s1", "kind": "jobs", "from": num("1"), "to": num("2"), "appended": num("2"),
					"skipped": num("0"), "replaced": num("0"), "role": role}))
				kinds := s.lines("", "kind", "list")
				Expect(kinds).To(HaveLen(1), "only the kind appended to is declared")
				Expect(kinds[0]).To(HaveKeyWithValue("name", "jobs"))
				Expect(s.ok("", "scan", "--stream", "s1")).To(Equal(jobScan))

				// Declared already: unchanged, and the append goes on.
				Expect(s.one(`{"id": 1}`, "append", "--stream", "s1", "--kind", "jobs", "--schema", kindsFile())).To(
					HaveKeyWithValue("from", num("3")))
				Expect(s.lines("", "kind", "list")).To(HaveLen(1))

				// The schema from stdin, the rows from a file.
				rows := writeFile(s.dir, "events.ndjson", `{"msg":"hi"}`)
				out := s.one(eventsOnly, "append", "--stream", "e1", "--kind", "events", "--schema", "-", rows)
				Expect(out).To(HaveKeyWithValue("to", num("1")))
				Expect(out).To(HaveKeyWithValue("role", role))
				Expect(s.ok("", "scan", "--stream", "e1")).To(Equal(`{"_seq":1,"msg":"hi"}` + "\n"))
			})
		})
	}

	seededStores(func(st func() *store, served bool) {
		DescribeTable("a bad schema, or a bad row, is refused before anything is declared or appended",
			func(schema, kind, rows, code, says string) {
				s := st()
				file := "/nonexistent/kinds.json"
				if schema != "" {
					file = writeFile(s.dir, "schema.json", schema)
				}
				before := s.snapshot()
				failsWith(s.run(rows, "append", "--stream", "s2", "--kind", kind, "--schema", file), code, says)
				Expect(s.snapshot()).To(Equal(before))
				Expect(s.run("", "meta", "--stream", "s2").code).To(Equal(1), "stream s2 was created")
				if served {
					expectNothingSpooled(s)
				}
			},
			Entry("a malformed file", malformedKinds, "jobs", jobRows, "invalid", "kind file"),
			Entry("a file without kinds", `{"kinds":[]}`, "jobs", jobRows, "invalid", "no kinds"),
			Entry("a missing file", "", "jobs", jobRows, "invalid", "/nonexistent/kinds.json"),
			Entry("a file that does not declare the kind", eventsOnly, "jobs", jobRows, "invalid", "does not declare kind jobs"),
			Entry("an invalid declaration", jobsBadType, "jobs", jobRows, "invalid", "blob"),
			Entry("a declaration that conflicts with the stored one", jobsChangedType, "jobs", jobRows, "schema_conflict", "column id"),
			Entry("a row that does not fit a new kind", freshKind, "fresh", `{"a": 1}`, "invalid", "stdin line 1"),
			Entry("a kind of more columns than SQLite allows", wideKindFile(1999), "k2", `{"c0": "x"}`, "invalid", "1999 columns"),
			Entry("a bare-number ttl", bareTTLKinds, "k2", `{"a": "x"}`, "invalid", `ttl 86400: want text like "24h"`),
			Entry("an lww version that is a key column", lwwKeyVersionKinds, "k2", `{"a": "x", "v": 1}`, "invalid", "lww.version v is a key column"),
		)
	})
})

var _ = Describe("a store owned by a build of another catalog version", Label("integration"), func() {
	var (
		s   *store
		own *owner.Store[*sqlite.Backend]
	)

	BeforeEach(func() {
		s = newStore()
		own = ownAsOtherVersion(s.path)
	})

	It("takes writes through the spool with the owner's exact results; reads fail with catalog_version", func() {
		r := s.run(jobRows, "append", "--stream", "s1", "--kind", "jobs", "--schema", kindsFile())
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(detachedWarning.FindAllString(r.stderr, -1)).To(Equal([]string{r.stderr}), "the detached warning, alone")
		Expect(decodeLines(r.stdout)).To(Equal([]map[string]any{{
			"stream": "s1", "kind": "jobs", "from": num("1"), "to": num("2"), "appended": num("2"),
			"skipped": num("0"), "replaced": num("0"), "role": "spooled"}}))
		Expect(ids(own, "s1")).To(Equal([]int64{9223372036854775807, -9223372036854775808}))

		failsWith(s.detached(`{"id": 3}`, "append", "--stream", "s1", "--kind", "jobs"), "catalog_version", "pass --schema FILE")
		failsWith(s.detached("", "scan", "--stream", "s1"), "catalog_version",
			"the owner uses catalog version "+strconv.Itoa(otherCatalogVersion)+", this build "+strconv.Itoa(sqlite.CatalogVersion))
		failsWith(s.detached("", "scan", "--stream", "s1", "--follow"), "catalog_version", "detached")
		failsWith(s.detached("", "meta", "--stream", "s1"), "catalog_version", "detached")
		failsWith(s.detached("", "streams"), "catalog_version", "detached")
		failsWith(s.detached("", "kind", "list"), "catalog_version", "detached")
		Expect(ids(own, "s1")).To(HaveLen(2), "a refused command wrote")

		r = s.detached("", "kind", "apply", kindsFile())
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(decodeLines(r.stdout)).To(Equal([]map[string]any{
			{"name": "jobs", "status": "unchanged"}, {"name": "events", "status": "created"}}))
		failsWith(s.detached("", "kind", "apply", "-"), "invalid", "stdin")
		failsWith(s.detached(jobsChangedType, "kind", "apply", "-"), "schema_conflict", "column id")

		out := s.detachedOne(`{"msg":"queued"}`, "append", "--stream", "e1", "--kind", "events", "--schema", kindsFile(), "--no-wait")
		Expect(keys(out)).To(ConsistOf("batch", "pending"))
		Eventually(func() int {
			recs, err := own.Backend().Scan(context.Background(), "e1", recordstore.ScanOptions{})
			if err != nil {
				return 0
			}
			return len(recs)
		}).WithTimeout(liveness).Should(Equal(1))

		sealed := s.detachedOne("", "seal", "--stream", "s1")
		Expect(sealed).To(HaveKeyWithValue("sealed", true))
		Expect(sealed).To(HaveKeyWithValue("highSeq", num("2")))
		failsWith(s.detached(`{"id": 3}`, "append", "--stream", "s1", "--kind", "jobs", "--schema", kindsFile()), "sealed", "s1")
		failsWith(s.detached("", "delete", "--stream", "nope"), "not_found", "nope")
		Expect(s.detachedOne("", "reopen", "--stream", "s1", "--generation", "1")).To(HaveKeyWithValue("sealed", false))
		Expect(s.detachedOne("", "expire", "--stream", "e1", "--ttl", "1h")).To(HaveKeyWithValue("stream", "e1"))
		Expect(s.detachedOne("", "trim", "--stream", "s1", "--before", "2000-01-01T00:00:00Z")).To(HaveKeyWithValue("stream", "s1"))
		Expect(s.detachedOne("", "delete", "--stream", "e1")).To(HaveKeyWithValue("deleted", true))
		Expect(ids(own, "s1")).To(HaveLen(2))
		Expect(own.Role()).To(Equal(owner.RoleOwner))
	})

	It("spool publish needs --schema: the catalog of another version is not this build's to read", func() {
		r := s.run(jobRows, "spool", "publish", "--stream", "s1", "--kind", "jobs")
		failsWith(r, "catalog_version", "pass --schema FILE")
		Expect(r.stderr).To(ContainSubstring("the owner uses catalog version " + strconv.Itoa(otherCatalogVersion)))
		expectNothingSpooled(s)

		out := s.ok(jobRows, "spool", "publish", "--stream", "s1", "--kind", "jobs", "--schema", kindsFile())
		Expect(decodeLines(out)).To(HaveLen(1))
		Expect(decodeLines(out)[0]).To(HaveKeyWithValue("rows", num("2")))
		Eventually(func() int {
			recs, err := own.Backend().Scan(context.Background(), "s1", recordstore.ScanOptions{})
			if err != nil {
				return 0
			}
			return len(recs)
		}).WithTimeout(liveness).Should(Equal(2), "the owner ingests the published batch")
	})

	It("is served detached: serve logs the role, reads answer 503 with code catalog_version, health and status answer", func() {
		session, base := startServe(s)
		Eventually(logOf(session)).WithTimeout(liveness).Should(ContainSubstring("level=WARN msg=role role=detached"))

		for _, path := range []string{"/api/v1/streams", "/api/v1/streams/s1", "/api/v1/streams/s1/rows",
			"/api/v1/streams/s1/follow", "/"} {
			status, _, body := get(base + path)
			Expect(status).To(Equal(http.StatusServiceUnavailable), "%s: %s", path, body)
			code, msg := errorOf(body)
			Expect(code).To(Equal("catalog_version"), path)
			Expect(msg).To(ContainSubstring("detached"), path)
		}
		status, _, body := get(base + "/healthz")
		Expect(status).To(Equal(http.StatusOK), body)
		status, _, body = get(base + "/api/v1/status")
		Expect(status).To(Equal(http.StatusOK), body)
		Expect(body).To(ContainSubstring(`"catalogVersion":` + strconv.Itoa(otherCatalogVersion)))

		// A write from another command still reaches the owner.
		Expect(s.detachedOne(`{"msg":"hi"}`, "append", "--stream", "e1", "--kind", "events", "--schema", kindsFile())).To(
			HaveKeyWithValue("role", "spooled"))

		session.Signal(syscall.SIGTERM)
		Eventually(session).WithTimeout(liveness).Should(gexec.Exit(0))
		Expect(logOf(session)()).To(ContainSubstring("msg=stopped"))
		Expect(logOf(session)()).NotTo(ContainSubstring("role=owner"), "the detached serve took the store over")
		Expect(own.Role()).To(Equal(owner.RoleOwner))
		Expect(filepath.Join(s.dir, "v"+strconv.Itoa(otherCatalogVersion))).NotTo(BeAnExistingFile())
	})
})
