package lake_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/lake"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/spool/parquet"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstoretest/s3test"
)

// openBackend opens a real SQLite store in the spec's temporary folder
// with kinds declared, closed after the spec, and a reader over it.
func openBackend(ctx context.Context, kinds ...recordstore.Kind) (*sqlite.Backend, *recordresults.Reader) {
	b, err := sqlite.Open(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), sqlite.Options{SweepInterval: -1})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(b.Close)
	for _, k := range kinds {
		_, err = b.DeclareKind(ctx, k)
		Expect(err).NotTo(HaveOccurred())
	}
	return b, recordresults.NewReader(b)
}

// store is a real SQLite store (openBackend) with one stream of one kind;
// add appends rows made by row from their seq (1, 2, …).
type store struct {
	b      *sqlite.Backend
	r      *recordresults.Reader
	stream string
	kind   string
	row    func(seq int64) recordstore.Row
	n      int64
}

// add appends n rows to the store's stream.
func (s *store) add(ctx context.Context, n int) {
	rows := make([]recordstore.Row, n)
	for i := range rows {
		s.n++
		rows[i] = s.row(s.n)
	}
	_, err := s.b.Append(ctx, s.stream, s.kind, rows)
	Expect(err).NotTo(HaveOccurred())
}

// openFolderSink opens a lake sink on a new folder "lake" of the spec's
// temporary folder, and returns both.
func openFolderSink(ctx context.Context) (string, lake.Sink) {
	dir := filepath.Join(GinkgoT().TempDir(), "lake")
	sink, err := lake.OpenSink(ctx, dir)
	Expect(err).NotTo(HaveOccurred())
	return dir, sink
}

// startS3 starts an S3 test server (bucket "lake") with its credentials
// set in this process for the spec; the server is closed and the
// environment restored after it.
func startS3() *s3test.Server {
	srv, err := s3test.Start("lake")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(srv.Close)
	DeferCleanup(srv.SetEnv())
	return srv
}

// decodeParquet decodes the lake file at path, written for kind, and
// returns its rows: _seq first, then kind's columns in order.
func decodeParquet(path string, kind recordstore.Kind) []recordstore.Values {
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	codec, err := spool.Lookup(parquet.Name)
	Expect(err).NotTo(HaveOccurred())
	k := recordstore.Kind{Name: kind.Name, Columns: append([]recordstore.Column{{Name: "_seq", Type: recordstore.TypeInteger, Required: true}}, kind.Columns...)}
	dec, err := codec.NewDecoder(strings.NewReader(string(data)), int64(len(data)), &k, spool.Limits{})
	Expect(err).NotTo(HaveOccurred())
	defer dec.Close()
	var rows []recordstore.Values
	for {
		v, err := dec.Next()
		if err == io.EOF {
			return rows
		}
		Expect(err).NotTo(HaveOccurred())
		rows = append(rows, v)
	}
}
