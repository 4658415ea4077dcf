package spool

import (
	"reflect"
	"testing"
)

// TestManifestWireMatchesManifest keeps manifestWire in step with
// Manifest: the same fields, names and JSON tags, in the same order, the
// schemas aside (JSON text in the wire form).
func TestManifestWireMatchesManifest(t *testing.T) {
	m, w := reflect.TypeFor[Manifest](), reflect.TypeFor[manifestWire]()
	if m.NumField() != w.NumField() {
		t.Fatalf("Manifest has %d fields, manifestWire %d", m.NumField(), w.NumField())
	}
	for i := range m.NumField() {
		mf, wf := m.Field(i), w.Field(i)
		if mf.Name != wf.Name || mf.Tag != wf.Tag {
			t.Errorf("field %d: Manifest %s `%s`, manifestWire %s `%s`", i, mf.Name, mf.Tag, wf.Name, wf.Tag)
		}
		if mf.Name != "Schemas" && mf.Type != wf.Type {
			t.Errorf("field %s: Manifest %s, manifestWire %s", mf.Name, mf.Type, wf.Type)
		}
	}
}
