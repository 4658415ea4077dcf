// Package seams reaches the fault-injection seams that other packages keep
// unexported, so that the tests of one package can inject faults into
// another while users of the library cannot set them at all.
//
// Each seam is a function variable that the package owning it sets when it
// is initialised; it is nil until that package is linked in.
package seams

import "github.com/fb46ecde/records/recordstore/fsutil"

// SetSpoolFS makes opts, a *spool.Options, use h as its durable-file
// helper instead of fsutil.Default: every file and folder the spool makes
// durable then goes through h.FS, whose faults the test chooses. Package
// spool sets it.
var SetSpoolFS func(opts any, h *fsutil.Helper)
