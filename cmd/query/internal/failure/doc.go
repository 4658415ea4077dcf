// Package failure turns an error from the record store into the two things
// the query command shows for it: its stable code ("invalid", "not_found",
// ..., "internal") and a one-line message that does not repeat that code.
// Both the command line (query: <code>: <message>) and the HTTP API
// ({"error":{"code":..., "message":...}}) use it, so they always agree.
package failure
