// Test seams of the fleet package.

package fleet

// SetBeforePublish makes every create call h with the store path just
// before it links the staged file there; an error from h fails the create.
func (f *Fleet) SetBeforePublish(h func(path string) error) { f.hooks.beforePublish = h }
