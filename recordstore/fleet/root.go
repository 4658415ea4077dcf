// Root containment: the root is resolved once; a store path is refused
// when it is a symlink or when its nearest existing folder resolves
// outside the root.

package fleet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fb46ecde/records/recordstore"
)

// resolveRoot resolves dir (absolute, symlinks followed) and checks that it
// is an existing folder: no operation creates the root, so that a wrong
// folder does not give an empty fleet.
func resolveRoot(dir string) (string, error) {
	if dir == "" {
		return "", recordstore.Invalidf("fleet root is empty")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("fleet root %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", recordstore.Errorf(recordstore.ErrNotFound, "fleet root %s does not exist (no command creates it)", dir)
	}
	if err != nil {
		return "", fmt.Errorf("fleet root %s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("fleet root %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", recordstore.Invalidf("fleet root %s is not a folder", dir)
	}
	return real, nil
}

// within reports whether path (absolute, clean) is root or lies under it.
func within(root, path string) bool {
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// contain checks the store path abs (root joined with a template path):
// it must not be a symlink, and its nearest existing ancestor must resolve
// inside root; so must each existing ancestor up to it (a folder that is a
// symlink out of the root is refused even when the store under it is
// missing). It only stats.
func contain(root, abs string) error {
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%w: %s is a symlink", ErrOutsideRoot, abs)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("stat %s: %w", abs, err)
	}
	dir := filepath.Dir(abs)
	for within(root, dir) {
		real, err := filepath.EvalSymlinks(dir)
		if errors.Is(err, fs.ErrNotExist) {
			dir = filepath.Dir(dir)
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: resolve %s: %w", ErrOutsideRoot, dir, err)
		}
		if !within(root, real) {
			return fmt.Errorf("%w: %s resolves to %s", ErrOutsideRoot, dir, real)
		}
		return nil
	}
	return fmt.Errorf("%w: %s", ErrOutsideRoot, abs)
}

// checkOutside refuses a store path (a control or default store) that
// lies inside the root, once both are resolved.
func checkOutside(root, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("store %s: %w", path, err)
	}
	dir := abs
	for {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			abs = filepath.Join(real, strings.TrimPrefix(abs, dir))
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if within(root, abs) {
		return recordstore.Invalidf("store %s lies inside the fleet root %s: keep it outside", path, root)
	}
	return nil
}
