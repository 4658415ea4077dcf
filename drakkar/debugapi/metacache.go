package debugapi

import (
	"encoding/json"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/recorder"
)

// metaItem is one meta file kept in memory, with what identifies its
// version on disk and its JSON form.
type metaItem struct {
	size  int64
	mtime time.Time
	ino   uint64
	meta  *dbfiles.Meta
	enc   json.RawMessage
	seen  uint64
}

// metaCache keeps the meta files the Databases page read, so that a page
// costs one lstat per meta file instead of a read and a decode (a meta
// file never changes once its sealed file is published; a replaced one
// has another size, time or inode and is read again).
type metaCache struct {
	mu  sync.Mutex
	by  map[string]*metaItem
	gen uint64
	// encoded maps a cached meta to its JSON form for the answer.
	encoded map[*dbfiles.Meta]json.RawMessage
}

func newMetaCache() *metaCache {
	return &metaCache{by: map[string]*metaItem{}, encoded: map[*dbfiles.Meta]json.RawMessage{}}
}

// read is a recorder.MetaReader over the cache.
func (c *metaCache) read(path string) *dbfiles.Meta {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	c.mu.Lock()
	it, ok := c.by[path]
	if ok && it.size == fi.Size() && it.mtime.Equal(fi.ModTime()) && it.ino == ino {
		it.seen = c.gen
		c.mu.Unlock()
		return it.meta
	}
	c.mu.Unlock()
	m, err := dbfiles.ReadMeta(path)
	if err != nil {
		return nil
	}
	enc, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok {
		delete(c.encoded, it.meta)
	}
	c.by[path] = &metaItem{size: fi.Size(), mtime: fi.ModTime(), ino: ino, meta: &m, enc: enc, seen: c.gen}
	c.encoded[&m] = enc
	return &m
}

// list lists the history of shared through the cache and forgets the meta
// files it no longer saw.
func (c *metaCache) list(shared string) (recorder.History, error) {
	c.mu.Lock()
	c.gen++
	gen := c.gen
	c.mu.Unlock()
	h, err := recorder.ListHistoryWith(shared, c.read)
	if err != nil {
		return h, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, it := range c.by {
		if it.seen != gen {
			delete(c.encoded, it.meta)
			delete(c.by, p)
		}
	}
	return h, nil
}

// encodedMeta returns the JSON form of a meta the cache returned.
func (c *metaCache) encodedMeta(m *dbfiles.Meta) (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	enc, ok := c.encoded[m]
	return enc, ok
}

// historyFile is recorder.HistoryFile with its meta already encoded.
type historyFile struct {
	Path       string          `json:"path"`
	Name       string          `json:"name"`
	Kind       string          `json:"kind"`
	SizeBytes  int64           `json:"size_bytes"`
	ModifiedAt string          `json:"modified_at"`
	Meta       json.RawMessage `json:"meta"`
}

// historyFolder is recorder.HistoryFolder of historyFile.
type historyFolder struct {
	Name  string        `json:"name"`
	Path  string        `json:"path"`
	Files []historyFile `json:"files"`
}

// historyJSON is recorder.History of historyFolder.
type historyJSON struct {
	Folders []historyFolder `json:"folders"`
}

// encodeHistory turns a listing into its answer form, reusing the cached
// JSON of each meta.
func (c *metaCache) encodeHistory(h recorder.History) (historyJSON, error) {
	out := historyJSON{Folders: make([]historyFolder, 0, len(h.Folders))}
	for _, f := range h.Folders {
		hf := historyFolder{Name: f.Name, Path: f.Path, Files: make([]historyFile, 0, len(f.Files))}
		for _, x := range f.Files {
			meta := json.RawMessage("null")
			if x.Meta != nil {
				enc, ok := c.encodedMeta(x.Meta)
				if !ok {
					b, err := json.Marshal(x.Meta)
					if err != nil {
						return out, err
					}
					enc = b
				}
				meta = enc
			}
			hf.Files = append(hf.Files, historyFile{Path: x.Path, Name: x.Name, Kind: x.Kind, SizeBytes: x.SizeBytes, ModifiedAt: x.ModifiedAt, Meta: meta})
		}
		out.Folders = append(out.Folders, hf)
	}
	return out, nil
}
