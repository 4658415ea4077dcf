// Moving batches between folders: to failed/ with error.json, back to
// incoming/ for a retry, and to trash/ after ingest.

package spool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// ErrorFile is the name of the failure record inside a failed batch folder.
const ErrorFile = "error.json"

// RetryFile is the mark Retry leaves in a batch folder it moves back to
// incoming/: the batch failed before, and the ledger's record of that
// failure is to be replaced by a new attempt (recordstore.Batch.Retry).
// Loading reports it (Folder.Retried) and otherwise ignores it;
// MoveToFailed removes it.
const RetryFile = "retry.json"

// AttemptsFile is the owner's record, in a batch folder of incoming/, of
// the internal errors it failed with so far (Attempts): it outlives the
// owner that wrote it, so that a batch failing the same way under owner
// after owner is given up all the same. Loading ignores it; MoveToFailed
// removes it.
const AttemptsFile = "attempts.json"

// Attempts is the content of incoming/<batch>/attempts.json.
type Attempts struct {
	// Format is 1.
	Format int `json:"format"`
	// Batch is the batch folder name.
	Batch string `json:"batch"`
	// Error is the text of the last error.
	Error string `json:"error"`
	// Repeats is how many tries in a row failed with Error.
	Repeats int `json:"repeats"`
	// LastAt is when the last try failed.
	LastAt time.Time `json:"lastAt"`
}

// ReadAttempts returns the attempts record (AttemptsFile) of batch name
// of incoming/; an error wrapping fs.ErrNotExist when it has none.
func (d *Dir) ReadAttempts(ctx context.Context, name string) (*Attempts, error) {
	if err := checkEntryName(name); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a, err := readAttempts(filepath.Join(d.Path(StateIncoming, name), AttemptsFile))
	if err != nil {
		return nil, fmt.Errorf("read attempts of %s: %w", name, err)
	}
	return &a, nil
}

// WriteAttempts replaces the attempts record of batch a.Batch of
// incoming/ with a (Format set to 1).
//
// On disk when it returns an error: the previous record, or none.
func (d *Dir) WriteAttempts(ctx context.Context, a Attempts) error {
	if err := checkEntryName(a.Batch); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	a.Format = 1
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(d.Path(StateIncoming, a.Batch), AttemptsFile)
	if err := d.fs.WriteFile(path, append(data, '\n'), fsutil.FileMode); err != nil {
		return fmt.Errorf("write attempts of %s: %w", a.Batch, err)
	}
	return nil
}

// readAttempts reads an attempts record, at most 1 MiB of it.
func readAttempts(path string) (Attempts, error) {
	var a Attempts
	f, err := openPlain(path)
	if err != nil {
		return a, err
	}
	defer f.Close()
	err = json.NewDecoder(&limitedReader{f, 1 << 20}).Decode(&a)
	return a, err
}

// RetryMark is the content of incoming/<batch>/retry.json.
type RetryMark struct {
	// Format is 1.
	Format int `json:"format"`
	// Batch is the batch folder name.
	Batch string `json:"batch"`
	// RetriedAt is when the batch was moved back to incoming/.
	RetriedAt time.Time `json:"retriedAt"`
	// Previous is the failure it was retried after (its error.json), when
	// the folder had a readable one.
	Previous *Failure `json:"previous,omitempty"`
}

// Failure is the content of failed/<batch>/error.json.
type Failure struct {
	// Format is 1.
	Format int `json:"format"`
	// Batch is the batch folder name.
	Batch string `json:"batch"`
	// FailedAt is when the batch was moved to failed/.
	FailedAt time.Time `json:"failedAt"`
	// Code is recordstore.Code of the error ("invalid", "capacity", ...).
	Code string `json:"code"`
	// Error is the error text.
	Error string `json:"error"`
}

// MoveToFailed moves batch name from incoming/ to failed/, recording
// reason in failed/<name>/error.json. A failed/<name> left by an earlier
// failure of the same batch is moved to trash/ first. An entry that is not
// a folder (a stray file) is moved as is, without error.json.
//
// A retry mark (RetryFile) and an attempts record (AttemptsFile) in the
// folder are removed, after error.json is written.
//
// On disk when it returns an error: the batch is still in incoming/
// (perhaps with error.json written inside, which loading ignores, and its
// retry mark and attempts record removed), or — after an fsync error (recordstore.ErrFsync) — in
// failed/ but perhaps not durably.
func (d *Dir) MoveToFailed(ctx context.Context, name string, reason error) error {
	if err := checkEntryName(name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	src := d.Path(StateIncoming, name)
	fi, err := os.Lstat(src)
	if err != nil {
		return fmt.Errorf("move batch %s to failed: %w", name, err)
	}
	if fi.IsDir() {
		if err := d.writeFailure(src, name, reason); err != nil {
			return fmt.Errorf("move batch %s to failed: %w", name, err)
		}
		for _, mark := range []string{RetryFile, AttemptsFile} {
			if err := os.Remove(filepath.Join(src, mark)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("move batch %s to failed: %w", name, err)
			}
		}
	}
	dst := d.Path(StateFailed, name)
	if err := d.clearDestination(dst, name); err != nil {
		return fmt.Errorf("move batch %s to failed: %w", name, err)
	}
	if err := d.fs.Rename(src, dst); err != nil {
		return fmt.Errorf("move batch %s to failed: %w", name, err)
	}
	d.log.Debug("spool batch failed", "batch", name, "code", recordstore.Code(reason), "error", reason)
	return nil
}

func (d *Dir) writeFailure(dir, name string, reason error) error {
	f := Failure{Format: 1, Batch: name, FailedAt: d.now().UTC(), Code: recordstore.Code(reason)}
	if reason != nil {
		f.Error = reason.Error()
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return d.fs.WriteFile(filepath.Join(dir, ErrorFile), append(data, '\n'), fsutil.FileMode)
}

// clearDestination moves an existing dst out of the way, into trash/.
func (d *Dir) clearDestination(dst, name string) error {
	ok, err := exists(dst)
	if err != nil || !ok {
		return err
	}
	return d.fs.Rename(dst, d.trashPath(name))
}

var trashSeq atomic.Int64

// trashPath returns a trash/ path for name that is not taken.
func (d *Dir) trashPath(name string) string {
	p := d.Path(StateTrash, name)
	for {
		ok, err := exists(p)
		if err != nil || !ok {
			return p
		}
		p = d.Path(StateTrash, name+"."+strconv.FormatInt(d.now().UnixNano(), 10)+"-"+strconv.FormatInt(trashSeq.Add(1), 10))
	}
}

// ReadFailure returns the error.json of failed batch name
// (fs.ErrNotExist when the batch has none, e.g. a stray file).
func (d *Dir) ReadFailure(ctx context.Context, name string) (*Failure, error) {
	if err := checkEntryName(name); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path := filepath.Join(d.Path(StateFailed, name), ErrorFile)
	if _, err := os.Lstat(path); err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			err = fs.ErrNotExist // a stray file in failed/: it has no error.json
		}
		return nil, fmt.Errorf("read failure of %s: %w", name, err)
	}
	f, err := openPlain(path)
	if err != nil {
		return nil, fmt.Errorf("read failure of %s: %w", name, err)
	}
	defer f.Close()
	var out Failure
	dec := json.NewDecoder(&limitedReader{f, 1 << 20})
	if err := dec.Decode(&out); err != nil {
		return nil, recordstore.Invalidf("read failure of %s: %v", name, err)
	}
	return &out, nil
}

type limitedReader struct {
	f *os.File
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("error.json is larger than 1 MiB")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}

// Retry moves failed batch name back to incoming/ so the owner tries it
// again. It first writes the retry mark (RetryFile, holding the failure
// read from error.json) into the folder and removes error.json: the owner
// applies a marked batch even though its ledger records the failure, and
// replaces that record with the new outcome. It fails (fs.ErrExist) when
// incoming/ already holds that name.
//
// On disk when it returns an error: the batch is still in failed/
// (perhaps with its retry mark, perhaps without its error.json), or —
// after an fsync error — in incoming/ but perhaps not durably.
func (d *Dir) Retry(ctx context.Context, name string) error {
	if err := checkEntryName(name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	src, dst := d.Path(StateFailed, name), d.Path(StateIncoming, name)
	fi, err := os.Lstat(src)
	if err != nil {
		return fmt.Errorf("retry batch %s: %w", name, err)
	}
	if ok, err := exists(dst); err != nil || ok {
		return fmt.Errorf("retry batch %s: %w", name, errors.Join(err, fs.ErrExist))
	}
	if fi.IsDir() {
		mark := RetryMark{Format: 1, Batch: name, RetriedAt: d.now().UTC()}
		if prev, err := d.ReadFailure(ctx, name); err == nil {
			mark.Previous = prev
		}
		data, err := json.MarshalIndent(mark, "", "  ")
		if err != nil {
			return fmt.Errorf("retry batch %s: %w", name, err)
		}
		if err := d.fs.WriteFile(filepath.Join(src, RetryFile), append(data, '\n'), fsutil.FileMode); err != nil {
			return fmt.Errorf("retry batch %s: %w", name, err)
		}
		if err := os.Remove(filepath.Join(src, ErrorFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("retry batch %s: %w", name, err)
		}
		if err := d.fs.SyncDir(src); err != nil {
			return fmt.Errorf("retry batch %s: %w", name, err)
		}
	}
	if err := d.fs.Rename(src, dst); err != nil {
		return fmt.Errorf("retry batch %s: %w", name, err)
	}
	return nil
}

// RetryMarked reports whether batch name of folder s holds a retry mark
// (RetryFile): it was put back by Retry after a failure. It reads nothing
// but the mark's directory entry.
func (d *Dir) RetryMarked(ctx context.Context, s State, name string) (bool, error) {
	if err := checkEntryName(name); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return retryMarked(d.Path(s, name))
}

// retryMarked reports whether the batch folder at path holds a retry mark
// that is a plain file.
func retryMarked(path string) (bool, error) {
	fi, err := os.Lstat(filepath.Join(path, RetryFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("look for the retry mark of %s: %w", filepath.Base(path), err)
	}
	return fi.Mode().IsRegular(), nil
}

// MoveToTrash moves batch name of folder s (incoming or failed) to trash/,
// where GC removes it. The owner calls it after the batch's ledger row is
// committed. When trash/ already holds that name, a numeric suffix is
// added.
//
// The move is not fsynced: it need not survive a crash. A batch whose move
// is lost reappears in s, and the ledger, which already holds it, makes
// its replay a no-op. Skipping the two folder fsyncs keeps them off the
// owner's path between one spooled append and the next.
//
// On disk when it returns an error: the batch is still in s.
func (d *Dir) MoveToTrash(ctx context.Context, s State, name string) error {
	if err := checkEntryName(name); err != nil {
		return err
	}
	if s != StateIncoming && s != StateFailed {
		return recordstore.Invalidf("spool: cannot trash from folder %q", s)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := d.fs.FS.Rename(d.Path(s, name), d.trashPath(name)); err != nil {
		return fmt.Errorf("trash batch %s: %w", name, err)
	}
	return nil
}
