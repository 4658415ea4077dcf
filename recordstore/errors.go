// Sentinel errors of the record model and the stable codes the CLI and the
// spool ledger print for them.

package recordstore

import (
	"errors"
	"fmt"

	"github.com/fb46ecde/records/recordstore/fsutil"
)

// Sentinels, grouped by what the caller did wrong. Every error a backend
// returns wraps exactly one of them (or none, for I/O failures), so
// errors.Is is the way to branch on a failure.
var (
	// ErrInvalid is returned when the input is malformed: a bad stream or
	// kind name, a row that does not fit its kind, a ttl that is not
	// positive, an empty append.
	ErrInvalid = errors.New("invalid")
	// ErrNotFound is returned when a stream or kind does not exist (or a
	// stream was deleted or has expired, or a generation fence does not
	// match the stream's current incarnation).
	ErrNotFound = errors.New("not found")
	// ErrSealed is returned when appending to a sealed stream.
	ErrSealed = errors.New("sealed")
	// ErrCapacity is returned when a write would exceed a configured limit.
	ErrCapacity = errors.New("capacity")
	// ErrSchemaConflict is returned when a kind is redeclared with a
	// change other than added columns, or rows are appended to a stream
	// under a kind other than the stream's own.
	ErrSchemaConflict = errors.New("schema conflict")
	// ErrUnsupported is returned when a backend cannot perform an
	// operation (for example a conflict policy it does not implement).
	ErrUnsupported = errors.New("unsupported")
	// ErrClosed is returned by a backend used after Close.
	ErrClosed = errors.New("closed")
	// ErrReadOnly is returned by a read-only backend asked to mutate
	// without a way to submit the mutation to the store's owner.
	ErrReadOnly = errors.New("read only")
	// ErrDiskFull is returned by a write that found no space left on the
	// file system of the store (SQLITE_FULL, ENOSPC): nothing of the write
	// is stored, and the writer is not stopped, so the same write succeeds
	// once space is freed.
	ErrDiskFull = errors.New("disk full")
)

// ErrFsync is wrapped by every error that reports a failed fsync, whichever
// package returns it: a spool publish, an owner's write, Sync or Close, a
// SQLite backend's Sync. It is fatal for the writer that saw it: after a
// failed fsync the kernel may have dropped the dirty pages, and a retry
// could report success for data that is gone ("fsyncgate", PostgreSQL
// 2018). Do not retry: stop writing through that Store or Backend, close
// it, and open the store again. Reopening recovers from the files: a spooled batch whose folder is still
// in incoming/ is applied by the next owner, exactly once. ErrFsync has
// no code of its own: Code reports it as CodeInternal.
var ErrFsync = fsutil.ErrSync

// Codes pairs every sentinel with its stable, machine-readable code.
var codes = []struct {
	err  error
	code string
}{
	{ErrInvalid, "invalid"},
	{ErrNotFound, "not_found"},
	{ErrSealed, "sealed"},
	{ErrCapacity, "capacity"},
	{ErrSchemaConflict, "schema_conflict"},
	{ErrUnsupported, "unsupported"},
	{ErrClosed, "closed"},
	{ErrReadOnly, "read_only"},
	{ErrDiskFull, "disk_full"},
}

// CodeInternal is the code of an error that wraps none of the sentinels
// (I/O failures, a corrupt file, a bug).
const CodeInternal = "internal"

// Code returns the stable code of err ("invalid", "not_found", ...), or
// CodeInternal when err wraps none of the sentinels. An error in the chain
// with an ErrorCode() string method (BatchError) supplies its own code. A nil
// error has code "".
func Code(err error) string {
	if err == nil {
		return ""
	}
	var coded interface{ ErrorCode() string }
	if errors.As(err, &coded) {
		if c := coded.ErrorCode(); c != "" {
			return c
		}
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return CodeInternal
}

// SentinelForCode returns the sentinel whose code is code, or nil when the
// code is unknown (including CodeInternal).
func SentinelForCode(code string) error {
	for _, c := range codes {
		if c.code == code {
			return c.err
		}
	}
	return nil
}

// Error is an error of one of the codes of Code, carrying its code and its
// message as fields, so that nobody has to cut a sentinel's text back out of
// Error(): Message, InvalidText and AsBatchError read Msg. Invalidf and
// Errorf return it; errors.Is(err, ErrX) holds for the sentinel of Code,
// and errors.As finds the *Error through any %w wrapping.
type Error struct {
	// Code is one of the codes of Code() ("invalid", "not_found", ...).
	Code string
	// Msg is the message without the sentinel's text: "kind jobs: no
	// columns".
	Msg string
	// Err is what the error wraps besides its code's sentinel (nil when
	// nothing): the operand of a %w verb, or the package sentinel given
	// to Errorf. Its text is part of Msg already; errors.Is and errors.As
	// look through it.
	Err error

	// quotesCode is set by Errorf when a %w operand has the same code, so
	// that Msg holds that operand's text with the sentinel's word in it
	// ("kind file k.json: invalid: duration"), which Message cuts out.
	quotesCode bool
}

// Error returns the sentinel's text, ": " and Msg ("invalid: kind jobs: no
// columns", "not found: stream s1"), or the sentinel's text alone when Msg
// is empty: the sentinel's text rather than the code, because these are the
// bytes errors of the code printed before Error existed (logs, retry
// records and specs compare them). A code with no sentinel stands for
// itself.
func (e *Error) Error() string {
	head := e.Code
	if s := SentinelForCode(e.Code); s != nil {
		head = s.Error()
	}
	if e.Msg == "" {
		return head
	}
	return head + ": " + e.Msg
}

// Is reports whether target is the sentinel of e's code.
func (e *Error) Is(target error) bool {
	s := SentinelForCode(e.Code)
	return s != nil && target == s
}

// Unwrap returns the cause, or nil.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error whose Msg is the formatted message. sentinel is
// either one of the sentinels of the codes (ErrInvalid, ErrNotFound, ...),
// which gives the code, or a package's own sentinel that is itself an
// *Error (spool's or parquet's "invalid: corrupt parquet file"), which
// gives its code and puts its message in front: Errorf(ErrCorrupt, "page
// %d", 3) reads "invalid: corrupt parquet file: page 3" and
// errors.Is(err, ErrCorrupt) holds. A %w verb keeps its operand in Err, so
// errors.Is and errors.As still find it. Any other sentinel gives code
// CodeInternal.
func Errorf(sentinel error, format string, args ...any) error {
	cause := fmt.Errorf(format, args...)
	var wrapped error
	if errors.Unwrap(cause) != nil {
		wrapped = cause
	} else if u, ok := cause.(interface{ Unwrap() []error }); ok && len(u.Unwrap()) > 0 {
		wrapped = cause
	}
	e := &Error{Code: CodeInternal, Msg: cause.Error(), Err: wrapped}
	if s, ok := sentinel.(*Error); ok {
		e.Code, e.Err = s.Code, s
		if s.Msg != "" {
			e.Msg = s.Msg + ": " + e.Msg
		}
		if wrapped != nil {
			e.Err = fmt.Errorf("%w: %w", s, wrapped)
		}
	} else {
		for _, c := range codes {
			if c.err == sentinel {
				e.Code = c.code
			}
		}
	}
	e.quotesCode = wrapped != nil && Code(wrapped) == e.Code
	return e
}

// Invalidf returns an *Error of code "invalid" with a formatted message
// (see Errorf).
func Invalidf(format string, args ...any) error {
	return Errorf(ErrInvalid, format, args...)
}

// CodedSentinel is a sentinel error with a code of its own, for packages
// whose failures need codes beside the core's (a fleet's "exists", a
// restore's "gap"): Error() is its text, Code reports its code for it and
// for every error that wraps it, and errors.Is matches it by identity.
type CodedSentinel struct{ code, text string }

// NewCodedSentinel returns a sentinel of code with the text text.
func NewCodedSentinel(code, text string) *CodedSentinel {
	return &CodedSentinel{code: code, text: text}
}

// Error is the sentinel's text.
func (e *CodedSentinel) Error() string { return e.text }

// ErrorCode is the sentinel's code, as Code reports it.
func (e *CodedSentinel) ErrorCode() string { return e.code }
