// Listing the shared folder's history and merge results from names, one
// stat per file and the meta files: no sealed file is opened.

package recorder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// HistoryFile is one file of a history folder or of merged/.
type HistoryFile struct {
	// Path is relative to shared.dir, with forward slashes.
	Path string `json:"path"`
	Name string `json:"name"`
	// Kind is "sealed", "archive" or "merged".
	Kind       string        `json:"kind"`
	SizeBytes  int64         `json:"size_bytes"`
	ModifiedAt string        `json:"modified_at"`
	Meta       *dbfiles.Meta `json:"meta"`
}

// HistoryFolder is one history/<cluster> folder, or merged.
type HistoryFolder struct {
	Name  string        `json:"name"`
	Path  string        `json:"path"`
	Files []HistoryFile `json:"files"`
}

// History is the listing of a shared folder.
type History struct {
	Folders []HistoryFolder `json:"folders"`
}

// ListHistory lists the history folders of sharedDir (sorted by name),
// then merged/, as the Databases page shows them: sealed files with their
// meta object (null when the meta file is missing or unreadable), archives
// and merge results. Dot-prefixed files, meta files and anything else are
// left out; no sealed file is opened. A sharedDir without history/ lists
// no folder.
func ListHistory(sharedDir string) (History, error) {
	return ListHistoryWith(sharedDir, nil)
}

// MetaReader returns the meta object of the sealed file whose meta file
// is at metaPath, or nil when it is missing or unreadable.
type MetaReader func(metaPath string) *dbfiles.Meta

// ListHistoryWith is ListHistory reading meta files through readMeta (nil:
// dbfiles.ReadMeta each time), so that a caller may keep them in memory:
// a meta file never changes once its sealed file is published.
func ListHistoryWith(sharedDir string, readMeta MetaReader) (History, error) {
	if readMeta == nil {
		readMeta = func(p string) *dbfiles.Meta {
			m, err := dbfiles.ReadMeta(p)
			if err != nil {
				return nil
			}
			return &m
		}
	}
	out := History{Folders: []HistoryFolder{}}
	ents, err := os.ReadDir(filepath.Join(sharedDir, "history"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return out, fmt.Errorf("list %s: %w", filepath.Join(sharedDir, "history"), err)
	}
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		f, err := listFolder(sharedDir, "history/"+e.Name(), e.Name(), readMeta)
		if err != nil {
			return out, err
		}
		out.Folders = append(out.Folders, f)
	}
	sort.Slice(out.Folders, func(i, j int) bool { return out.Folders[i].Name < out.Folders[j].Name })
	if fi, err := os.Stat(filepath.Join(sharedDir, "merged")); err == nil && fi.IsDir() {
		f, err := listFolder(sharedDir, "merged", "merged", readMeta)
		if err != nil {
			return out, err
		}
		out.Folders = append(out.Folders, f)
	}
	return out, nil
}

func listFolder(sharedDir, rel, name string, readMeta MetaReader) (HistoryFolder, error) {
	f := HistoryFolder{Name: name, Path: rel, Files: []HistoryFile{}}
	dir := filepath.Join(sharedDir, filepath.FromSlash(rel))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return f, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") || !e.Type().IsRegular() {
			continue
		}
		var kind string
		switch {
		case rel == "merged" && strings.HasSuffix(n, ".db"):
			kind = "merged"
		case rel != "merged" && strings.HasSuffix(n, ".db.gz"):
			kind = "archive"
		case rel != "merged" && strings.HasSuffix(n, ".db"):
			kind = "sealed"
		default:
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		hf := HistoryFile{
			Path: rel + "/" + n, Name: n, Kind: kind, SizeBytes: fi.Size(),
			ModifiedAt: dbfiles.FormatTime(fi.ModTime()),
		}
		if kind == "sealed" {
			hf.Meta = readMeta(filepath.Join(dir, dbfiles.MetaFileName(n)))
		}
		f.Files = append(f.Files, hf)
	}
	sort.Slice(f.Files, func(i, j int) bool { return f.Files[i].Name < f.Files[j].Name })
	return f, nil
}
