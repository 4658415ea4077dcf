// Helpers of the fleet specs: a fleet on a fresh root, its kinds, and the
// test binary as a child process (TestMain).

package fleet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// childEnv names the variable that makes the test binary a child (see
// runChild); its value is the child's verb.
const childEnv = "FLEET_TEST_CHILD"

// defaultsEnv names the variable that keeps SQLite's default lookaside in
// this test binary (to measure the benchmarks both ways).
const defaultsEnv = "FLEET_SQLITE_DEFAULTS"

// TestMain runs a child's verb, or the specs and benchmarks with SQLite's
// lookaside off as docs/fleet.md advises a process serving many stores
// (query serve --fleet does it), unless FLEET_SQLITE_DEFAULTS=1.
func TestMain(m *testing.M) {
	if os.Getenv(defaultsEnv) != "1" {
		if err := sqlite.ConfigureLookaside(0, 0); err != nil {
			fmt.Fprintln(os.Stderr, "configure SQLite:", err)
			os.Exit(2)
		}
	}
	if verb := os.Getenv(childEnv); verb != "" {
		os.Exit(runChild(verb, os.Args[len(os.Args)-2:]))
	}
	code := m.Run()
	removeListRoot()
	os.Exit(code)
}

// noteKind is the kind every store of the specs' fleets gets.
var noteKind = recordstore.Kind{
	Name:    "notes",
	Columns: []recordstore.Column{{Name: "id", Type: recordstore.TypeString, Required: true}, {Name: "body", Type: recordstore.TypeString}},
	Key:     []string{"id"},
}

// newRoot returns a fresh fleet root (0700).
func newRoot() string {
	root := filepath.Join(GinkgoT().TempDir(), "fleet")
	Expect(os.Mkdir(root, 0o700)).To(Succeed())
	return root
}

// openFleet opens a fleet on root with the specs' kind; the sweeper is
// off unless opts says otherwise, and Close runs at cleanup.
func openFleet(root string, opts fleet.Options) *fleet.Fleet {
	if opts.Mode == "" {
		opts.Mode = fleet.ModeTenant
	}
	if opts.Kinds == nil {
		opts.Kinds = []recordstore.Kind{noteKind}
	}
	if opts.SweepInterval == 0 {
		opts.SweepInterval = -1
	}
	f, err := fleet.Open(root, opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(f.Close)
	return f
}

func tenant(id string) fleet.Key {
	k, err := fleet.TenantKey(id)
	Expect(err).NotTo(HaveOccurred())
	return k
}

// appendNote appends one note to stream s of the store of k.
func appendNote(f *fleet.Fleet, k fleet.Key, id string) {
	Expect(f.Do(context.Background(), k, func(ctx context.Context, st *fleet.Store) error {
		_, err := st.Append(ctx, "s", "notes", []recordstore.Row{{"id": id, "body": "b"}}, ownerAppend())
		return err
	})).To(Succeed())
}

// notes returns the ids of the notes in stream s of the store of k.
func notes(f *fleet.Fleet, k fleet.Key) []string {
	var ids []string
	Expect(f.Do(context.Background(), k, func(ctx context.Context, st *fleet.Store) error {
		recs, err := st.Backend().Scan(ctx, "s", recordstore.ScanOptions{})
		if err != nil {
			return err
		}
		for _, r := range recs {
			ids = append(ids, fmt.Sprint(r.Values["id"]))
		}
		return nil
	})).To(Succeed())
	return ids
}

// listFiles returns every path under dir, relative, folders with a '/'.
func listFiles(dir string) []string {
	var out []string
	Expect(filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})).To(Succeed())
	return out
}

// clock is a settable clock for the LRU specs.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func ownerAppend() owner.AppendOptions { return owner.AppendOptions{} }

// kindNames opens the store of k and returns the names of its kinds.
func kindNames(f *fleet.Fleet, k fleet.Key) []string {
	var names []string
	Expect(f.Do(context.Background(), k, func(ctx context.Context, st *fleet.Store) error {
		ks, err := st.Backend().Kinds(ctx)
		for _, kd := range ks {
			names = append(names, kd.Name)
		}
		return err
	})).To(Succeed())
	return names
}
