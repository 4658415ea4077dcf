// Restore with proof: a store's file rebuilt from its replica into a
// staging file beside the live file, proven (the replica's history has no
// hole before the point asked for, every replica file passes its
// checksum, the copy passes integrity_check and the engine's own checks),
// and only then renamed over the live file, under the store's lock.

package replica

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// RestoreOptions say where a restore reads from, to what point, and
// whether it may replace a store.
type RestoreOptions struct {
	// From is the replica address (see NewClient). Required.
	From string
	// LiveFile is the live file to restore; default
	// sqlite.LivePath(store). A fleet's stores are their own live file.
	LiveFile string
	// TXID restores the store as it was after the replica's transaction
	// TXID; 0 means the newest. At most one of TXID and At.
	TXID uint64
	// At restores the store as it was at that time (the newest
	// transaction replicated before it); the zero time means the newest.
	At time.Time
	// Force lets a restore replace a store that has a live file (only
	// while no process owns it). Without it such a store is ErrExists.
	Force bool
	// LockHeld says the caller holds the store's lock (P.lock) itself:
	// the owner taking the store over restores it this way (CatchUp)
	// after it took the lock and the lease, before it writes. Restore
	// then takes no lock, and does not check for an owner.
	LockHeld bool
	// Check, when set, is one more check of the staged copy (its path) after
	// the engine's; an error refuses the restore with ErrCheckFailed. The
	// fleet checks the store's identity row with it.
	Check func(ctx context.Context, staged string) error
	// Logger receives one line per restore; default: discard.
	Logger *slog.Logger
}

// RestoreResult says what a restore did.
type RestoreResult struct {
	// LiveFile is the live file written.
	LiveFile string `json:"liveFile"`
	// TXID is the replica transaction the store was restored to.
	TXID uint64 `json:"txid"`
	// Files is the number of replica files read; Bytes the size of the
	// restored file.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// Replaced says a live file was there and was replaced (Force).
	Replaced bool `json:"replaced"`
	// Report is what the engine's checks found in the restored file.
	Report sqlite.FileReport `json:"report"`
}

// Restore rebuilds the store configured at path store from the replica
// opts.From. It checks the store first: a live file there without
// opts.Force is ErrExists, and a store another process owns (holds
// P.lock) is ErrInUse; the lock is then held until Restore returns, so no
// owner starts meanwhile. It lists the replica's history and refuses a
// hole before the point asked for (ErrGap); a point the replica does not
// reach, or an empty replica, is recordstore.ErrNotFound. It builds the
// file into a staging file (0600) beside the live file, fsyncs it, and
// proves it: a replica file failing its checksum is ErrChecksum, a copy
// failing integrity_check, the engine's checks (sqlite.CheckFile) or
// opts.Check is ErrCheckFailed. Only then is the staging file renamed over
// the live file (the live file's -wal and -shm, which belong to the
// replaced file, are removed first, and so is the replicator's working
// folder, MetaDir) and the folder fsynced. Last, the replicator's position
// is recorded beside the file: the replica's level-0 file of the restored
// transaction, when the replica still has one, downloaded beside the live
// file before the swap (an error reading it fails the restore, changing
// nothing), is moved into MetaDir — where the replicator of the next owner
// (and CatchUp) read the file's position from; failing that move is only
// logged. Once the swap has begun, nothing reads the replica or waits on
// ctx.
//
// On any error the store's files are as they were and the staging file is
// removed; the replica is only read, never changed. An error after the
// -wal was removed (the rename failed) leaves the old live file without
// its last unreplicated commits; the same restore again finishes.
func Restore(ctx context.Context, store string, opts RestoreOptions) (RestoreResult, error) {
	var res RestoreResult
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	abs, live, err := storeFiles(store, opts.LiveFile)
	if err != nil {
		return res, err
	}
	res.LiveFile = live
	if opts.TXID != 0 && !opts.At.IsZero() {
		return res, recordstore.Invalidf("restore to a txid or to a time, not both")
	}
	client, err := NewClient(opts.From)
	if err != nil {
		return res, err
	}
	had, err := exists(live)
	if err != nil {
		return res, err
	}
	if had && !opts.Force {
		return res, errorf(ErrExists, "store %s has a live file %s (restore over it with force, once no process owns it)", store, live)
	}
	if !opts.LockHeld {
		paths := owner.PathsFor(abs)
		release, err := owner.Exclusive(paths.Lock, paths.State)
		if errors.Is(err, owner.ErrLocked) {
			return res, errorf(ErrInUse, "store %s: %w", store, err)
		}
		if err != nil {
			return res, fmt.Errorf("lock store %s: %w", store, err)
		}
		defer func() { _ = release() }()
	}
	// Another restore may have finished while this one waited for nothing
	// (the lock is taken without waiting), but a store created between the
	// check and the lock must not be replaced without Force either.
	if had, err = exists(live); err != nil {
		return res, err
	}
	if had && !opts.Force {
		return res, errorf(ErrExists, "store %s has a live file %s", store, live)
	}
	target := target{txid: ltx.TXID(opts.TXID), at: opts.At}
	plan, err := proveHistory(ctx, client, target)
	if err != nil {
		return res, err
	}
	dir := filepath.Dir(live)
	if err := fsutil.MkdirAll(dir); err != nil {
		return res, err
	}
	staged := filepath.Join(dir, "."+filepath.Base(live)+".restore-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(stageSeq.Add(1), 10))
	defer os.Remove(staged) // a no-op once renamed
	rep, size, err := buildChecked(ctx, client, plan, staged)
	if err != nil {
		return res, err
	}
	// The restored file's position is downloaded now, while failing is
	// still harmless, so that recording it after the swap is a local
	// rename that no ended context or unreachable replica can stop half
	// way: a restored file without its position would be refused by the
	// next owner's CatchUp.
	pos, err := stagePosition(ctx, client, live, plan[len(plan)-1].MaxTXID)
	if err != nil {
		return res, fmt.Errorf("read the replication position of transaction %d: %w", plan[len(plan)-1].MaxTXID, err)
	}
	defer pos.discard()
	if opts.Check != nil {
		if err := opts.Check(ctx, staged); err != nil {
			return res, errorf(ErrCheckFailed, "restored copy of %s: %w", store, err)
		}
	}
	// The replicator's working files describe the replaced file: they
	// go first, so that a crash from here on leaves no position that is
	// not the file's (CatchUp then refuses rather than guesses).
	if err := os.RemoveAll(MetaDir(live)); err != nil {
		return res, fmt.Errorf("remove %s: %w", MetaDir(live), err)
	}
	if had {
		for _, p := range []string{live + "-wal", live + "-shm", live + "-journal"} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return res, fmt.Errorf("remove %s: %w", p, err)
			}
		}
	}
	if err := fsutil.Rename(staged, live); err != nil {
		return res, err
	}
	res.TXID = uint64(plan[len(plan)-1].MaxTXID)
	if err := pos.record(live); err != nil {
		// The file is restored; without a position the next owner's
		// CatchUp refuses to guess (ErrDiverged) and a restore again
		// fixes it.
		log.Warn("restored store: its replication position was not recorded", "store", store, "err", err)
	}
	res.Files, res.Bytes, res.Replaced, res.Report = len(plan), size, had, rep
	log.Info("restored store", "store", store, "from", Redact(opts.From), "txid", res.TXID,
		"files", res.Files, "bytes", res.Bytes, "replaced", had)
	return res, nil
}

var stageSeq atomic.Uint64

// storeFiles checks a store path and returns it absolute with its live
// file.
func storeFiles(store, liveFile string) (abs, live string, err error) {
	if err := sqlite.CheckFiles(store); err != nil {
		return "", "", err
	}
	if abs, err = filepath.Abs(store); err != nil {
		return "", "", fmt.Errorf("store path %s: %w", store, err)
	}
	live = sqlite.LivePath(abs)
	if liveFile != "" {
		if live, err = filepath.Abs(liveFile); err != nil {
			return "", "", fmt.Errorf("live file %s: %w", liveFile, err)
		}
	}
	return abs, live, nil
}

func exists(p string) (bool, error) {
	_, err := os.Lstat(p)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("stat %s: %w", p, err)
}

// target is the point a restore asks for: a txid, a time, or the newest
// (both zero).
type target struct {
	txid ltx.TXID
	at   time.Time
}

func (t target) String() string {
	switch {
	case t.txid != 0:
		return "txid " + strconv.FormatUint(uint64(t.txid), 10)
	case !t.at.IsZero():
		return "time " + t.at.UTC().Format(time.RFC3339Nano)
	}
	return "the newest transaction"
}

// reaches reports whether a replica file belongs to the history up to t:
// it starts at or before t's txid and was written before t's time.
func (t target) reaches(f *ltx.FileInfo) bool {
	if t.txid != 0 && f.MinTXID > t.txid {
		return false
	}
	return t.at.IsZero() || f.CreatedAt.Before(t.at)
}

// proveHistory lists every file of the replica, refuses a hole in the
// history up to t (ErrGap), and returns the files a restore to t reads,
// in order.
func proveHistory(ctx context.Context, client litestream.ReplicaClient, t target) ([]*ltx.FileInfo, error) {
	var all []*ltx.FileInfo
	for level := 0; level <= litestream.SnapshotLevel; level++ {
		files, err := litestream.FindLTXFiles(ctx, client, level, !t.at.IsZero(), everyFile)
		if err != nil {
			return nil, fmt.Errorf("list the replica's level %d: %w", level, err)
		}
		all = append(all, files...)
	}
	if len(all) == 0 {
		return nil, recordstore.Errorf(recordstore.ErrNotFound, "the replica holds no transaction")
	}
	if from, to, ok := findGap(all, t); ok {
		return nil, errorf(ErrGap, "no file of the replica holds transactions %d to %d, before %s", from, to, t)
	}
	plan, err := litestream.CalcRestorePlan(ctx, client, t.txid, t.at, slog.New(slog.DiscardHandler))
	if errors.Is(err, litestream.ErrTxNotAvailable) {
		return nil, recordstore.Errorf(recordstore.ErrNotFound, "the replica cannot restore %s (it holds transactions up to %d)", t, maxTXID(all))
	}
	if err != nil {
		return nil, fmt.Errorf("plan the restore: %w", err)
	}
	if len(plan) == 0 || plan[0].MinTXID != 1 {
		return nil, errorf(ErrGap, "the replica's history does not start at transaction 1")
	}
	for i := 1; i < len(plan); i++ {
		if !ltx.IsContiguous(plan[i-1].MaxTXID, plan[i].MinTXID, plan[i].MaxTXID) {
			return nil, errorf(ErrGap, "no file of the replica holds transactions %d to %d", plan[i-1].MaxTXID+1, plan[i].MinTXID-1)
		}
	}
	return plan, nil
}

func maxTXID(all []*ltx.FileInfo) ltx.TXID {
	var m ltx.TXID
	for _, f := range all {
		m = max(m, f.MaxTXID)
	}
	return m
}

// findGap looks for a hole in the history up to t: starting from the
// newest snapshot (a file of litestream.SnapshotLevel) that t reaches, or
// from nothing, the files of the other levels that t reaches must cover
// every transaction without a hole. It returns the first missing range.
// Files t does not reach (later than t) are not part of the history
// asked for, whatever they hold.
func findGap(all []*ltx.FileInfo, t target) (from, to ltx.TXID, found bool) {
	var covered ltx.TXID
	var rest []*ltx.FileInfo
	for _, f := range all {
		if f.Level == litestream.SnapshotLevel {
			if t.reaches(f) && (t.txid == 0 || f.MaxTXID <= t.txid) {
				covered = max(covered, f.MaxTXID)
			}
			continue
		}
		rest = append(rest, f)
	}
	sort.Slice(rest, func(i, j int) bool {
		if rest[i].MinTXID != rest[j].MinTXID {
			return rest[i].MinTXID < rest[j].MinTXID
		}
		return rest[i].MaxTXID > rest[j].MaxTXID
	})
	for _, f := range rest {
		if t.txid != 0 && covered >= t.txid {
			break
		}
		if f.MaxTXID <= covered || !t.reaches(f) {
			continue
		}
		if f.MinTXID > covered+1 {
			return covered + 1, f.MinTXID - 1, true
		}
		covered = f.MaxTXID
	}
	return 0, 0, false
}

// buildChecked builds the file of plan at staged (0600, created new) and
// proves it with sqlite.CheckFile. On error staged is removed.
func buildChecked(ctx context.Context, client litestream.ReplicaClient, plan []*ltx.FileInfo, staged string) (sqlite.FileReport, int64, error) {
	var rep sqlite.FileReport
	f, err := os.OpenFile(staged, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fsutil.FileMode)
	if err != nil {
		return rep, 0, fmt.Errorf("create %s: %w", staged, err)
	}
	err = build(ctx, client, plan, f)
	if err == nil {
		if serr := f.Sync(); serr != nil {
			err = fmt.Errorf("%w: %s: %w", fsutil.ErrSync, staged, serr)
		}
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", staged, cerr)
	}
	if err != nil {
		_ = os.Remove(staged)
		return rep, 0, err
	}
	rep, err = sqlite.CheckFile(ctx, staged)
	if err != nil {
		_ = os.Remove(staged)
		if ctx.Err() != nil {
			return rep, 0, ctx.Err()
		}
		return rep, 0, errorf(ErrCheckFailed, "restored copy: %w", err)
	}
	fi, err := os.Stat(staged)
	if err != nil {
		_ = os.Remove(staged)
		return rep, 0, err
	}
	return rep, fi.Size(), nil
}

// ioError marks an error of reading the replica or writing the staging
// file, which says nothing about the replica's content.
type ioError struct{ err error }

func (e *ioError) Error() string { return e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }

type taggedReader struct{ r io.Reader }

func (t taggedReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		err = &ioError{err}
	}
	return n, err
}

type taggedWriter struct{ w io.Writer }

func (t taggedWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil {
		err = &ioError{err}
	}
	return n, err
}

// build merges the replica files of plan, in order, into one snapshot
// and writes its pages to w (a plan of one file is decoded to w
// directly). Every file's checksum (a CRC-64 of its
// bytes), and the database's checksum after the last file when the files
// track one, are verified on the way by the LTX decoders: a file that
// fails, or does not decode, is ErrChecksum; an error reading the replica
// or writing w is returned as it is.
func build(ctx context.Context, client litestream.ReplicaClient, plan []*ltx.FileInfo, w io.Writer) (err error) {
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	rdrs := make([]io.Reader, 0, len(plan))
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			_ = c.Close()
		}
	}()
	for _, info := range plan {
		rc, err := client.OpenLTXFile(inner, info.Level, info.MinTXID, info.MaxTXID, 0, 0)
		if err != nil {
			return fmt.Errorf("open replica file %s (level %d): %w", ltx.FormatFilename(info.MinTXID, info.MaxTXID), info.Level, err)
		}
		closers = append(closers, rc)
		rdrs = append(rdrs, bufio.NewReaderSize(taggedReader{rc}, 256<<10))
	}
	bw := bufio.NewWriterSize(taggedWriter{w}, 1<<20)
	if len(rdrs) == 1 {
		// One file (a snapshot, or a history that never compacted) is
		// decoded straight to w: the compactor would re-encode it (LZ4
		// and a CRC-64 again) only for the decoder to undo that. The
		// decoder verifies the file's checksum, and the database's when
		// the file tracks one, as it does the compactor's output.
		err = ltx.NewDecoder(rdrs[0]).DecodeDatabaseTo(bw)
		if err == nil {
			err = bw.Flush()
		}
		if err != nil {
			return classify(ctx, plan, err)
		}
		return nil
	}
	last, replay, err := ltx.PeekHeader(rdrs[len(rdrs)-1])
	if err != nil {
		return classify(ctx, plan, fmt.Errorf("read the header of the last file: %w", err))
	}
	rdrs[len(rdrs)-1] = replay
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ltx.NewCompactor(pw, rdrs)
		if err != nil {
			_ = pw.CloseWithError(err)
			return
		}
		if last.NoChecksum() {
			c.HeaderFlags = ltx.HeaderFlagNoChecksum
		}
		_ = pw.CloseWithError(c.Compact(inner))
	}()
	err = ltx.NewDecoder(pr).DecodeDatabaseTo(bw)
	if err == nil {
		err = bw.Flush()
	}
	_ = pr.CloseWithError(errors.New("restore ended"))
	cancel()
	<-done
	if err != nil {
		return classify(ctx, plan, err)
	}
	return nil
}

// classify turns an error of build into ErrChecksum unless it came from
// I/O or the context.
func classify(ctx context.Context, plan []*ltx.FileInfo, err error) error {
	var ioe *ioError
	switch {
	case errors.As(err, &ioe):
		return fmt.Errorf("restore: %w", ioe.err)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return errorf(ErrChecksum, "%d replica file(s) from transaction %d to %d: %w", len(plan), plan[0].MinTXID, plan[len(plan)-1].MaxTXID, err)
}

// everyFile is the filter of litestream.FindLTXFiles that keeps every file.
func everyFile(*ltx.FileInfo) (bool, error) { return true, nil }
