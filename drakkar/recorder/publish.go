// Publishing a sealed recorder file into its cluster's history folder
// (spec "Sealing and the history folder"): the meta file first, then the
// database by rename, or by a durable copy when the rename crosses file
// systems.

package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/internal/errcode"
	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// ErrDestinationExists is returned by Publish when the history folder
// already holds a different file under the sealed file's name. Nothing is
// overwritten and the source stays in place.
var ErrDestinationExists = errcode.Sentinel("exists", "recorder: another file has the destination name")

// Mover moves sealed recorder files into a history folder. Its zero value
// works on the real file system. A Mover has no state of its own: it is
// safe for concurrent use on different files.
type Mover struct {
	// FS is the seam every creation, rename, removal and fsync goes
	// through (and the read of the source for a cross-filesystem copy:
	// the File OpenFile returns for O_RDONLY must be an io.Reader). Nil
	// means fsutil.OS{}.
	FS fsutil.FS
	// Log receives one debug line per published file. Nil discards.
	Log *slog.Logger
	// NewHex names the .incoming copy of a cross-filesystem move. Nil
	// means dbfiles.NewHex16.
	NewHex func() string
}

// Published says where a sealed file went.
type Published struct {
	// Dest is the file's path in the history folder.
	Dest string
	// CrossedFS is true when the rename failed with EXDEV and the file was
	// copied.
	CrossedFS bool
	// SizeBytes is the file's size.
	SizeBytes int64
}

func (m *Mover) fs() fsutil.FS {
	if m.FS == nil {
		return fsutil.OS{}
	}
	return m.FS
}

func (m *Mover) log() *slog.Logger {
	if m.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return m.Log
}

func (m *Mover) hex() string {
	if m.NewHex == nil {
		return dbfiles.NewHex16()
	}
	return m.NewHex()
}

// Publish moves the sealed file src into historyDir under its own name,
// in these steps:
//
//  1. encode meta (a bad meta is dbfiles.ErrBadMeta: nothing changed);
//  2. create historyDir with mode 0700 (parents too), durably;
//  3. if historyDir already holds the name: with the same bytes, src was
//     published before and only its removal is left (the meta file is
//     written again and src removed); with other bytes,
//     ErrDestinationExists;
//  4. write <name>.db.meta.json (canonical, 0600) durably;
//  5. rename src into historyDir and fsync both folders;
//  6. on EXDEV only: copy src to .<name>.<16 hex>.incoming in historyDir
//     (0600), fsync it, rename it to the final name, fsync historyDir,
//     then remove src and fsync its folder.
//
// What is on disk when it returns an error: src stays in place, except
// after a failed fsync at the end of step 5 or 6 (wrapped in
// fsutil.ErrSync: the file is in historyDir, its move may not survive a
// crash) or a failed removal of src after step 6 (the file is in
// historyDir and src is still there; the next Publish of src finds the
// same bytes and finishes). historyDir may hold a meta file without its
// database (step 4 done, step 5 or 6 failed: a later Publish rewrites it;
// the archive sweep deletes an old one) and, only if removing it failed
// too, a stray .incoming file (the sweep deletes it). The name in
// historyDir is checked before the rename, not by it: Publish relies on
// being the only writer of its worker's names.
func (m *Mover) Publish(ctx context.Context, src, historyDir string, meta dbfiles.Meta) (Published, error) {
	metaBytes, err := dbfiles.EncodeMeta(meta)
	if err != nil {
		return Published{}, fmt.Errorf("publish %s: %w", src, err)
	}
	fi, err := os.Stat(src)
	if err != nil {
		return Published{}, fmt.Errorf("publish: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return Published{}, recordstore.Invalidf("publish %s: not a regular file", src)
	}
	name := filepath.Base(src)
	dest := filepath.Join(historyDir, name)
	pub := Published{Dest: dest, SizeBytes: fi.Size()}
	h := &fsutil.Helper{FS: m.fs()}
	if err := h.MkdirAll(historyDir); err != nil {
		return Published{}, fmt.Errorf("publish %s: %w", name, err)
	}
	done, err := sameFile(src, dest)
	if err != nil {
		return Published{}, fmt.Errorf("publish %s: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return Published{}, err
	}
	if err := h.WriteFile(filepath.Join(historyDir, dbfiles.MetaFileName(name)), metaBytes, fsutil.FileMode); err != nil {
		return Published{}, fmt.Errorf("publish %s: meta file: %w", name, err)
	}
	if done {
		return pub, m.removeSource(h, src)
	}
	if err := ctx.Err(); err != nil {
		return Published{}, err
	}
	err = h.Rename(src, dest)
	if errors.Is(err, syscall.EXDEV) {
		pub.CrossedFS = true
		err = m.copyAcross(ctx, h, src, dest)
	}
	if err != nil {
		return Published{}, fmt.Errorf("publish %s: %w", name, err)
	}
	m.log().Debug("recorder_file_published", "db_path", src, "destination", dest,
		"crossed_filesystems", pub.CrossedFS, "size_bytes", pub.SizeBytes)
	return pub, nil
}

// copyAcross is step 6 of Publish: a durable copy through a dot-prefixed
// work file, renamed to dest, then the source's removal.
func (m *Mover) copyAcross(ctx context.Context, h *fsutil.Helper, src, dest string) error {
	tmp := filepath.Join(filepath.Dir(dest), dbfiles.IncomingName(filepath.Base(src), m.hex()))
	in, err := m.fs().OpenFile(src, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("open source: %w", err)
	}
	defer func() { _ = in.Close() }()
	r, ok := in.(io.Reader)
	if !ok {
		return fmt.Errorf("open source: %T is not a reader", in)
	}
	// 1 MiB reads and writes: io.Copy's 32 KiB took about three thousand
	// system calls each way for a 100 MB file. (Starting the writeback
	// every 256 KiB as the copy goes, as CreateFiles does, made the copy
	// with 1 MiB writes two to three times slower on a loaded machine, and
	// gained nothing clear with smaller ones: left out.)
	err = h.CreateFile(tmp, fsutil.FileMode, func(w io.Writer) error {
		_, err := io.CopyBuffer(w, ctxReader{ctx: ctx, r: r}, make([]byte, copyBuffer))
		return err
	})
	if err != nil {
		return fmt.Errorf("copy across file systems: %w", err)
	}
	if err := h.Rename(tmp, dest); err != nil {
		if !errors.Is(err, fsutil.ErrSync) {
			_ = m.fs().Remove(tmp)
		}
		return err
	}
	return m.removeSource(h, src)
}

// copyBuffer is the size of the reads and writes of a cross-filesystem
// copy.
const copyBuffer = 1 << 20

// removeSource deletes the published source and fsyncs its folder.
func (m *Mover) removeSource(h *fsutil.Helper, src string) error {
	if err := m.fs().Remove(src); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove source: %w", err)
	}
	return h.SyncDir(filepath.Dir(src))
}

// sameFile reports whether dest exists with exactly src's bytes. A dest
// that exists and differs (or is not a regular file) is
// ErrDestinationExists; a missing dest is (false, nil).
func sameFile(src, dest string) (bool, error) {
	di, err := os.Lstat(dest)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	si, err := os.Stat(src)
	if err != nil {
		return false, err
	}
	if !di.Mode().IsRegular() || di.Size() != si.Size() {
		return false, recordstore.Errorf(ErrDestinationExists, "%s", dest)
	}
	eq, err := sameBytes(src, dest)
	if err != nil {
		return false, err
	}
	if !eq {
		return false, recordstore.Errorf(ErrDestinationExists, "%s", dest)
	}
	return true, nil
}

// sameBytes compares two files of equal size block by block.
func sameBytes(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer func() { _ = fa.Close() }()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer func() { _ = fb.Close() }()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea == io.EOF || ea == io.ErrUnexpectedEOF {
			return eb == ea, nil
		}
		if ea != nil {
			return false, ea
		}
		if eb != nil {
			return false, eb
		}
	}
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
