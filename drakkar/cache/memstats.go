package cache

// MemStats is how many distinct keys the memory layer holds (entries
// waiting for a flush, entries being flushed, and the clean entries it
// keeps) and the sum of their newest values' SizeBytes. It reads memory
// only.
func (c *Cache) MemStats() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := make(map[string]bool, len(c.mem.dirty)+len(c.mem.flushing)+len(c.mem.clean))
	add := func(e Entry) {
		if !seen[e.Key] {
			seen[e.Key] = true
			entries++
			bytes += e.SizeBytes
		}
	}
	for _, e := range c.mem.dirty {
		add(e)
	}
	for _, e := range c.mem.flushing {
		add(e)
	}
	for _, el := range c.mem.clean {
		add(el.Value.(Entry))
	}
	return entries, bytes
}
