// Whether this process may write a file, where access(2) is not at hand.

//go:build !unix

package sqlite

// writable reports true: without access(2) the file SQLite could not write
// is not named (the error keeps SQLite's own text).
func writable(string) bool { return true }
