// The memory layer: the dirty entries waiting for the next flush, and an
// LRU of clean entries (read from the file or flushed) in front of the
// reader connection.

package cache

import "container/list"

// memory is not safe for concurrent use: the Cache guards it with mu.
type memory struct {
	// dirty are the entries written since the last flush began, by key.
	dirty map[string]Entry
	// flushing are the entries the running flush took, until it ends:
	// they are still the newest this worker knows of their keys.
	flushing map[string]Entry
	// clean is the LRU of entries known to match the file, at most max.
	clean map[string]*list.Element
	order *list.List // front = most recently used; values are Entry
	max   int
	// gen rises at every forget: an entry read from the file, or
	// flushed, before a forget may be older than the file by then and is
	// kept only when gen did not move meanwhile.
	gen uint64
}

func newMemory(max int) *memory {
	return &memory{dirty: map[string]Entry{}, clean: map[string]*list.Element{}, order: list.New(), max: max}
}

// get returns the entry of key: a dirty one first, else a clean one.
func (m *memory) get(key string) (Entry, bool) {
	if e, ok := m.dirty[key]; ok {
		return e, true
	}
	if e, ok := m.flushing[key]; ok {
		return e, true
	}
	if el, ok := m.clean[key]; ok {
		m.order.MoveToFront(el)
		return el.Value.(Entry), true
	}
	return Entry{}, false
}

// put records e as clean (it matches the file), evicting the least
// recently used clean entry beyond max.
func (m *memory) put(e Entry) {
	if m.max == 0 {
		return
	}
	if el, ok := m.clean[e.Key]; ok {
		el.Value = e
		m.order.MoveToFront(el)
		return
	}
	m.clean[e.Key] = m.order.PushFront(e)
	for m.order.Len() > m.max {
		last := m.order.Back()
		delete(m.clean, last.Value.(Entry).Key)
		m.order.Remove(last)
	}
}

// forget drops the clean entry of key.
func (m *memory) forget(key string) {
	m.gen++
	if el, ok := m.clean[key]; ok {
		delete(m.clean, key)
		m.order.Remove(el)
	}
}

// forgetClean drops every clean entry (another process wrote the file).
func (m *memory) forgetClean() {
	m.gen++
	m.clean = map[string]*list.Element{}
	m.order.Init()
}

// takeDirty swaps the dirty map for an empty one and returns it; its
// entries are the flushing ones until doneFlushing or restore.
func (m *memory) takeDirty() map[string]Entry {
	d := m.dirty
	m.dirty = map[string]Entry{}
	m.flushing = d
	return d
}

// doneFlushing ends the flush that took the flushing entries.
func (m *memory) doneFlushing() { m.flushing = nil }

// restore puts back the entries of a failed flush, except those written
// again since it began: the newer live write wins.
func (m *memory) restore(d map[string]Entry) {
	m.flushing = nil
	for k, e := range d {
		if _, newer := m.dirty[k]; !newer {
			m.dirty[k] = e
		}
	}
}
