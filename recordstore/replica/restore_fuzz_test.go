package replica_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benbjohnson/litestream"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// FuzzRestoreFile feeds Restore a replica whose one file holds arbitrary
// bytes (seeded, in testdata/fuzz/FuzzRestoreFile, with the first file a
// Litestream replica of a small store holds: its snapshot, TXID 1): whatever
// the bytes, Restore either restores a store that passed its checks or
// refuses with one of its codes, and then leaves no file of the store
// and no staging file behind.
func FuzzRestoreFile(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("LTX1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		dir := t.TempDir()
		root := filepath.Join(dir, "replica")
		p := filepath.FromSlash(litestream.LTXFilePath(root, 0, 1, 1))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		store := filepath.Join(dir, "dst", "records.sqlite")
		_, err := replica.Restore(ctx, store, replica.RestoreOptions{From: "file://" + root})
		live := sqlite.LivePath(store)
		if err == nil {
			if _, err := sqlite.CheckFile(ctx, live); err != nil {
				t.Fatalf("restored a file that fails its checks: %v", err)
			}
			return
		}
		switch recordstore.Code(err) {
		case "checksum", "gap", "check_failed", "not_found":
		default:
			t.Fatalf("code %q: %v", recordstore.Code(err), err)
		}
		entries, _ := os.ReadDir(filepath.Dir(live))
		for _, e := range entries {
			if e.Name() == filepath.Base(live) || strings.Contains(e.Name(), ".restore-") {
				t.Fatalf("left %s after %v", e.Name(), err)
			}
		}
	})
}
