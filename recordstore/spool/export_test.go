// Test-only access to unexported parts of package spool.

package spool

import "github.com/fb46ecde/records/recordstore"

// ScanLine parses one NDJSON line of kind with the schema-aware scanner.
func ScanLine(kind *recordstore.Kind, line []byte) (recordstore.Values, error) {
	return newRowScanner(kind).scan(line)
}

// StoredDatetime is the encoder's check of the stored datetime form.
func StoredDatetime(s string) bool { return storedDatetime(s) }

// WaitPrepared waits for the preparation of the next batch folder, if one
// is being made.
func (d *Dir) WaitPrepared() { d.prep.wg.Wait() }
