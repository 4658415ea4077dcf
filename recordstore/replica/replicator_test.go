package replica_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/benbjohnson/litestream"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// counterKind is the kind every replication spec appends: one integer per
// row, n, the number of the batch it was appended in.
var counterKind = recordstore.Kind{Name: "counter", Columns: []recordstore.Column{{Name: "n", Type: recordstore.TypeInteger}}}

// openReplicated opens the store at path with a replica at url, as the
// front doors do: the backend leaves checkpoints to the replicator.
func openReplicated(ctx context.Context, path, url string, drain time.Duration) (*owner.Store[*sqlite.Backend], error) {
	ropts := replica.Options{}
	if os.Getenv("RECORDS_REPLICA_DEBUG") != "" {
		ropts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("pid", os.Getpid())
	}
	r, err := replica.New(url, ropts)
	if err != nil {
		return nil, err
	}
	return owner.Open(ctx, owner.Options[*sqlite.Backend]{
		Path:           path,
		CatalogVersion: sqlite.CatalogVersion,
		DrainOnClose:   drain,
		Replica:        r,
		Open: func(ctx context.Context, ro bool, submit owner.Submitter) (*sqlite.Backend, error) {
			return sqlite.Open(ctx, path, sqlite.Options{ReadOnly: ro, Submit: submit, NoCheckpoint: true, SweepInterval: -1})
		},
	})
}

// restoreCounts restores the replica at url into a scratch file, opens it
// read-only with the engine and returns how many rows each batch number
// has in stream "s".
func restoreCounts(ctx context.Context, t testing.TB, url string) map[int64]int {
	t.Helper()
	client, err := replica.NewClient(url)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "restored.db")
	opt := litestream.NewRestoreOptions()
	opt.OutputPath = out
	opt.IntegrityCheck = litestream.IntegrityCheckQuick
	if err := litestream.NewReplicaWithClient(nil, client).Restore(ctx, opt); err != nil {
		t.Fatalf("restore %s: %v", url, err)
	}
	// The restored file is the live file of a store at dir/restored.
	live := sqlite.LivePath(filepath.Join(dir, "restored"))
	if err := os.MkdirAll(filepath.Dir(live), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(out, live); err != nil {
		t.Fatal(err)
	}
	b, err := sqlite.Open(ctx, filepath.Join(dir, "restored"), sqlite.Options{ReadOnly: true, ReadOnlyFile: true, SweepInterval: -1})
	if err != nil {
		t.Fatalf("open the restored file: %v", err)
	}
	defer func() { _ = b.Close() }()
	recs, err := b.Scan(ctx, "s", recordstore.ScanOptions{})
	if errors.Is(err, recordstore.ErrNotFound) {
		return map[int64]int{}
	}
	if err != nil {
		t.Fatalf("scan the restored file: %v", err)
	}
	got := map[int64]int{}
	for _, r := range recs {
		n, _ := r.Values["n"].(int64)
		got[n]++
	}
	return got
}

// rowsOf is batch n: size rows with n in each.
func rowsOf(n int64, size int) []recordstore.Row {
	rows := make([]recordstore.Row, size)
	for i := range rows {
		rows[i] = recordstore.Row{"n": n}
	}
	return rows
}

func TestAppendReplicatedIsInTheReplica(t *testing.T) {
	srv := startS3(t)
	for name, url := range map[string]string{
		"s3":   srv.URL("store"),
		"file": "file://" + filepath.Join(t.TempDir(), "replica"),
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			path := filepath.Join(t.TempDir(), "store")
			st, err := openReplicated(ctx, path, url, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = st.Close() }()
			if _, err := st.DeclareKinds(ctx, []recordstore.Kind{counterKind}, owner.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			for n := int64(1); n <= 5; n++ {
				if _, err := st.Append(ctx, "s", "counter", rowsOf(n, 3), owner.AppendOptions{WriteOptions: owner.WriteOptions{Replicated: true}}); err != nil {
					t.Fatalf("append %d: %v", n, err)
				}
			}
			// Not closed: what the replica holds now is what the waits
			// shipped.
			got := restoreCounts(ctx, t, url)
			for n := int64(1); n <= 5; n++ {
				if got[n] != 3 {
					t.Errorf("batch %d: %d rows in the replica, want 3 (all: %v)", n, got[n], got)
				}
			}
			rs, err := st.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rs.Replica == nil || !rs.Replica.Running || rs.Replica.ReplicaTXID == 0 || rs.Replica.LastError != "" {
				t.Errorf("status replica: %+v", rs.Replica)
			}
		})
	}
}

// TestReplicaFailureIsReportedAndAppendsGoOn stops the S3 server under a
// replicated store: appends still commit, the status reports the error
// and since when, and an append that waits for the replica fails with
// code not_replicated, its rows appended.
func TestReplicaFailureIsReportedAndAppendsGoOn(t *testing.T) {
	srv := startS3(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "store")
	st, err := openReplicated(ctx, path, srv.URL("down"), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if _, err := st.DeclareKinds(ctx, []recordstore.Kind{counterKind}, owner.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	replicated := owner.AppendOptions{WriteOptions: owner.WriteOptions{Replicated: true}}
	if _, err := st.Append(ctx, "s", "counter", rowsOf(1, 1), replicated); err != nil {
		t.Fatal(err)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, "s", "counter", rowsOf(2, 1), owner.AppendOptions{}); err != nil {
		t.Fatalf("a plain append with the replica down: %v", err)
	}
	var rs owner.ReplicaStatus
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		rs, _ = st.ReplicaStatus()
		if rs.LastError != "" || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("failing reported: %s", rs.LastError)
	if rs.LastError == "" || rs.FailingSince.IsZero() || !rs.Running {
		t.Fatalf("status with the replica down: %+v", rs)
	}
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
	_, err = st.Append(wctx, "s", "counter", rowsOf(3, 1), replicated)
	wcancel()
	var nre *owner.NotReplicatedError
	if !errors.As(err, &nre) || recordstore.Code(err) != "not_replicated" {
		t.Fatalf("waiting append with the replica down: %v (code %s)", err, recordstore.Code(err))
	}
	t.Logf("waiting append failed: %v", err)
	wctx, wcancel = context.WithTimeout(ctx, 2*time.Second)
	_, err = st.Mutate(wctx, recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "s"}, owner.WriteOptions{Replicated: true})
	wcancel()
	if !errors.As(err, &nre) {
		t.Fatalf("waiting seal with the replica down: %v", err)
	}
	if m, err := st.Backend().Meta(ctx, "s"); err != nil || !m.Sealed {
		t.Fatalf("the stream after the failed wait of its seal: %+v, %v", m, err)
	}
	recs, err := st.Backend().Scan(ctx, "s", recordstore.ScanOptions{})
	if err != nil || len(recs) != 3 {
		t.Fatalf("rows after the failed wait: %d, %v; want 3", len(recs), err)
	}
}

// TestCloseShipsWhatTheFirstShipLeft closes a replicated store while the
// replicator's first ship is still waiting for a slow object store: the
// close cuts that ship short, and ships the commits itself. (Litestream's
// own close ships nothing for a database its first sync never reached.)
func TestCloseShipsWhatTheFirstShipLeft(t *testing.T) {
	srv := startS3(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := srv.URL("slow")
	srv.Delay(500 * time.Millisecond)
	st, err := openReplicated(ctx, filepath.Join(t.TempDir(), "store"), url, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DeclareKinds(ctx, []recordstore.Kind{counterKind}, owner.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for n := int64(1); n <= 3; n++ {
		if _, err := st.Append(ctx, "s", "counter", rowsOf(n, 2), owner.AppendOptions{}); err != nil {
			t.Fatalf("append %d: %v", n, err)
		}
	}
	if rs, err := st.Status(ctx); err == nil && rs.Replica != nil && !rs.Replica.ShippedAt.IsZero() {
		t.Logf("the first ship ended before the close (a slow machine): %+v", *rs.Replica)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	srv.Delay(0)
	got := restoreCounts(ctx, t, url)
	for n := int64(1); n <= 3; n++ {
		if got[n] != 2 {
			t.Errorf("batch %d: %d rows in the replica, want 2 (all: %v)", n, got[n], got)
		}
	}
}
