// Package errcode builds the drakkar packages' sentinel errors, so that
// each carries a code of recordstore.Code the way the engine's own do: the
// CLI prints "<code>: <message>" for it, the debug API and logs can branch
// on the code, and errors.Is finds the sentinel through any wrapping.
package errcode

import "github.com/fb46ecde/records/recordstore"

// Sentinel returns a sentinel error of code with the message msg, a
// *recordstore.Error whose Error() is "<the code's word>: <msg>". For one
// of the engine's codes ("invalid", "not_found", "unsupported", ...) it
// matches that code's sentinel (errors.Is(err, recordstore.ErrInvalid));
// for a code of drakkar's own ("fenced", "exists", "corrupt", ...), or for
// recordstore.CodeInternal, recordstore.Code reports code for the sentinel
// and for every error that wraps it. recordstore.Errorf(sentinel, ...)
// adds to the message and keeps both.
func Sentinel(code, msg string) error {
	if s := recordstore.SentinelForCode(code); s != nil {
		return recordstore.Errorf(s, "%s", msg)
	}
	return &recordstore.Error{Code: code, Msg: msg, Err: mark(code)}
}

// mark carries a code recordstore.Code knows no sentinel for: Code finds
// it in the chain through its ErrorCode method.
type mark string

// Error is the code itself; *recordstore.Error prints it in front of its
// message.
func (m mark) Error() string { return string(m) }

// ErrorCode is the code recordstore.Code reports.
func (m mark) ErrorCode() string { return string(m) }
