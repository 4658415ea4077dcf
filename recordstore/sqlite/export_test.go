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
