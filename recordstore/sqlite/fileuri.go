// File URIs: the one place a path becomes the name the driver hands to
// SQLite, and a plain connection opened on one file (FileURI, OpenFile).

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// FileURI returns the SQLite URI of the file at path with params, for
// sql.Open("sqlite", …), ATTACH or the backup API. The driver hands a name
// that starts with "file:" to SQLite whole and reads its own parameters
// (_pragma, _txlock, …) from the text after the first '?'; SQLite decodes
// %HH in the path, ends the path at '?' and drops everything after '#'.
// So every byte of path that either would misread — '%', '?', '#', and
// besides those every control byte, space and byte above 0x7e — is
// written %HH, and SQLite opens exactly path, whatever its folders are
// named. An absolute path gets an empty authority ("file:///…"), so a
// path starting with "//" is not read as a host. params are SQLite's URI
// parameters (mode, immutable, …) and the driver's, encoded sorted by key;
// nil or empty adds no '?'. A path holding a NUL byte names no file:
// SQLite cuts it at the NUL (OpenFile refuses such a path).
func FileURI(path string, params url.Values) string {
	var b strings.Builder
	b.Grow(len(path) + 16)
	b.WriteString("file:")
	if strings.HasPrefix(path, "/") {
		b.WriteString("//")
	}
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c <= ' ' || c >= 0x7f || c == '%' || c == '?' || c == '#' {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	if len(params) > 0 {
		b.WriteByte('?')
		b.WriteString(params.Encode())
	}
	return b.String()
}

// FileOptions say how OpenFile opens a file.
type FileOptions struct {
	// ReadOnly opens the file mode=ro: the connection never writes it, and
	// SQLite never creates it.
	ReadOnly bool
	// Immutable adds immutable=1 (and implies ReadOnly): SQLite takes no
	// lock and reads no -wal, for a file nothing changes any more (a
	// sealed file, a merge result).
	Immutable bool
	// MustExist refuses a missing path (an error wrapping
	// recordstore.ErrNotFound) and opens a writable file mode=rw, so that
	// a file removed between the check and a connection of the pool is
	// never created empty in its place. Without it (and without
	// ReadOnly) a missing file is created, with the process's umask.
	MustExist bool
	// BusyTimeout is the connection's busy_timeout; 0 leaves SQLite's
	// (none: a locked file fails at once).
	BusyTimeout time.Duration
	// Pragmas are more PRAGMA settings the driver runs on every new
	// connection, as name(value): "query_only(1)", "journal_mode(DELETE)".
	Pragmas []string
}

// params are the URI parameters of o.
func (o FileOptions) params() url.Values {
	q := url.Values{}
	switch {
	case o.Immutable:
		q.Set("mode", "ro")
		q.Set("immutable", "1")
	case o.ReadOnly:
		q.Set("mode", "ro")
	case o.MustExist:
		q.Set("mode", "rw")
	}
	if o.BusyTimeout > 0 {
		q.Add("_pragma", "busy_timeout("+strconv.FormatInt(o.BusyTimeout.Milliseconds(), 10)+")")
	}
	for _, p := range o.Pragmas {
		q.Add("_pragma", p)
	}
	return q
}

// OpenFile opens a database/sql pool on the one SQLite file at path, named
// by FileURI, and checks it with a first connection. It is for files the
// engine's Backend does not own: sealed files, merge outputs, caches,
// identity rows. The caller sizes the pool (SetMaxOpenConns) and closes it.
//
// An empty path or one holding a NUL byte is refused (recordstore.ErrInvalid);
// with MustExist, ReadOnly or Immutable a missing file is an error wrapping
// recordstore.ErrNotFound. On error nothing is left open, and nothing is
// created on disk unless the options allow creating the file (then SQLite
// may have created it empty before the failure).
func OpenFile(ctx context.Context, path string, o FileOptions) (*sql.DB, error) {
	if path == "" || strings.IndexByte(path, 0) >= 0 {
		return nil, recordstore.Invalidf("open %q: not a file path", path)
	}
	if o.MustExist || o.ReadOnly || o.Immutable {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, notFound("open %s: no such file", path)
		} else if err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}
	db, err := sql.Open("sqlite", FileURI(path, o.params()))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) && (o.MustExist || o.ReadOnly || o.Immutable) {
			return nil, notFound("open %s: no such file", path)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}
