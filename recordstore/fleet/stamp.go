// Reopening a store this process closed skips its identity read when the
// file is provably the one it read: the identity row is written once, at
// creation, and only a hand (a copy, a rename) can put another store's
// file at the path. A rename over the path changes the file's inode; a
// write into it (cp over it, a restore) changes its change time (ctime),
// which no process can set back. So the fleet remembers, when it closes a
// store whose identity it checked, the file's device, inode, size, mtime and
// ctime, and the next open of that key reads the identity again only when
// one of them changed. A store this process created is remembered so too.

package fleet

// stamp identifies one state of a file: device, inode, size, modification
// and change time (nanoseconds).
type stamp struct {
	dev, ino           uint64
	size, mtime, ctime int64
}

// maxStamps bounds the remembered stamps (about 50 bytes each); past it
// one is forgotten, and that store's next open reads its identity.
const maxStamps = 1 << 16

// rememberIdentity records the stamp of the file at abs, the store of k
// that this process checked, opened and has just closed, or has just
// created (a provision, an import, an open that creates). still, when not
// nil, is asked after the stamp is taken whether abs is still the file
// that was checked; when it says no (the store was deleted, or deleted
// and made again, by another process), nothing is recorded.
func (f *Fleet) rememberIdentity(k Key, abs string, still func() bool) {
	st, ok := stampOf(abs)
	if !ok || (still != nil && !still()) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.stamps) >= maxStamps {
		for old := range f.stamps {
			delete(f.stamps, old)
			break
		}
	}
	f.stamps[k] = st
}

// knownIdentity reports whether the file at abs is, unchanged, the store
// of k whose identity this process checked before closing it. The stamp is
// forgotten either way: the open about to happen writes the file.
func (f *Fleet) knownIdentity(k Key, abs string) bool {
	f.mu.Lock()
	was, ok := f.stamps[k]
	delete(f.stamps, k)
	f.mu.Unlock()
	if !ok {
		return false
	}
	now, ok := stampOf(abs)
	return ok && now == was
}
