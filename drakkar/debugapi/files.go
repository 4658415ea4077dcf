// Resolving a path relative to shared.dir: only the spec's three shapes,
// every segment checked, every component opened with O_NOFOLLOW from the
// descriptor of shared.dir, so a symlink anywhere (planted before the check
// or swapped in after it) fails the open instead of being followed.

package debugapi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// MaxPathBytes is the longest relative path a route accepts.
const MaxPathBytes = 1024

// maxSegmentBytes is the longest path segment (NAME_MAX).
const maxSegmentBytes = 255

// Kinds of a shared file, as the Databases page names them.
const (
	KindSealed  = "sealed"
	KindArchive = "archive"
	KindMerged  = "merged"
)

// testHookBeforeOpen, when set (tests), runs after a path was checked and
// before it is opened.
var testHookBeforeOpen func(rel string)

// errUnsafe is a path that is not one of the allowed shapes.
var errUnsafe = errors.New("debugapi: not a downloadable path")

// safeSegment reports whether s is a plain file or folder name: not empty,
// not dot-prefixed (so neither "." nor ".." nor a work file), no slash,
// backslash, NUL or control character, at most NAME_MAX bytes.
func safeSegment(s string) bool {
	if s == "" || len(s) > maxSegmentBytes || strings.HasPrefix(s, ".") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == '/' || c == '\\' {
			return false
		}
	}
	return true
}

// classify checks rel (forward slashes, relative to shared.dir) against
// the three shapes and returns its kind: history/<cluster>/<name>.db
// (sealed), history/<cluster>/<name>.db.gz (archive), merged/<name>.db
// (merged).
func classify(rel string) (string, error) {
	if len(rel) > MaxPathBytes {
		return "", errUnsafe
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if !safeSegment(p) {
			return "", errUnsafe
		}
	}
	switch {
	case len(parts) == 3 && parts[0] == "history" && strings.HasSuffix(parts[2], ".db.gz") && len(parts[2]) > len(".db.gz"):
		return KindArchive, nil
	case len(parts) == 3 && parts[0] == "history" && strings.HasSuffix(parts[2], ".db") && len(parts[2]) > len(".db"):
		return KindSealed, nil
	case len(parts) == 2 && parts[0] == "merged" && strings.HasSuffix(parts[1], ".db") && len(parts[1]) > len(".db"):
		return KindMerged, nil
	}
	return "", errUnsafe
}

// classifyNamed is classify for the download routes, which also hold the
// file name to its kind's grammar: a recorder file name
// (dbfiles.ParseSealedName) in a cluster folder (a sanitized cluster
// name), that folder's cluster's archive name (dbfiles.ParseArchiveName),
// or a merge result name (dbfiles.ParseMergedName). Any other name, such
// as a *.db planted beside the sealed files, is refused.
func classifyNamed(rel string) (string, error) {
	kind, err := classify(rel)
	if err != nil {
		return "", err
	}
	parts := strings.Split(rel, "/")
	ok := false
	switch kind {
	case KindArchive:
		cl, _, _, good := dbfiles.ParseArchiveName(parts[2])
		ok = good && cl == parts[1]
	case KindSealed:
		_, _, ok = dbfiles.ParseSealedName(parts[2])
		ok = ok && dbfiles.SanitizeCluster(parts[1]) == parts[1]
	case KindMerged:
		_, _, ok = dbfiles.ParseMergedName(parts[1])
	}
	if !ok {
		return "", errUnsafe
	}
	return kind, nil
}

// openShared opens rel inside shared for reading: each folder with
// O_DIRECTORY|O_NOFOLLOW relative to the previous one's descriptor, the
// file with O_NOFOLLOW|O_NONBLOCK, and checks by its descriptor that it is a
// regular file with a single link. Any failure (missing, a symlink, not a regular file) is
// os.ErrNotExist to the caller. rel must have passed classify.
func openShared(shared, rel string) (*os.File, error) {
	if shared == "" {
		return nil, os.ErrNotExist
	}
	if testHookBeforeOpen != nil {
		testHookBeforeOpen(rel)
	}
	dir, err := unix.Open(shared, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: open %s: %v", os.ErrNotExist, shared, err)
	}
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i < len(parts)-1 {
			flags |= unix.O_DIRECTORY
		} else {
			flags |= unix.O_NONBLOCK // a planted FIFO must not block the open
		}
		fd, err := unix.Openat(dir, p, flags, 0)
		_ = unix.Close(dir)
		if err != nil {
			return nil, fmt.Errorf("%w: open %s: %v", os.ErrNotExist, rel, err)
		}
		dir = fd
	}
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		_ = unix.Close(dir)
		return nil, fmt.Errorf("%w: %s is not a regular file", os.ErrNotExist, rel)
	}
	if st.Nlink > 1 {
		// A hard link planted in a shared folder can name any file the
		// worker may read; the worker's own files never have a second link.
		_ = unix.Close(dir)
		return nil, fmt.Errorf("%w: %s has %d links", os.ErrNotExist, rel, st.Nlink)
	}
	// Back to blocking reads for the copy.
	if err := unix.SetNonblock(dir, false); err != nil {
		_ = unix.Close(dir)
		return nil, fmt.Errorf("%w: %s: %v", os.ErrNotExist, rel, err)
	}
	return os.NewFile(uintptr(dir), filepath.Join(shared, filepath.FromSlash(rel))), nil
}

// archiveInfo is one item of GET /api/v1/debug/archives.
type archiveInfo struct {
	Name      string  `json:"name"`
	Cluster   string  `json:"cluster"`
	FromTS    float64 `json:"from_ts"`
	ToTS      float64 `json:"to_ts"`
	SizeBytes int64   `json:"size_bytes"`
	Folder    string  `json:"folder"`
	Path      string  `json:"path"`
}

// listArchives lists the archives of every history folder of shared, from
// their names and one lstat each, newest window first (then by path).
func listArchives(shared string) ([]archiveInfo, error) {
	out := []archiveInfo{}
	if shared == "" {
		return out, nil
	}
	hist := filepath.Join(shared, "history")
	folders, err := os.ReadDir(hist)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", hist, err)
	}
	for _, f := range folders {
		if !f.IsDir() || !safeSegment(f.Name()) {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(hist, f.Name()))
		if err != nil {
			continue // gone or unreadable meanwhile
		}
		for _, e := range ents {
			cl, from, to, ok := dbfiles.ParseArchiveName(e.Name())
			if !ok || !e.Type().IsRegular() || !safeSegment(e.Name()) {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			out = append(out, archiveInfo{Name: e.Name(), Cluster: cl, FromTS: dbfiles.TS(from), ToTS: dbfiles.TS(to),
				SizeBytes: fi.Size(), Folder: "history/" + f.Name(), Path: "history/" + f.Name() + "/" + e.Name()})
		}
	}
	sortArchives(out)
	return out, nil
}

// sortArchives orders archives newest window first, then by path.
func sortArchives(a []archiveInfo) {
	sort.Slice(a, func(i, j int) bool {
		if a[i].ToTS != a[j].ToTS {
			return a[i].ToTS > a[j].ToTS
		}
		if a[i].FromTS != a[j].FromTS {
			return a[i].FromTS > a[j].FromTS
		}
		return a[i].Path < a[j].Path
	})
}
