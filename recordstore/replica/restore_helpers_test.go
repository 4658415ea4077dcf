package replica_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/fb46ecde/records/recordstore/sqlite"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestReplicaSpecs(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "recordstore/replica")
}

var eventKind = recordstore.Kind{
	Name:    "events",
	Columns: []recordstore.Column{{Name: "n", Type: recordstore.TypeInteger, Required: true}, {Name: "body", Type: recordstore.TypeString}},
}

// source is a real store written by the engine and replicated with
// Litestream, as the owner will do it.
type source struct {
	store, live string
	b           *sqlite.Backend
	db          *litestream.DB
}

// newSource opens a store under dir with the engine and starts a
// Litestream database on its live file replicating to url (nothing is
// shipped until sync).
func newSource(ctx context.Context, dir, url string) *source {
	s := &source{store: filepath.Join(dir, "src", "records.sqlite")}
	b, err := sqlite.Open(ctx, s.store, sqlite.Options{SweepInterval: -1})
	Expect(err).NotTo(HaveOccurred())
	s.b, s.live = b, sqlite.LivePath(s.store)
	_, err = b.DeclareKind(ctx, eventKind)
	Expect(err).NotTo(HaveOccurred())
	client, err := replica.NewClient(url)
	Expect(err).NotTo(HaveOccurred())
	s.db = litestream.NewDB(s.live)
	s.db.MonitorInterval = 0
	s.db.Replica = litestream.NewReplicaWithClient(s.db, client)
	s.db.Replica.MonitorEnabled = false
	Expect(s.db.Open()).To(Succeed())
	DeferCleanup(s.close)
	return s
}

// round appends n rows to each stream and ships them to the replica.
func (s *source) round(ctx context.Context, n int, streams ...string) {
	for _, st := range streams {
		rows := make([]recordstore.Row, n)
		for i := range rows {
			rows[i] = recordstore.Row{"n": int64(i), "body": fmt.Sprintf("%s row %d", st, i)}
		}
		_, err := s.b.Append(ctx, st, eventKind.Name, rows)
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(s.db.SyncAndWait(ctx)).To(Succeed())
}

func (s *source) close() {
	if s.db != nil {
		_ = s.db.Close(context.Background())
		s.db = nil
	}
	if s.b != nil {
		_ = s.b.Close()
		s.b = nil
	}
}

// level0 lists the replica's level-0 files, oldest first.
func level0(ctx context.Context, url string) []*ltx.FileInfo {
	client, err := replica.NewClient(url)
	Expect(err).NotTo(HaveOccurred())
	files, err := litestream.FindLTXFiles(ctx, client, 0, false, func(*ltx.FileInfo) (bool, error) { return true, nil })
	Expect(err).NotTo(HaveOccurred())
	sort.Slice(files, func(i, j int) bool { return files[i].MinTXID < files[j].MinTXID })
	return files
}

// fingerprint is the content of every file under dir, for "nothing changed
// on disk".
func fingerprint(dir string) map[string]string {
	out := map[string]string{}
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			out[p] = "error " + err.Error()
			return nil
		}
		if fi.IsDir() {
			out[p] = "dir " + fi.Mode().String()
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			out[p] = "error " + err.Error()
			return nil
		}
		out[p] = fmt.Sprintf("%s %x", fi.Mode(), sha256.Sum256(b))
		return nil
	})
	return out
}

// noCABundle unsets AWS_CA_BUNDLE for the spec: the S3 client Litestream
// builds for a custom endpoint cannot take a CA bundle from the
// environment ("unable to add custom RootCAs HTTPClient"), and the test
// server speaks plain HTTP anyway.
func noCABundle() {
	old, had := os.LookupEnv("AWS_CA_BUNDLE")
	if !had {
		return
	}
	Expect(os.Unsetenv("AWS_CA_BUNDLE")).To(Succeed())
	DeferCleanup(func() { _ = os.Setenv("AWS_CA_BUNDLE", old) })
}
