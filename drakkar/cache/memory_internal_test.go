// Specs of the memory layer: the LRU of clean entries and the restore of
// a failed flush.

package cache

import (
	"fmt"
	"testing"
)

func TestMemoryEvictsTheLeastRecentlyUsedCleanEntry(t *testing.T) {
	m := newMemory(2)
	for i := range 3 {
		m.put(Entry{Key: fmt.Sprint("k", i)})
		if i == 1 {
			m.get("k0") // k0 is now the most recently used
		}
	}
	if _, ok := m.get("k1"); ok {
		t.Fatal("k1 was the least recently used and should be gone")
	}
	for _, k := range []string{"k0", "k2"} {
		if _, ok := m.get(k); !ok {
			t.Fatalf("%s should be kept", k)
		}
	}
	m0 := newMemory(0)
	m0.put(Entry{Key: "k"})
	if _, ok := m0.get("k"); ok {
		t.Fatal("a memory of size 0 keeps nothing clean")
	}
}

func TestMemoryRestoreKeepsNewerLiveWrites(t *testing.T) {
	m := newMemory(10)
	m.dirty["a"] = Entry{Key: "a", Value: "1"}
	m.dirty["b"] = Entry{Key: "b", Value: "1"}
	taken := m.takeDirty()
	if len(m.dirty) != 0 || len(taken) != 2 {
		t.Fatalf("takeDirty: %d left, %d taken", len(m.dirty), len(taken))
	}
	m.dirty["a"] = Entry{Key: "a", Value: "2"}
	m.restore(taken)
	if m.dirty["a"].Value != "2" || m.dirty["b"].Value != "1" {
		t.Fatalf("restore: %+v", m.dirty)
	}
	if e, _ := m.get("a"); e.Value != "2" {
		t.Fatalf("a dirty entry comes first: %+v", e)
	}
}
