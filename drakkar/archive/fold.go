// Folding: an archive already at a window's final name is gunzipped into
// a work file and merged as one more source; the sealed files it already
// covers (its workers.source_file values) are deleted, never merged twice.

package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/klauspost/compress/gzip"
)

// unfold gunzips the archive at finalPath, if there is one, into the work
// file previous and returns the base names of the sources it covers. It
// is (nil, false, nil) when there is no archive, and an ErrCorruptArchive
// when the file cannot be decompressed or read as a merged file.
func (p *pass) unfold(ctx context.Context, finalPath, previous string) (map[string]bool, bool, error) {
	in, err := os.Open(finalPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("open archive: %w", err)
	}
	defer in.Close()
	if err := gunzip(ctx, in, previous); err != nil {
		return nil, false, recordstore.Errorf(ErrCorruptArchive, "%s: %w", finalPath, err)
	}
	covered, err := coveredSources(ctx, previous)
	if err != nil {
		return nil, false, recordstore.Errorf(ErrCorruptArchive, "%s: %w", finalPath, err)
	}
	return covered, true, nil
}

// gunzip decompresses r into a new work file dst (0600). It is not
// fsynced: it is read back at once and never published as it is.
func gunzip(ctx context.Context, r io.Reader, dst string) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fsutil.FileMode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, ctxReader{ctx, zr})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = zr.Close()
	}
	return err
}

// coveredSources switches the gunzipped archive (a private work file) to
// a rollback journal — drakkar's Python merge leaves WAL in the header —
// and reads the source_file of its workers rows.
func coveredSources(ctx context.Context, path string) (map[string]bool, error) {
	db, err := sqlite.OpenFile(ctx, path, sqlite.FileOptions{MustExist: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode=DELETE").Scan(&mode); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT DISTINCT source_file FROM workers")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out[s] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, db.Close()
}
