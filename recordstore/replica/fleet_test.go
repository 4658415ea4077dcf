package replica_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/replica"
)

// TestFleetStoresReplicateUnderTheirKeys opens two tenants of a fleet
// replicated to the S3 test server: each ships under
// <prefix>/tenant/<id>, restores with its own rows only, and the fleet's
// health counts both.
func TestFleetStoresReplicateUnderTheirKeys(t *testing.T) {
	srv := startS3(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := srv.URL("fleet")
	factory, err := replica.Factory(root, replica.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Open(t.TempDir(), fleet.Options{
		Mode: fleet.ModeTenant, Kinds: []recordstore.Kind{counterKind}, CreateOnDemand: fleet.OnDemandCreate,
		SweepInterval: -1, Open: fleet.DefaultOpener(fleet.StoreOptions{Replica: factory}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for i, id := range []string{"alpha", "beta"} {
		k, err := f.KeyFor(id)
		if err != nil {
			t.Fatal(err)
		}
		err = f.Do(ctx, k, func(ctx context.Context, st *fleet.Store) error {
			_, err := st.Append(ctx, "s", "counter", rowsOf(int64(i+1), rowsPerBatch),
				owner.AppendOptions{WriteOptions: owner.WriteOptions{Replicated: true}})
			return err
		})
		if err != nil {
			t.Fatalf("append to %s: %v", id, err)
		}
	}
	h := f.ReplicaHealth()
	if h.Replicating != 2 || h.Failing != 0 {
		t.Errorf("health %+v, want 2 stores replicating, none failing", h)
	}
	keys, err := srv.Keys("fleet/")
	if err != nil {
		t.Fatal(err)
	}
	var tops []string
	for _, k := range keys {
		parts := strings.SplitN(k, "/", 4)
		if len(parts) < 4 {
			t.Fatalf("key %q outside a store's prefix", k)
		}
		top := strings.Join(parts[:3], "/")
		if !slices.Contains(tops, top) {
			tops = append(tops, top)
		}
	}
	slices.Sort(tops)
	if !slices.Equal(tops, []string{"fleet/tenant/alpha", "fleet/tenant/beta"}) {
		t.Errorf("prefixes %v", tops)
	}
	for i, id := range []string{"alpha", "beta"} {
		url, err := replica.Join(root, "tenant/"+id)
		if err != nil {
			t.Fatal(err)
		}
		got := restoreCounts(ctx, t, url)
		if len(got) != 1 || got[int64(i+1)] != rowsPerBatch {
			t.Errorf("%s restored %v, want batch %d only", id, got, i+1)
		}
	}
}

// TestFleetDeleteRemovesTheReplicatorsFolder deletes a replicated fleet
// store: the replicator's working folder beside it goes with it, and the
// bucket folder is left empty and removed.
func TestFleetDeleteRemovesTheReplicatorsFolder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := t.TempDir()
	factory, err := replica.Factory("file://"+filepath.Join(t.TempDir(), "replica"), replica.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Open(root, fleet.Options{
		Mode: fleet.ModeTenant, Kinds: []recordstore.Kind{counterKind}, CreateOnDemand: fleet.OnDemandCreate,
		SweepInterval: -1, Open: fleet.DefaultOpener(fleet.StoreOptions{Replica: factory}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	k, err := f.KeyFor("gamma")
	if err != nil {
		t.Fatal(err)
	}
	err = f.Do(ctx, k, func(ctx context.Context, st *fleet.Store) error {
		_, err := st.Append(ctx, "s", "counter", rowsOf(1, 1), owner.AppendOptions{WriteOptions: owner.WriteOptions{Replicated: true}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	abs, err := f.Path(k)
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(filepath.Dir(abs), "."+filepath.Base(abs)+"-litestream")
	if _, err := os.Stat(work); err != nil {
		t.Fatalf("the replicator's folder: %v", err)
	}
	if err := f.CloseStore(ctx, k); err != nil {
		t.Fatal(err)
	}
	if err := f.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(abs)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("bucket folder after delete: %v", err)
	}
}
