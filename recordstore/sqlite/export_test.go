// Seams of the package for its external specs.

package sqlite

// SetSealStep makes Seal call fn after each of its named steps ("dropped",
// "journal", "closed") and stop with fn's error, until the returned func
// puts the default back.
func SetSealStep(fn func(step string) error) (restore func()) {
	prev := sealStep
	sealStep = fn
	return func() { sealStep = prev }
}

// LWWUpsert reports whether the last append of kind to b found its table
// fit for the single-statement lww write (see lwwupsert.go).
func LWWUpsert(b *Backend, kind string) bool {
	t := b.tables.get(kind)
	return t != nil && t.upsertAt != nil && t.upsertAt.v.Load()&1 == 1
}

// SetCarryStatted makes the carry step call fn between its stat of a
// CarryFrom file and its ATTACH, until the returned func puts the default
// back.
func SetCarryStatted(fn func(path string)) (restore func()) {
	prev := carryStatted
	carryStatted = fn
	return func() { carryStatted = prev }
}
