// The import direction of the package table in DESIGN.md, enforced over
// what "go list" reports for the root module: imports point down the
// table, never up.

package recordstore_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// modulePath is the root module's path; the rules name packages relative
// to it.
const modulePath = "github.com/fb46ecde/records"

// listedPackage is the part of "go list -json" a layering rule reads.
type listedPackage struct {
	ImportPath string
	Imports    []string // direct imports
	Deps       []string // every package it depends on, transitively
}

// layerRule says what the packages under Under may import inside the
// repository (packages relative to the module; "P/..." is P and every
// package below it) and whether every package
// they depend on, transitively, must be in the standard library or in
// recordstore/internal.
type layerRule struct {
	Under   string
	May     []string
	StdOnly bool
	Modules []string // with StdOnly: the modules outside the repository allowed besides the standard library
}

// layerRules is DESIGN.md's package table. The most specific rule (the
// longest Under) applies to a package; a package of the repository that
// no rule covers is a violation, so that a new package comes with its
// place in the table.
var layerRules = []layerRule{
	{Under: "recordstore", May: []string{"recordstore/internal/...", "recordstore/fsutil"}, StdOnly: true, Modules: []string{"golang.org/x/sys"}},
	// fsutil is the one durable-file helper, public API with a stated
	// contract (its package doc) that drakkar/ and cmd/ use as any program
	// would; it depends on nothing above.
	{Under: "recordstore/fsutil", StdOnly: true, Modules: []string{"golang.org/x/sys"}},
	// fsutil makes its system calls (fsync, flock) through the Go
	// project's golang.org/x/sys.
	{Under: "recordstore/internal", StdOnly: true, Modules: []string{"golang.org/x/sys"}},
	// seams reaches unexported fault-injection fields of other packages'
	// options, which hold fsutil helpers.
	{Under: "recordstore/internal/seams", May: []string{"recordstore/fsutil"}, StdOnly: true, Modules: []string{"golang.org/x/sys"}},
	{Under: "recordstore/spool", May: []string{"recordstore", "recordstore/internal/...", "recordstore/fsutil"}},
	{Under: "recordstore/spool/parquet", May: []string{"recordstore", "recordstore/internal/...", "recordstore/fsutil", "recordstore/spool"}},
	{Under: "recordstore/sqlite", May: []string{"recordstore", "recordstore/internal/...", "recordstore/fsutil"}},
	// submitonly is the backend of a process that writes through the
	// spool and cannot read the store; it knows no SQLite.
	{Under: "recordstore/submitonly", May: []string{"recordstore", "recordstore/internal/...", "recordstore/fsutil"}},
	{Under: "recordstore/owner", May: []string{"recordstore", "recordstore/internal/...", "recordstore/fsutil", "recordstore/spool"}},
	// records is the one front door: Open wires the owner election to the
	// SQLite backend, or the submit-only one, for every caller above it.
	{Under: "recordstore/records", May: []string{"recordstore", "recordstore/internal/...", "recordstore/fsutil", "recordstore/spool",
		"recordstore/sqlite", "recordstore/submitonly", "recordstore/owner"}},
	{Under: "recordstore/recordresults", May: []string{"recordstore", "recordstore/internal/...", "recordstore/fsutil", "recordstore/spool",
		"recordstore/spool/parquet", "recordstore/sqlite", "recordstore/submitonly", "recordstore/owner", "recordstore/records"}},
	// console is the web console query serve mounts: embedded files and a
	// handler over the read API's backend, the owner's status and the spool.
	{Under: "recordstore/recordresults/console", May: []string{"recordstore", "recordstore/internal/...", "recordstore/fsutil", "recordstore/spool", "recordstore/owner"}},
	// ownermetrics is the library's Prometheus side (the owner's hooks,
	// the store and fleet collectors, the request metrics and /metrics):
	// the one package of the library with client_golang, so that the
	// owner and the HTTP handlers stay free of it.
	{Under: "recordstore/ownermetrics", May: []string{"recordstore", "recordstore/internal/...", "recordstore/owner", "recordstore/fleet"}},
	// replica replicates, restores and verifies a store's file through
	// Litestream; it reads the engine's own tables to prove a restore.
	{Under: "recordstore/replica", May: []string{"recordstore", "recordstore/internal/...", "recordstore/fsutil", "recordstore/sqlite", "recordstore/owner"}},
	// lake exports streams as Parquet files with a manifest to a folder or
	// S3-compatible storage; it reads through the read API and takes the
	// address rules of replica.
	{Under: "recordstore/lake", May: []string{"recordstore", "recordstore/internal/...", "recordstore/fsutil", "recordstore/spool",
		"recordstore/spool/parquet", "recordstore/sqlite", "recordstore/submitonly", "recordstore/owner", "recordstore/recordresults", "recordstore/replica"}},
	{Under: "recordstore/fleet", May: []string{"recordstore", "recordstore/internal/...", "recordstore/fsutil", "recordstore/sqlite", "recordstore/owner", "recordstore/records", "recordstore/replica"}},
	// fleethttp serves a fleet over HTTP: each store's read API
	// (recordresults.Handler) under the tenant's prefix; the fleet itself
	// knows no HTTP.
	{Under: "recordstore/fleet/fleethttp", May: []string{"recordstore", "recordstore/internal/...", "recordstore/fleet", "recordstore/recordresults"}},
	{Under: "recordstoretest", May: []string{"recordstore", "recordstore/spool", "recordstore/owner"}},
	// benchdata is test support: the benchmarks' rows and raw-SQLite
	// baseline, imported only by _test files, never by the core it
	// measures.
	// s3serve runs the test S3 server by hand (the README's tour).
	{Under: "recordstoretest/s3test/s3serve", May: []string{"recordstoretest/s3test"}},
	{Under: "recordstoretest/benchdata", May: []string{"recordstore", "recordstore/sqlite"}},
	// The Drakkar layer, bottom up: dbfiles (and drakkar/internal: the
	// config key table, the sentinels' codes);
	// recorder, merge, cache and registry; archive; debugapi; worker on
	// top. Each imports only what is below it. A new drakkar package
	// falls under this first rule, which lets it import none of the
	// others, until it takes its place in the table.
	{Under: "drakkar", May: []string{"recordstore/..."}},
	// dbfiles is the pure file layer of the Drakkar databases: names,
	// encodings, DDL text; it makes its files durable through fsutil, takes
	// its error codes from the core (its sentinels wrap ErrInvalid) and
	// knows neither the engine nor SQLite.
	{Under: "drakkar/dbfiles", May: []string{"recordstore", "recordstore/fsutil"}, StdOnly: true, Modules: []string{"golang.org/x/sys"}},
	// registry is the fleet registry's file provider: cards and clock
	// markers in a shared folder, nothing of the engine or SQLite; the
	// cache imports it for its peers, never the reverse.
	{Under: "drakkar/registry", May: []string{"drakkar/dbfiles", "drakkar/internal/...", "recordstore", "recordstore/fsutil"}, StdOnly: true, Modules: []string{"golang.org/x/sys"}},
	// configkeys is the one key table of the drakkar configurations:
	// typed keys over the core's error codes, beside dbfiles at the
	// bottom.
	{Under: "drakkar/internal/configkeys", May: []string{"recordstore"}, StdOnly: true, Modules: []string{"golang.org/x/sys"}},
	// errcode gives the drakkar sentinels their codes, over the core's
	// Error.
	{Under: "drakkar/internal/errcode", May: []string{"recordstore"}, StdOnly: true, Modules: []string{"golang.org/x/sys"}},
	{Under: "drakkar/recorder", May: []string{"recordstore/...", "drakkar/dbfiles", "drakkar/internal/..."}},
	{Under: "drakkar/merge", May: []string{"recordstore/...", "drakkar/dbfiles", "drakkar/internal/..."}},
	{Under: "drakkar/cache", May: []string{"recordstore/...", "drakkar/dbfiles", "drakkar/internal/...", "drakkar/registry"}},
	// archive folds sealed recorder files with the merge engine.
	{Under: "drakkar/archive", May: []string{"recordstore/...", "drakkar/dbfiles", "drakkar/internal/...",
		"drakkar/recorder", "drakkar/merge", "drakkar/cache", "drakkar/registry"}},
	// debugapi serves the routes over every component below it.
	{Under: "drakkar/debugapi", May: []string{"recordstore/...", "drakkar/dbfiles", "drakkar/internal/...",
		"drakkar/recorder", "drakkar/merge", "drakkar/cache", "drakkar/registry", "drakkar/archive"}},
	// worker wires them all into one worker.
	{Under: "drakkar/worker", May: []string{"recordstore/...", "drakkar/..."}},
}

// Dependencies forbidden whatever the direct imports: the owner is generic
// over its backend and never reaches SQLite, and nothing of the library
// depends on the CLI or on the drakkar layer built on it.
var layerNever = []struct{ under, dep string }{
	{"recordstore/owner", "recordstore/sqlite"},
	{"recordstore/owner", "modernc.org/sqlite"},
	{"recordstore/owner", "github.com/prometheus"},
	{"recordstore/submitonly", "recordstore/sqlite"},
	{"recordstore/submitonly", "modernc.org/sqlite"},
	// the front door sits below the read API and the fleet, never above.
	{"recordstore/records", "recordstore/recordresults"},
	{"recordstore/records", "recordstore/fleet"},
	{"recordstore", "cmd"},
	{"recordstore", "drakkar"},
	{"recordstoretest", "cmd"},
	// drakkar/worker wires the drakkar packages together; none of them
	// depends on it (DESIGN.md: worker -> debugapi -> components).
	{"drakkar/debugapi", "drakkar/worker"},
	{"drakkar/archive", "drakkar/worker"},
	{"drakkar/cache", "drakkar/worker"},
	{"drakkar/recorder", "drakkar/worker"},
	{"drakkar/registry", "drakkar/worker"},
	{"drakkar/merge", "drakkar/worker"},
	{"drakkar/dbfiles", "drakkar/worker"},
}

// layerViolations returns one line per import that breaks the rules.
func layerViolations(pkgs []listedPackage) []string {
	var out []string
	for _, p := range pkgs {
		rel, ok := inRepo(p.ImportPath)
		if !ok {
			continue
		}
		rule, ok := ruleFor(rel)
		if !ok {
			out = append(out, fmt.Sprintf("%s: no rule places it in the package table", rel))
			continue
		}
		for _, imp := range p.Imports {
			if to, ok := inRepo(imp); ok && to != rel && !allowed(to, rule.May) {
				out = append(out, fmt.Sprintf("%s imports %s: it may import only %v", rel, to, rule.May))
			}
		}
		for _, dep := range p.Deps {
			to, own := inRepo(dep)
			if rule.StdOnly && !own && !standard(dep) && !under(dep, rule.Modules...) {
				out = append(out, fmt.Sprintf("%s depends on %s: it may depend on the standard library only", rel, dep))
			}
			for _, n := range layerNever {
				if under(rel, n.under) && (own && under(to, n.dep) || !own && under(dep, n.dep)) {
					out = append(out, fmt.Sprintf("%s depends on %s: never allowed", rel, dep))
				}
			}
		}
	}
	return out
}

// inRepo returns path relative to the module, when it is the module's.
func inRepo(path string) (string, bool) {
	if path == modulePath {
		return ".", true
	}
	rel, ok := strings.CutPrefix(path, modulePath+"/")
	return rel, ok
}

// ruleFor is the most specific rule covering rel.
func ruleFor(rel string) (layerRule, bool) {
	var best layerRule
	found := false
	for _, r := range layerRules {
		if under(rel, r.Under) && (!found || len(r.Under) > len(best.Under)) {
			best, found = r, true
		}
	}
	return best, found
}

// allowed reports whether rel is one of may, where "P/..." stands for P
// and every package below it.
func allowed(rel string, may []string) bool {
	return slices.ContainsFunc(may, func(m string) bool {
		if tree, ok := strings.CutSuffix(m, "/..."); ok {
			return under(rel, tree)
		}
		return rel == m
	})
}

// under reports whether path is one of prefixes or below one of them.
func under(path string, prefixes ...string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool {
		return path == p || strings.HasPrefix(path, p+"/")
	})
}

// standard reports whether an import path is of the standard library: its
// first element has no dot.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// listModule runs "go list -deps -json" over every package of the root
// module, as it builds with GOWORK=off, and keeps the module's own packages.
func listModule() []listedPackage {
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Deps", "./...")
	cmd.Dir = ".." // the module root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "go list: %s", stderr.String())
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		Expect(err).NotTo(HaveOccurred())
		if _, ok := inRepo(p.ImportPath); ok {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs
}

var _ = Describe("the import direction of DESIGN.md's package table", func() {
	It("holds for every package of the root module", func() {
		pkgs := listModule()
		Expect(pkgs).To(ContainElement(HaveField("ImportPath", modulePath+"/recordstore/owner")), "go list saw the module")
		Expect(layerViolations(pkgs)).To(BeEmpty())
	})

	pkg := func(rel string, imports ...string) listedPackage {
		p := listedPackage{ImportPath: modulePath + "/" + rel}
		for _, imp := range imports {
			if under(imp, "recordstore", "recordstoretest", "cmd", "drakkar") { // the repository's
				imp = modulePath + "/" + imp
			}
			p.Imports = append(p.Imports, imp)
			p.Deps = append(p.Deps, imp)
		}
		return p
	}

	DescribeTable("refuses a forbidden import, naming it",
		func(p listedPackage, says string) {
			Expect(layerViolations([]listedPackage{p})).To(ContainElement(ContainSubstring(says)))
		},
		Entry("the owner importing the SQLite backend",
			pkg("recordstore/owner", "recordstore", "recordstore/sqlite"), "recordstore/owner imports recordstore/sqlite"),
		Entry("the owner depending on the SQLite driver",
			pkg("recordstore/owner", "modernc.org/sqlite"), "recordstore/owner depends on modernc.org/sqlite: never allowed"),
		Entry("the core importing the spool",
			pkg("recordstore", "recordstore/spool"), "recordstore imports recordstore/spool"),
		Entry("the core depending on a module outside the standard library",
			pkg("recordstore", "github.com/spf13/cobra"), "may depend on the standard library only"),
		Entry("the spool importing the SQLite backend",
			pkg("recordstore/spool", "recordstore/sqlite"), "recordstore/spool imports recordstore/sqlite"),
		Entry("the SQLite backend importing the owner",
			pkg("recordstore/sqlite", "recordstore/owner"), "recordstore/sqlite imports recordstore/owner"),
		Entry("fsutil importing the core",
			pkg("recordstore/fsutil", "recordstore"), "recordstore/fsutil imports recordstore"),
		Entry("the conformance suite importing the SQLite backend",
			pkg("recordstoretest", "recordstore/sqlite"), "recordstoretest imports recordstore/sqlite"),
		Entry("the debug API importing the worker that mounts it",
			pkg("drakkar/debugapi", "drakkar/worker"), "drakkar/debugapi depends on"),
		Entry("the front door importing the read API",
			pkg("recordstore/records", "recordstore/recordresults"), "recordstore/records imports recordstore/recordresults"),
		Entry("the owner importing the front door",
			pkg("recordstore/owner", "recordstore/records"), "recordstore/owner imports recordstore/records"),
		Entry("dbfiles importing the recorder",
			pkg("drakkar/dbfiles", "drakkar/recorder"), "drakkar/dbfiles imports drakkar/recorder"),
		Entry("the recorder importing the archive pass",
			pkg("drakkar/recorder", "drakkar/archive"), "drakkar/recorder imports drakkar/archive"),
		Entry("the merge engine importing the cache",
			pkg("drakkar/merge", "drakkar/cache"), "drakkar/merge imports drakkar/cache"),
		Entry("the registry importing the cache",
			pkg("drakkar/registry", "drakkar/cache"), "drakkar/registry imports drakkar/cache"),
		Entry("the archive pass importing the debug API",
			pkg("drakkar/archive", "drakkar/debugapi"), "drakkar/archive imports drakkar/debugapi"),
		Entry("the debug API importing the worker",
			pkg("drakkar/debugapi", "drakkar/worker"), "drakkar/debugapi imports drakkar/worker"),
		Entry("a new drakkar package importing another",
			pkg("drakkar/newthing", "drakkar/recorder"), "drakkar/newthing imports drakkar/recorder"),
		Entry("results importing the CLI",
			pkg("recordstore/recordresults", "cmd/query/internal/cli"), "recordstore/recordresults imports cmd/query/internal/cli"),
		Entry("the fleet importing its HTTP handler",
			pkg("recordstore/fleet", "recordstore/fleet/fleethttp"), "recordstore/fleet imports recordstore/fleet/fleethttp"),
		Entry("the metrics importing the read API",
			pkg("recordstore/ownermetrics", "recordstore/recordresults"), "recordstore/ownermetrics imports recordstore/recordresults"),
		Entry("the SQLite backend importing the benchmarks' test support",
			pkg("recordstore/sqlite", "recordstoretest/benchdata"), "recordstore/sqlite imports recordstoretest/benchdata"),
		Entry("a package no rule places",
			pkg("newthing", "recordstore"), "newthing: no rule places it"),
	)

	It("lets a package import what is below it", func() {
		Expect(layerViolations([]listedPackage{
			pkg("recordstore/recordresults", "recordstore/owner", "recordstore/sqlite", "recordstore/spool/parquet", "net/http"),
			pkg("recordstore/owner", "recordstore/spool", "recordstore/fsutil", "github.com/gofrs/flock"),
			pkg("drakkar/worker", "drakkar/debugapi", "drakkar/archive", "drakkar/recorder"),
			pkg("drakkar/debugapi", "drakkar/archive", "drakkar/merge", "drakkar/cache"),
			pkg("drakkar/archive", "drakkar/merge", "drakkar/dbfiles"),
			pkg("drakkar/cache", "drakkar/registry", "drakkar/dbfiles"),
		})).To(BeEmpty())
	})
})
