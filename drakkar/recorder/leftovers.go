// Leftovers (spec "Leftovers"): recorder files of this worker that an
// earlier process left in storage.dir.

package recorder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// FindLeftovers returns the paths of the leftovers in storageDir, oldest
// start time first (then by name). A file is a leftover when all hold:
//
//   - its name is exactly <worker>-YYYY-MM-DD__HH_MM_SS.db for this worker
//     (dbfiles.ParseRecorderFileName: worker a never matches a-b's files);
//   - it is a regular file and not liveName (a base name; "" when there is
//     no live file);
//   - its modification time, and its -wal's when there is one, are at least
//     untouched before now: nothing touched it for that long (a second
//     process with the same worker name may still write a fresh file, and
//     network mounts round modification times).
//
// It only reads the folder; a file that vanishes while it looks is
// skipped.
func FindLeftovers(storageDir, worker, liveName string, now time.Time, untouched time.Duration) ([]string, error) {
	entries, err := os.ReadDir(storageDir)
	if err != nil {
		return nil, fmt.Errorf("find leftovers: %w", err)
	}
	type leftover struct {
		path  string
		start time.Time
	}
	var found []leftover
	for _, e := range entries {
		name := e.Name()
		start, ok := dbfiles.ParseRecorderFileName(worker, name)
		if !ok || name == liveName || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(storageDir, name)
		quiet, err := untouchedSince(path, now, untouched)
		if err != nil {
			return nil, fmt.Errorf("find leftovers: %w", err)
		}
		if quiet {
			found = append(found, leftover{path, start})
		}
	}
	slices.SortFunc(found, func(a, b leftover) int {
		if c := a.start.Compare(b.start); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	out := make([]string, len(found))
	for i, l := range found {
		out[i] = l.path
	}
	return out, nil
}

// untouchedSince reports whether path and its -wal (if any) were last
// modified at least d before now. A vanished path is not a leftover.
func untouchedSince(path string, now time.Time, d time.Duration) (bool, error) {
	for i, p := range []string{path, dbfiles.WALFileName(path)} {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			if i == 0 {
				return false, nil
			}
			continue
		}
		if err != nil {
			return false, err
		}
		if now.Sub(fi.ModTime()) < d {
			return false, nil
		}
	}
	return true, nil
}
