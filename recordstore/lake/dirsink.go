package lake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofrs/flock"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// dirSink writes into a folder through the durable-file helper: every
// file is written to a temp name, fsynced and renamed, and its folder
// fsynced. Files are 0600, folders 0700.
type dirSink struct{ root string }

func newDirSink(root string) (*dirSink, error) {
	if err := fsutil.MkdirAll(root); err != nil {
		return nil, fmt.Errorf("export destination %s: %w", root, err)
	}
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("export destination %s: %w", root, err)
	}
	if !st.IsDir() {
		return nil, recordstore.Invalidf("export destination %s: not a folder", recordstore.Quote(root))
	}
	return &dirSink{root: root}, nil
}

func (d *dirSink) String() string { return d.root }

// path maps a key to a file path, refusing keys that climb out of root.
func (d *dirSink) path(key string) (string, error) {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "..") || strings.Contains(key, "\\") {
		return "", recordstore.Invalidf("key %s", recordstore.Quote(key))
	}
	return filepath.Join(d.root, filepath.FromSlash(key)), nil
}

func (d *dirSink) Get(_ context.Context, key string) ([]byte, string, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", notFound(d, key)
	}
	if err != nil {
		return nil, "", err
	}
	return data, tagOf(data), nil
}

func (d *dirSink) PutFile(_ context.Context, key, local string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := fsutil.MkdirAll(filepath.Dir(p)); err != nil {
		return err
	}
	src, err := os.Open(local)
	if err != nil {
		return err
	}
	defer src.Close()
	return fsutil.Default.WriteFileFunc(p, 0o600, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}

// PutIf compares the current content's tag and replaces the file; the
// stream's lock (Lock) makes the compare and the replace one step.
func (d *dirSink) PutIf(ctx context.Context, key string, data []byte, tag string) error {
	_, cur, err := d.Get(ctx, key)
	switch {
	case isNotFound(err):
		cur = ""
	case err != nil:
		return err
	}
	if cur != tag {
		return busy(d, key+" changed since it was read")
	}
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := fsutil.MkdirAll(filepath.Dir(p)); err != nil {
		return err
	}
	return fsutil.WriteFile(p, data, 0o600)
}

func (d *dirSink) List(_ context.Context, prefix string) ([]string, error) {
	return d.entries(prefix, func(e fs.DirEntry) (string, bool) { return prefix + e.Name(), e.Type().IsRegular() })
}

func (d *dirSink) ListDirs(_ context.Context, prefix string) ([]string, error) {
	return d.entries(prefix, func(e fs.DirEntry) (string, bool) { return prefix + e.Name() + "/", e.IsDir() })
}

// entries names the entries of the folder prefix that keep takes (none
// when the folder does not exist).
func (d *dirSink) entries(prefix string, keep func(fs.DirEntry) (string, bool)) ([]string, error) {
	p, err := d.path(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if name, ok := keep(e); ok {
			names = append(names, name)
		}
	}
	return names, nil
}

func (d *dirSink) Delete(_ context.Context, key string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fsutil.SyncDir(filepath.Dir(p))
}

// Lock takes an exclusive lock (flock) on "<streamDir>/.lock" without waiting.
func (d *dirSink) Lock(_ context.Context, streamDir string) (func(), error) {
	p, err := d.path(streamDir)
	if err != nil {
		return nil, err
	}
	if err := fsutil.MkdirAll(p); err != nil {
		return nil, err
	}
	l := flock.New(filepath.Join(p, ".lock"), flock.SetPermissions(0o600))
	ok, err := l.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", p, err)
	}
	if !ok {
		return nil, busy(d, "another export of "+streamDir+" is running")
	}
	return func() { _ = l.Unlock() }, nil
}

// tagOf is a folder file's version tag: its length and a hash of its
// bytes (a manifest is small).
func tagOf(data []byte) string {
	var h uint64 = 14695981039346656037
	for _, c := range data {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return strconv.Itoa(len(data)) + "-" + strconv.FormatUint(h, 16)
}
