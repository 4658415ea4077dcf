// FuzzRawIdentity: the page reader of rawident.go on any bytes. It must
// refuse with errRaw or answer; and when it answers a key, SQLite reading
// the same bytes must fail or answer that key too — the reader may give
// up where SQLite would answer, never answer another key.

package fleet

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// rawSeeds returns the bytes of a provisioned store (the engine's tables,
// a schema over several pages), of a file holding only the identity table,
// and cuts and changes of them.
func rawSeeds(f *testing.F) [][]byte {
	ctx := context.Background()
	dir := f.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o700); err != nil {
		f.Fatal(err)
	}
	fl, err := Open(root, Options{Mode: ModeTenant, SweepInterval: -1})
	if err != nil {
		f.Fatal(err)
	}
	k, err := TenantKey("acme")
	if err != nil {
		f.Fatal(err)
	}
	if err := fl.Provision(ctx, k); err != nil {
		f.Fatal(err)
	}
	if err := fl.Close(); err != nil {
		f.Fatal(err)
	}
	rel, err := fl.Template().Path(k)
	if err != nil {
		f.Fatal(err)
	}
	store, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		f.Fatal(err)
	}
	bare := filepath.Join(dir, "bare.db")
	if err := os.WriteFile(bare, nil, 0o600); err != nil {
		f.Fatal(err)
	}
	if err := writeIdentity(ctx, bare, k, time.Unix(0, 0)); err != nil {
		f.Fatal(err)
	}
	small, err := os.ReadFile(bare)
	if err != nil {
		f.Fatal(err)
	}
	seeds := [][]byte{store, small, small[:100], store[:len(store)/2], []byte("SQLite format 3\x00"), {}}
	for _, at := range []int{16, 20, 56, 100, 105, 4096 + 3} {
		for _, b := range [][]byte{store, small} {
			if at < len(b) {
				c := bytes.Clone(b)
				c[at] ^= 0xff
				seeds = append(seeds, c)
			}
		}
	}
	return seeds
}

func FuzzRawIdentity(f *testing.F) {
	for _, s := range rawSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := parseIdentity(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !errors.Is(err, errRaw) {
				t.Fatalf("refusal %v does not wrap errRaw", err)
			}
			return
		}
		if id == "" {
			return
		}
		path := filepath.Join(t.TempDir(), "s.db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readIdentity(context.Background(), path)
		if err == nil && got != id {
			t.Fatalf("pages say %q, SQLite says %q", id, got)
		}
	})
}
