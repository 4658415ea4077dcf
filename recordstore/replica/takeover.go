// Taking a store over from another host: before the new owner writes, with
// its lock and lease held, the local file is brought to the replica's
// newest state (CatchUp), or the takeover is refused when the local file
// holds what the replica does not.

package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"

	"github.com/fb46ecde/records/recordstore/fsutil"
)

var (
	// ErrLocalAhead is returned by CatchUp when the local file holds
	// transactions the replica does not (its replicator recorded them but
	// never shipped them) and the replica's newest transaction cannot be
	// proven to be the local file's: taking the store over from the
	// replica would lose them, and shipping them could fork the replica's
	// history (code "local_ahead"). Nothing is changed. Ship them (open the store where it was owned, with the
	// replica reachable) or, to drop them, restore by hand with force.
	ErrLocalAhead = sentinel("local_ahead", "the local file is ahead of the replica")
	// ErrDiverged is returned by CatchUp when the local file's position
	// cannot be proven to be part of the replica's history: the local
	// file has no replication position (it was never replicated from
	// here), or the replica's transaction at that position differs from
	// the local one (another host wrote from an older state), or the
	// replica no longer has a file ending there (code "diverged").
	// Nothing is changed; restore by hand with force to take the
	// replica's state.
	ErrDiverged = sentinel("diverged", "the local file and the replica diverged")
)

// MetaDir is the replicator's working folder beside the live file live:
// ".<name>-litestream", where the LTX files of the commits it shipped are
// kept. The highest transaction of its level 0 is the file's replication
// position.
func MetaDir(live string) string {
	return filepath.Join(filepath.Dir(live), "."+filepath.Base(live)+"-litestream")
}

// levelDir is the folder of MetaDir's LTX files of one level.
func levelDir(live string, level int) string {
	return filepath.Join(MetaDir(live), "ltx", fmt.Sprint(level))
}

// CatchUpOptions configure CatchUp.
type CatchUpOptions struct {
	// From is the replica address (see NewClient). Required.
	From string
	// LiveFile is the live file; default sqlite.LivePath(store).
	LiveFile string
	// Check is RestoreOptions.Check for the restore CatchUp may run.
	Check func(ctx context.Context, staged string) error
	// Logger receives a line per decision; default: discard.
	Logger *slog.Logger
	// NoLease says the caller holds neither the store's lock nor its
	// lease (a process that waits as a non-owner while another host owns
	// the store): only a missing live file is restored, taking the
	// store's lock for the time of the restore, as a copy to read; an
	// existing file is left as it is, and a store another process owns
	// or that has a live file by then is left to it. The catch-up under
	// the lease decides again.
	NoLease bool
}

// CatchUpResult says what CatchUp found and did.
type CatchUpResult struct {
	// LocalTXID is the local file's replication position (0: none, or
	// no file); ReplicaTXID the replica's newest transaction (0: empty).
	LocalTXID   uint64 `json:"localTxid"`
	ReplicaTXID uint64 `json:"replicaTxid"`
	// Restored says the local file was replaced by (or, when missing,
	// created from) the replica's newest state; Restore is that restore.
	Restored bool          `json:"restored"`
	Restore  RestoreResult `json:"restore,omitzero"`
}

// CatchUp brings the local file of store to the replica's newest state
// before this process writes it as its new owner. The caller holds the
// store's lock and its lease across hosts (owner.Options.Fence), so that
// no other host writes the replica meanwhile.
//
// The local file's position is the highest transaction of its
// replicator's level-0 LTX files (MetaDir; Restore records it too); the
// replica's is its highest transaction. Then:
//
//   - no local file: the replica's newest state is restored (an empty
//     replica leaves no file: the store starts empty);
//   - an empty replica: the local file is kept (this host seeds it);
//   - a local file without a position: ErrDiverged;
//   - local ahead of the replica: the local file is kept when the
//     replica's newest level-0 file is the local one of that
//     transaction, byte for byte (the replica is a prefix of the local
//     file: its replicator ships the rest — the same host's owner died
//     before shipping); else ErrLocalAhead;
//   - otherwise the replica's level-0 file ending at the local position
//     must be the local one, byte for byte (their file checksums match),
//     else ErrDiverged — another host's transaction there, or a replica
//     that compacted that file away; then an equal position keeps the
//     local file, and a replica ahead replaces it by a restore with
//     proof (see Restore, with Force and LockHeld).
//
// Commits of the local file its replicator never read (WAL frames
// written after its last cycle, by an owner that died or was fenced) are
// not part of its position: they were never shipped, so never
// acknowledged as replicated, and a replica ahead replaces them.
//
// On error nothing was changed, but for a failed restore's own cases
// (see Restore).
func CatchUp(ctx context.Context, store string, opts CatchUpOptions) (CatchUpResult, error) {
	var res CatchUpResult
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	_, live, err := storeFiles(store, opts.LiveFile)
	if err != nil {
		return res, err
	}
	client, err := NewClient(opts.From)
	if err != nil {
		return res, err
	}
	all, err := replicaFiles(ctx, client)
	if err != nil {
		return res, err
	}
	remote := maxTXID(all)
	res.ReplicaTXID = uint64(remote)
	had, err := exists(live)
	if err != nil {
		return res, err
	}
	if opts.NoLease {
		if had || remote == 0 {
			return res, nil
		}
		rr, err := Restore(ctx, store, RestoreOptions{From: opts.From, LiveFile: opts.LiveFile, Check: opts.Check, Logger: opts.Logger})
		if errors.Is(err, ErrExists) || errors.Is(err, ErrInUse) {
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("restore a copy of store %s from its replica: %w", store, err)
		}
		res.Restored, res.Restore = true, rr
		return res, nil
	}
	restore := func(why string) (CatchUpResult, error) {
		log.Info("taking over: restoring the replica's newest state", "store", store, "why", why,
			"local_txid", res.LocalTXID, "replica_txid", res.ReplicaTXID)
		rr, err := Restore(ctx, store, RestoreOptions{From: opts.From, LiveFile: opts.LiveFile, Force: true, LockHeld: true,
			Check: opts.Check, Logger: opts.Logger})
		if err != nil {
			return res, fmt.Errorf("take store %s over from its replica: %w", store, err)
		}
		res.Restored, res.Restore = true, rr
		return res, nil
	}
	if !had {
		if remote == 0 {
			return res, nil
		}
		return restore("no local file")
	}
	local, err := localPos(live)
	if err != nil {
		return res, err
	}
	res.LocalTXID = uint64(local.txid)
	switch {
	case remote == 0:
		return res, nil
	case local.txid == 0:
		return res, errorf(ErrDiverged, "store %s: the local file %s has no replication position and the replica holds transactions up to %d (restore it by hand with force to take the replica's state)", store, live, remote)
	case local.txid > remote:
		// Keep the local file only when the replica's newest transaction
		// is the local file's own: the replica is then a prefix of it, and
		// its replicator ships the rest.
		at, ok, err := localAt(live, remote)
		if err != nil {
			return res, err
		}
		if ok {
			if ok, err = sameAt(ctx, client, all, at); err != nil {
				return res, err
			}
		}
		if !ok {
			return res, errorf(ErrLocalAhead, "store %s: the local file holds transactions up to %d, the replica only up to %d, and its transaction %d cannot be proven to be the local one", store, local.txid, remote, remote)
		}
		log.Info("taking over: the local file continues the replica's history; its replicator ships the rest", "store", store,
			"local_txid", res.LocalTXID, "replica_txid", res.ReplicaTXID)
		return res, nil
	}
	same, err := sameAt(ctx, client, all, local)
	if err != nil {
		return res, err
	}
	if !same {
		return res, errorf(ErrDiverged, "store %s: the replica's transaction %d is not the local file's, or the replica no longer has it apart (restore it by hand with force to take the replica's state)", store, local.txid)
	}
	if local.txid == remote {
		log.Info("taking over: the local file is the replica's newest state", "store", store, "txid", res.LocalTXID)
		return res, nil
	}
	return restore("the replica is ahead")
}

// replicaFiles lists the LTX files of every level of the replica.
func replicaFiles(ctx context.Context, client litestream.ReplicaClient) ([]*ltx.FileInfo, error) {
	var all []*ltx.FileInfo
	for level := 0; level <= litestream.SnapshotLevel; level++ {
		files, err := litestream.FindLTXFiles(ctx, client, level, false, everyFile)
		if err != nil {
			return nil, fmt.Errorf("list the replica's level %d: %w", level, err)
		}
		all = append(all, files...)
	}
	return all, nil
}

// NewestTXID returns the newest transaction of the replica at from (see
// NewClient): 0 when the replica holds none (empty, or never written). It
// only lists the replica's files; it reads and writes nothing else.
func NewestTXID(ctx context.Context, from string) (uint64, error) {
	client, err := NewClient(from)
	if err != nil {
		return 0, err
	}
	all, err := replicaFiles(ctx, client)
	if err != nil {
		return 0, err
	}
	return uint64(maxTXID(all)), nil
}

// localLTX is the local file's newest level-0 LTX file: its last
// transaction (the file's replication position, 0 when there is none)
// and its checksum.
type localLTX struct {
	txid ltx.TXID
	sum  ltx.Checksum
}

// localPos reads the replication position of the live file live from the
// highest level-0 LTX file of its replicator.
func localPos(live string) (localLTX, error) {
	return localFile(live, func(hi, top ltx.TXID) bool { return hi > top })
}

// localAt reads the replicator's level-0 LTX file of live that ends at
// txid, if it still has one.
func localAt(live string, txid ltx.TXID) (localLTX, bool, error) {
	l, err := localFile(live, func(hi, _ ltx.TXID) bool { return hi == txid })
	return l, l.txid == txid && txid != 0, err
}

// localFile reads the level-0 LTX file of live's replicator that pick
// chooses (called with each file's last transaction and the one chosen so
// far); none is the zero value.
func localFile(live string, pick func(hi, top ltx.TXID) bool) (localLTX, error) {
	dir := levelDir(live, 0)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return localLTX{}, nil
	}
	if err != nil {
		return localLTX{}, fmt.Errorf("read %s: %w", dir, err)
	}
	var best string
	var top ltx.TXID
	for _, e := range ents {
		_, hi, err := ltx.ParseFilename(e.Name())
		if err != nil || !pick(hi, top) {
			continue
		}
		best, top = e.Name(), hi
	}
	if best == "" {
		return localLTX{}, nil
	}
	f, err := os.Open(filepath.Join(dir, best))
	if err != nil {
		return localLTX{}, err
	}
	defer f.Close()
	sum, err := fileSum(f, filepath.Join(dir, best))
	return localLTX{txid: top, sum: sum}, err
}

// fileSum verifies one LTX file and returns its file checksum (a CRC-64
// of its bytes, which every LTX file carries, whether or not it tracks
// the database's checksum).
func fileSum(r io.Reader, name string) (ltx.Checksum, error) {
	dec := ltx.NewDecoder(r)
	if err := dec.Verify(); err != nil {
		return 0, errorf(ErrChecksum, "%s: %w", name, err)
	}
	return dec.Trailer().FileChecksum, nil
}

// sameAt reports whether the replica's level 0 holds the local file's
// newest LTX file itself: a file ending at the same transaction with the
// same bytes (the replicator ships its level-0 files as they are, and
// Restore copies the replica's). Another host's transaction there, or no
// level-0 file ending there any more, is not the same.
func sameAt(ctx context.Context, client litestream.ReplicaClient, all []*ltx.FileInfo, local localLTX) (bool, error) {
	for _, f := range all {
		if f.Level != 0 || f.MaxTXID != local.txid {
			continue
		}
		rc, err := client.OpenLTXFile(ctx, f.Level, f.MinTXID, f.MaxTXID, 0, 0)
		if err != nil {
			return false, fmt.Errorf("open replica file %s: %w", ltx.FormatFilename(f.MinTXID, f.MaxTXID), err)
		}
		got, err := fileSum(rc, ltx.FormatFilename(f.MinTXID, f.MaxTXID))
		_ = rc.Close()
		if err != nil {
			return false, err
		}
		return got == local.sum, nil
	}
	return false, nil
}

// stagedPosition is the replica's level-0 file of a restored
// transaction, downloaded beside the live file before the restore swaps
// it in (see stagePosition); the zero value records nothing.
type stagedPosition struct {
	path string // the staging file; "" for none
	name string // its name in MetaDir's level 0
}

// stagePosition downloads the replica's level-0 file ending at txid into
// a staging file (0600, fsynced) beside live, for record to move into
// MetaDir once the restored file is live. A replica without such a file
// (compacted away) stages nothing; on error nothing is left behind.
func stagePosition(ctx context.Context, client litestream.ReplicaClient, live string, txid ltx.TXID) (stagedPosition, error) {
	files, err := litestream.FindLTXFiles(ctx, client, 0, false, func(f *ltx.FileInfo) (bool, error) {
		return f.MaxTXID == txid, nil
	})
	if err != nil || len(files) == 0 {
		return stagedPosition{}, err
	}
	f := files[len(files)-1]
	rc, err := client.OpenLTXFile(ctx, 0, f.MinTXID, f.MaxTXID, 0, 0)
	if err != nil {
		return stagedPosition{}, err
	}
	defer rc.Close()
	tmp := filepath.Join(filepath.Dir(live), "."+filepath.Base(live)+".position-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(stageSeq.Add(1), 10))
	if err := fsutil.Default.CreateFile(tmp, fsutil.FileMode, func(w io.Writer) error { _, err := io.Copy(w, rc); return err }); err != nil {
		return stagedPosition{}, err
	}
	return stagedPosition{path: tmp, name: ltx.FormatFilename(f.MinTXID, f.MaxTXID)}, nil
}

// record moves the staged file into MetaDir of live as the replicator
// keeps its own, recording the restored file's position; with nothing
// staged it records nothing. It reads nothing from the replica.
func (p stagedPosition) record(live string) error {
	if p.path == "" {
		return nil
	}
	dir := levelDir(live, 0)
	if err := fsutil.MkdirAll(dir); err != nil {
		return err
	}
	return fsutil.Rename(p.path, filepath.Join(dir, p.name))
}

// discard removes a staging file record did not move (a no-op once it
// did).
func (p stagedPosition) discard() {
	if p.path != "" {
		_ = os.Remove(p.path)
	}
}

// CatchUpFunc returns the catch-up of the store at store replicated at
// from, as records.Options.CatchUp takes it: CatchUp with LiveFile live,
// and NoLease when leased is unset.
func CatchUpFunc(store, from string, logger *slog.Logger) func(ctx context.Context, live string, leased bool) error {
	return func(ctx context.Context, live string, leased bool) error {
		_, err := CatchUp(ctx, store, CatchUpOptions{From: from, LiveFile: live, Logger: logger, NoLease: !leased})
		return err
	}
}
