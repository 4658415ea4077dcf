// List and DiskStats: the stores under the root, found by walking the
// template's tree, skipping symlinks, sidecars, strays and misplaced files.

package fleet

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// ListOptions configure List.
type ListOptions struct {
	// Open checks each store read-only (PRAGMA quick_check); List then
	// fails with ErrUnreadable, after listing, when one cannot be read.
	Open bool
}

// Entry is one store found by List.
type Entry struct {
	Key  string `json:"key"`             // as ParseKey takes it
	Path string `json:"path"`            // relative to the root, '/' separators
	Size int64  `json:"size"`            // bytes of the store file (not its -wal)
	Err  string `json:"error,omitempty"` // with ListOptions.Open: why it cannot be read
}

// Skipped is a file under the root that List did not take as a store.
type Skipped struct {
	Path   string `json:"path"`   // relative to the root
	Reason string `json:"reason"` // "symlink", "stray", "misplaced: ..."
}

// Listing is what List found.
type Listing struct {
	Stores  []Entry   `json:"stores"`
	Skipped []Skipped `json:"skipped"`
}

// storeSidecars end the names of the files the engine and SQLite keep
// beside a store: never stores, never strays.
var storeSidecars = []string{"-wal", "-shm", "-journal", ".lock", ".owner.json", ".sock"}

// List walks the root and returns its stores sorted by path. It never
// follows a symlink and never opens a file for writing; a file that names
// a store by its path but records another key (or none) is skipped as
// misplaced, a file the template does not name as stray; sidecars, spool
// folders and staging folders are passed over silently. A store whose
// identity cannot be read is listed with Err set; only with
// ListOptions.Open does that fail the list.
//
// A file's identity is taken from the root's identity index (IndexName,
// see index.go) when the file's stat (device, inode, size, mtime, ctime)
// is what it was when the index recorded it; any other file's identity is
// read from its pages (rawident.go), and the file is opened with SQLite,
// read-only, only when that read cannot tell or finds another key than
// the path's (so that a misplaced or damaged file is judged by SQLite).
// With ListOptions.Open every file is opened (for quick_check). No store is created or changed; the index file
// is replaced (through fsutil, 0600) when an identity was read or a store
// is gone, and when that write fails (a root this process may not write)
// the list is still returned and the failure logged.
func (f *Fleet) List(ctx context.Context, opts ListOptions) (Listing, error) {
	var l Listing
	var unreadable []string
	var found []candidate
	err := f.walk(ctx, func(c candidate) { found = append(found, c) }, func(s Skipped) { l.Skipped = append(l.Skipped, s) })
	if err != nil {
		return l, err
	}
	ix := f.loadIndex()
	for _, c := range found {
		if err := ctx.Err(); err != nil {
			return l, fmt.Errorf("list %s: %w", f.root, err)
		}
		ix.saw(c.rel)
		e, reason := f.inspect(ctx, c.key, c.abs, c.rel, opts.Open, ix)
		if reason != "" {
			l.Skipped = append(l.Skipped, Skipped{Path: c.rel, Reason: reason})
			continue
		}
		if e.Err != "" && opts.Open {
			unreadable = append(unreadable, e.Key)
		}
		l.Stores = append(l.Stores, e)
	}
	f.saveIndex(ctx, ix)
	sort.Slice(l.Stores, func(i, j int) bool { return l.Stores[i].Path < l.Stores[j].Path })
	if len(unreadable) > 0 {
		return l, errorf(ErrUnreadable, "%d of %d stores cannot be read: %s", len(unreadable), len(l.Stores), strings.Join(unreadable, ", "))
	}
	return l, nil
}

// candidate is a file the template names as a store, found by walk: not
// opened yet, so possibly misplaced.
type candidate struct {
	key      Key
	abs, rel string
}

// walk walks the root in lexical order, never following a symlink and
// opening no file: found gets each regular file the template names as a
// store, skipped each symlink and stray. Sidecars, spool folders and
// staging folders are passed over.
func (f *Fleet) walk(ctx context.Context, found func(candidate), skipped func(Skipped)) error {
	err := filepath.WalkDir(f.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p == f.root {
			return nil
		}
		rel, _ := filepath.Rel(f.root, p)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			skipped(Skipped{Path: rel, Reason: "symlink"})
			return nil
		case d.IsDir() && (strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".spool")):
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case !d.Type().IsRegular() || strings.HasPrefix(name, "."):
			return nil
		}
		k, ok := f.tpl.Match(rel)
		if !ok {
			if !isSidecar(f.tpl, rel) {
				skipped(Skipped{Path: rel, Reason: "stray"})
			}
			return nil
		}
		found(candidate{key: k, abs: p, rel: rel})
		return nil
	})
	if err != nil {
		return fmt.Errorf("list %s: %w", f.root, err)
	}
	return nil
}

// isSidecar reports whether rel is a sidecar of a store path.
func isSidecar(t Template, rel string) bool {
	for _, s := range storeSidecars {
		if base, ok := strings.CutSuffix(rel, s); ok {
			if _, ok := t.Match(base); ok {
				return true
			}
		}
	}
	return false
}

// inspect reads the identity of the store file at p (and, with check, runs
// quick_check): an Entry, or why the file is skipped. Without check, the
// identity comes from ix when the file's stamp matches its entry there;
// an identity read from the file goes into ix when the file's stamp was
// the same before and after the read.
func (f *Fleet) inspect(ctx context.Context, k Key, p, rel string, check bool, ix *indexRun) (Entry, string) {
	e := Entry{Key: k.String(), Path: rel}
	st, stamped := stampOf(p)
	if stamped {
		e.Size = st.size
	} else if size, err := statSize(p); err == nil {
		e.Size = size
	}
	id, cached := "", false
	if stamped && !check {
		id, cached = ix.lookup(rel, st)
	}
	if !cached {
		var complaint string
		var err error
		id, complaint, err = f.readFile(ctx, k, p, rel, check)
		if err != nil {
			e.Err = err.Error()
			return e, ""
		}
		if now, ok := stampOf(p); stamped && ok && now == st {
			ix.put(rel, st, id)
		}
		e.Err = complaint
	}
	if id != k.String() {
		if id == "" {
			return e, "misplaced: records no fleet key"
		}
		return e, "misplaced: records " + cut(id)
	}
	return e, ""
}

// readFile reads the identity the store file at p records: from its pages
// when they show k's key, else (and always with check) through SQLite,
// opening the file read-only; with check it also runs quick_check, whose
// complaint (or failure) it returns as complaint.
//
// With check, a settled file (nothing in a -wal or -journal beside it) is
// first read on an immutable connection (immutable=1: no locks, no -wal or
// -shm made and removed), which costs a fraction of a plain one; only when
// that finds the file's key and no complaint is its answer taken. Any
// other answer — a complaint, an error, another key: perhaps a process
// wrote the file meanwhile, which an immutable connection does not see —
// is asked again on a plain connection, whose answer stands.
func (f *Fleet) readFile(ctx context.Context, k Key, p, rel string, check bool) (id, complaint string, err error) {
	if f.hooks.inspected != nil {
		f.hooks.inspected(rel)
	}
	if !check {
		if id, ok := rawIdentity(p); ok && id == k.String() {
			return id, "", nil
		}
	}
	if check && settled(p) {
		if id, complaint, err := checkFile(ctx, p, openImmutable, true); err == nil && complaint == "" && id == k.String() {
			return id, "", nil
		}
	}
	if f.hooks.sqliteRead != nil {
		f.hooks.sqliteRead(rel)
	}
	return checkFile(ctx, p, func(p string) (*sql.DB, error) { return openRaw(p, true) }, check)
}

// checkFile opens the store file at p with open and reads its identity;
// with check also its quick_check complaint (see readFile).
func checkFile(ctx context.Context, p string, open func(string) (*sql.DB, error), check bool) (id, complaint string, err error) {
	db, err := open(p)
	if err != nil {
		return "", "", err
	}
	defer db.Close()
	if id, err = identityOf(ctx, db, p); err != nil {
		return "", "", err
	}
	if check {
		c, err := integrity(ctx, db, true)
		switch {
		case err != nil:
			complaint = err.Error()
		case c != "":
			complaint = "quick_check: " + c
		}
	}
	return id, complaint, nil
}

// DiskStats are the totals of the stores under the root.
type DiskStats struct {
	Stores  int   `json:"stores"`  // stores found by List
	Bytes   int64 `json:"bytes"`   // their files' sizes
	Buckets int   `json:"buckets"` // folders holding at least one store
	Skipped int   `json:"skipped"` // files List skipped (strays, misplaced, symlinks)
}

// DiskStats lists the root (as List does without ListOptions.Open: an
// identity is read only from a file the index does not know unchanged)
// and sums it.
func (f *Fleet) DiskStats(ctx context.Context) (DiskStats, error) {
	l, err := f.List(ctx, ListOptions{})
	if err != nil {
		return DiskStats{}, err
	}
	s := DiskStats{Stores: len(l.Stores), Skipped: len(l.Skipped)}
	dirs := map[string]bool{}
	for _, e := range l.Stores {
		s.Bytes += e.Size
		dirs[filepath.Dir(e.Path)] = true
	}
	s.Buckets = len(dirs)
	return s, nil
}
