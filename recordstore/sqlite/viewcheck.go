// What makes a view's text safe to run: SQLite's own verdict that it is
// exactly one read-only statement (taken on a connection of the C API, as
// the driver reaches neither the tail of a prepare nor a statement's
// handle), and an authorizer on the reader connection that runs it.

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/fb46ecde/records/recordstore"
)

// viewRefusal is checkStatement's answer for text that is not one
// read-only statement SQLite compiles; why says what is wrong, compile
// whether SQLite did not compile it.
type viewRefusal struct {
	why     string
	compile bool
}

func (e *viewRefusal) Error() string { return e.why }

// checkedViews are statements checkStatement passed, so that a view run
// again (every request of a served view) is not prepared on a connection
// of its own again. That a text is one statement, and that a statement
// starting with viewSQL's SELECT is read-only, does not depend on the file;
// whether it compiles does, and the run on the reader pool finds out.
var checkedViews = &stmtSet{max: 1024}

// stmtSet is a set of statement texts that forgets all of them once it
// holds max. Safe for concurrent use.
type stmtSet struct {
	mu  sync.Mutex
	max int
	set map[string]struct{} // guarded by mu
}

func (s *stmtSet) has(q string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.set[q]
	return ok
}

func (s *stmtSet) add(q string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil || len(s.set) >= s.max {
		s.set = make(map[string]struct{})
	}
	s.set[q] = struct{}{}
}

// checkStatement prepares text on a connection of its own, opened
// read-only on the database at uri, and returns nil when text is exactly
// one statement (nothing but spaces and comments after it) that SQLite
// reports read-only (sqlite3_stmt_readonly). The statement is compiled,
// never run: nothing of text executes, and nothing is written. Text that
// does not compile, goes on after its first statement or would write is
// a *viewRefusal; any other failure (the file cannot be opened, stays
// busy past busy, is damaged) an error of its own.
func checkStatement(uri string, busy time.Duration, text string) error {
	tls := libc.NewTLS()
	defer tls.Close()
	db, err := openCheckConn(tls, uri, busy)
	if err != nil {
		return err
	}
	defer sqlite3.Xsqlite3_close_v2(tls, db)
	ztext, err := libc.CString(text)
	if err != nil {
		return err
	}
	defer libc.Xfree(tls, ztext)
	// out holds the two results of sqlite3_prepare_v2: the statement and
	// the tail, a pointer into ztext just past the first statement.
	out := libc.Xmalloc(tls, libc.Tsize_t(2*ptrSize))
	if out == 0 {
		return errors.New("check view: out of memory")
	}
	defer libc.Xfree(tls, out)
	pstmt, ptail := out, out+ptrSize
	if rc := sqlite3.Xsqlite3_prepare_v2(tls, db, ztext, -1, pstmt, ptail); rc != sqlite3.SQLITE_OK {
		return checkError(tls, db, rc)
	}
	stmt := loadPtr(pstmt)
	if stmt == 0 {
		return &viewRefusal{why: "no SQL statement"}
	}
	defer sqlite3.Xsqlite3_finalize(tls, stmt)
	tail := libc.GoString(loadPtr(ptail))
	if rest := skipSpaceAndComments(tail); rest != "" {
		return &viewRefusal{why: "more than one statement: " + recordstore.Quote(clip(rest, 40)) + " follows the first"}
	}
	if sqlite3.Xsqlite3_stmt_readonly(tls, stmt) == 0 {
		return &viewRefusal{why: "the statement would write"}
	}
	return nil
}

// ptrSize is the size of a C pointer.
const ptrSize = uintptr(unsafe.Sizeof(uintptr(0)))

// loadPtr reads the C pointer stored at p (C memory, not Go's).
func loadPtr(p uintptr) uintptr { return libc.AtomicLoadNUintptr(p, 0) }

// openCheckConn opens the database at uri read-only, with busy as its
// busy timeout. The caller closes it.
func openCheckConn(tls *libc.TLS, uri string, busy time.Duration) (uintptr, error) {
	zuri, err := libc.CString(uri)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(tls, zuri)
	pdb := libc.Xmalloc(tls, libc.Tsize_t(ptrSize))
	if pdb == 0 {
		return 0, errors.New("check view: out of memory")
	}
	defer libc.Xfree(tls, pdb)
	const flags = sqlite3.SQLITE_OPEN_READONLY | sqlite3.SQLITE_OPEN_URI | sqlite3.SQLITE_OPEN_NOMUTEX
	rc := sqlite3.Xsqlite3_open_v2(tls, zuri, pdb, flags, 0)
	db := loadPtr(pdb)
	if rc != sqlite3.SQLITE_OK {
		err := fmt.Errorf("check view: open %s: %w", uri, checkError(tls, db, rc))
		if db != 0 {
			sqlite3.Xsqlite3_close_v2(tls, db)
		}
		return 0, err
	}
	sqlite3.Xsqlite3_busy_timeout(tls, db, int32(min(busy.Milliseconds(), 1<<31-1)))
	return db, nil
}

// checkError is the error of result code rc on db: a *viewRefusal for
// SQLITE_ERROR and SQLITE_AUTH (the text does not compile, or asks for
// what is not allowed), else an error carrying the code, ErrCorrupt for a
// damaged file.
func checkError(tls *libc.TLS, db uintptr, rc int32) error {
	msg := sqlite3.Xsqlite3_errstr(tls, rc)
	text := libc.GoString(msg)
	if db != 0 {
		text = libc.GoString(sqlite3.Xsqlite3_errmsg(tls, db))
	}
	switch rc & 0xff {
	case sqlite3.SQLITE_ERROR, sqlite3.SQLITE_AUTH:
		return &viewRefusal{why: text, compile: true}
	case sqliteCorrupt, sqliteNotADB:
		return fmt.Errorf("%w: %s (%d)", ErrCorrupt, text, rc)
	}
	return fmt.Errorf("%s (%d)", text, rc)
}

// skipSpaceAndComments returns s without its leading white space and SQL
// comments ("-- …" to the end of a line, "/* … */", which SQLite also ends
// at the end of the text).
func skipSpaceAndComments(s string) string {
	for {
		s = strings.TrimLeft(s, " \t\n\f\r")
		switch {
		case strings.HasPrefix(s, "--"):
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				return ""
			}
			s = s[i+1:]
		case strings.HasPrefix(s, "/*"):
			i := strings.Index(s[2:], "*/")
			if i < 0 {
				return ""
			}
			s = s[2+i+2:]
		default:
			return s
		}
	}
}

// clip returns s cut to at most n bytes, on a rune boundary, with "…"
// when cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// viewAuthorizer is the authorizer a reader connection runs a view
// under: SQLite asks it about every operation a statement compiles to,
// and it allows reading (SELECT, reading a column, a recursive common
// table expression, calling a function but load_extension, the schema
// pragmas of infoPragmas that table-valued functions such as
// pragma_table_info run) and the BEGIN and ROLLBACK of the read
// transaction. It denies anything else — a write, any other PRAGMA,
// ATTACH, DDL — so that such a statement does not compile, whatever
// checkStatement let through.
func viewAuthorizer(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRead, sqlite.AuthRecursive, sqlite.AuthTransaction:
		return sqlite.AuthorizerOK
	case sqlite.AuthFunction:
		if strings.EqualFold(arg2, "load_extension") {
			return sqlite.AuthorizerDeny
		}
		return sqlite.AuthorizerOK
	case sqlite.AuthPragma:
		if infoPragmas[strings.ToLower(arg1)] {
			return sqlite.AuthorizerOK
		}
	}
	return sqlite.AuthorizerDeny
}

// infoPragmas are the pragmas that only describe the schema: their
// argument names a table or index, never a setting.
var infoPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true,
	"index_info": true, "index_xinfo": true, "index_list": true,
	"foreign_key_list": true,
}

// withViewConn calls fn with a connection of the reader pool that has
// viewAuthorizer installed, and removes it before the connection goes
// back to the pool; a connection it cannot be removed from is closed.
func (b *Backend) withViewConn(ctx context.Context, fn func(*sql.Conn) error) (err error) {
	conn, err := b.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("view: reader connection: %w", err)
	}
	defer conn.Close()
	if err := conn.Raw(func(dc any) error { return setAuthorizer(dc, viewAuthorizer) }); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	defer func() {
		rerr := conn.Raw(func(dc any) error {
			if setAuthorizer(dc, nil) != nil {
				return driver.ErrBadConn // closes the connection
			}
			return nil
		})
		if err == nil && rerr != nil && !errors.Is(rerr, driver.ErrBadConn) {
			err = rerr
		}
	}()
	return fn(conn)
}

// setAuthorizer installs fn (nil: none) on the driver connection dc.
func setAuthorizer(dc any, fn sqlite.AuthorizerFn) error {
	ar, ok := dc.(sqlite.AuthorizerRegisterer)
	if !ok {
		return fmt.Errorf("driver connection %T has no authorizer", dc)
	}
	return ar.RegisterAuthorizer(fn)
}

// viewError is err of view, a view named for a message ("view of kind
// jobs"): ErrInvalid when SQLite refused its text (it does not compile, is
// not one read-only statement, or asks for what viewAuthorizer denies).
func viewError(view string, err error) error {
	var vr *viewRefusal
	var se *sqlite.Error
	switch {
	case errors.As(err, &vr) && vr.compile:
		return recordstore.Invalidf("%s does not compile as one SELECT over rows: %s", view, vr.why)
	case errors.As(err, &vr):
		return recordstore.Invalidf("%s is not one read-only SELECT over rows: %s", view, vr.why)
	case isAuthDenied(err):
		return recordstore.Invalidf("%s is not one read-only SELECT over rows: %v", view, err)
	case errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_ERROR:
		return recordstore.Invalidf("%s does not compile as one SELECT over rows: %v", view, err)
	}
	return fmt.Errorf("%s: %w", view, err)
}

// isAuthDenied reports whether err is SQLite's SQLITE_AUTH: an authorizer
// denied an operation of the statement.
func isAuthDenied(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_AUTH
}
