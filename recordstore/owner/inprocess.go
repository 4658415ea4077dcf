// In-process sharing: one process that opens the same store twice gets one
// handle, reference counted, so it never spools to itself and never fights
// itself for the lock.

package owner

import (
	"sync"

	"github.com/fb46ecde/records/recordstore"
)

var registry = struct {
	sync.Mutex
	m map[string]any // absolute store path → *Store[T]
}{m: map[string]any{}}

// shared returns the store already open at path (one more reference) or
// opens it.
func shared[T Target](path string, open func() (*Store[T], error)) (*Store[T], error) {
	registry.Lock()
	defer registry.Unlock()
	if v, ok := registry.m[path]; ok {
		s, ok := v.(*Store[T])
		if !ok {
			return nil, recordstore.Errorf(recordstore.ErrInvalid, "%s is already open in this process with another backend type", path)
		}
		s.mu.Lock()
		s.mu.refs++
		s.mu.Unlock()
		return s, nil
	}
	s, err := open()
	if err != nil {
		return nil, err
	}
	s.mu.refs = 1
	registry.m[path] = s
	return s, nil
}

// release drops one reference and closes the store with the last one.
func release[T Target](path string, s *Store[T], closeFn func() error) error {
	registry.Lock()
	s.mu.Lock()
	if s.mu.refs == 0 {
		s.mu.Unlock()
		registry.Unlock()
		return nil
	}
	s.mu.refs--
	last := s.mu.refs == 0
	s.mu.Unlock()
	if last && registry.m[path] == any(s) {
		delete(registry.m, path)
	}
	registry.Unlock()
	if !last {
		return nil
	}
	return closeFn()
}
