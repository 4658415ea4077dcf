// The owner's state file, P.owner.json: advisory facts for other processes
// (who owns the store, where the live file and the socket are, the spool's
// formats), replaced atomically by a rename; fsynced only when it carries
// damage (see WriteState).

package owner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// Phase is the owner's lifecycle phase.
type Phase string

// The phases. PhaseNone is what status reports when no process owns the
// store; it never appears in a state file.
const (
	PhaseStarting Phase = "starting"
	PhaseReady    Phase = "ready"
	PhaseDraining Phase = "draining"
	PhaseNone     Phase = "none"
	// PhaseUnknown is what status reports when the state file cannot be
	// decoded (ErrBadState); it never appears in a state file either.
	PhaseUnknown Phase = "unknown"
)

// SpoolInfo tells producers where and how to publish.
type SpoolInfo struct {
	Dir            string   `json:"dir"`
	ManifestFormat int      `json:"manifestFormat"`
	Formats        []string `json:"formats"`
}

// State is the content of P.owner.json. It is advisory: the lock says who is
// alive; the state says how to reach them.
type State struct {
	Instance       string    `json:"instance"`
	PID            int       `json:"pid"`
	Host           string    `json:"host"`
	Build          string    `json:"build"`
	Phase          Phase     `json:"phase"`
	StartedAt      time.Time `json:"startedAt"`
	HeartbeatAt    time.Time `json:"heartbeatAt"`
	Epoch          int64     `json:"epoch"`
	Store          string    `json:"store"`
	CatalogVersion int       `json:"catalogVersion"`
	Spool          SpoolInfo `json:"spool"`
	Socket         string    `json:"socket"`
	Backlog        int       `json:"backlog"`
	Failed         int       `json:"failed"`
	// Refused counts the entries this owner refused in batches it
	// committed (a sealed stream, a conflicting schema): the batch leaves
	// for trash/ and the ledger keeps the entry's error (query spool ls
	// --refused).
	Refused   int    `json:"refused"`
	LastError string `json:"lastError,omitempty"`
	// Corrupt is the damage the owner's backend met in the live file (a
	// read or a write that found a damaged page), written at each
	// heartbeat once met; absent when none was met. A damaged file does
	// not heal: it stays until the store is reopened on a repaired or
	// restored file.
	Corrupt *Damage `json:"corrupt,omitempty"`
}

// Damage is a damaged live file as a backend reported it: its error's
// code (recordstore.Code: "corrupt") and message. It is itself an error
// with that code, so that it reads as the backend's error did.
type Damage struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error returns the message.
func (d *Damage) Error() string { return d.Message }

// ErrorCode returns the code, for recordstore.Code.
func (d *Damage) ErrorCode() string { return d.Code }

// damageable is the optional capability of a backend that remembers the
// damage its calls met (sqlite.Backend.Damage).
type damageable interface{ Damage() error }

// damageOf returns the damage backend b met, or nil when it met none or
// cannot tell.
func damageOf(b any) *Damage {
	d, ok := b.(damageable)
	if !ok {
		return nil
	}
	err := d.Damage()
	if err == nil {
		return nil
	}
	return &Damage{Code: recordstore.Code(err), Message: recordstore.Message(err)}
}

// ReadState reads a state file. It returns ErrNoState when there is none,
// and an error wrapping ErrBadState, naming the file, when it is not valid
// JSON.
func ReadState(path string) (State, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, ErrNoState
	}
	if err != nil {
		return State{}, fmt.Errorf("read state %s: %w", path, err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return State{}, fmt.Errorf("%w: decode state %s: %w", ErrBadState, path, err)
	}
	return st, nil
}

// stateFS is the file system the state file is written through (specs
// count its fsyncs).
var stateFS fsutil.FS = fsutil.OS{}

// stateSeq numbers the temp files of WriteState within this process.
var stateSeq atomic.Uint64

// WriteState replaces the state file atomically: it writes a temp file
// beside it and renames it over the state file. It fsyncs neither the file
// nor the folder, except when st carries Corrupt (then temp, fsync, rename,
// fsync folder, through fsutil), because the state file is advisory and
// describes living processes only: the lock says who is alive, and no
// process survives a power loss, which is all an fsync protects against. A
// process that dies (SIGKILL) leaves the renamed file whole in the page
// cache, as with an fsync; after a power loss the file may come back older,
// empty or missing, which readers already meet as a stale state (a dead
// pid, an old heartbeat), ErrBadState, or ErrNoState, and the next owner
// replaces it. Damage is kept durable because status reports it after the
// owner is gone (docs/multi-process.md). On error the previous state file
// is unchanged and the temp file removed, unless the error wraps
// recordstore.ErrFsync (Corrupt only), which is fatal for the owner.
func WriteState(path string, st State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	b = append(b, '\n')
	if st.Corrupt != nil {
		return (&fsutil.Helper{FS: stateFS}).WriteFile(path, b, fsutil.FileMode)
	}
	return replaceState(path, b)
}

// replaceState writes data to a temp file beside path and renames it over
// path, without fsync (see WriteState).
func replaceState(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"+
		strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(stateSeq.Add(1), 10))
	f, err := stateFS.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fsutil.FileMode)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = stateFS.Remove(tmp)
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := stateFS.Rename(tmp, path); err != nil {
		_ = stateFS.Remove(tmp)
		return fmt.Errorf("rename %s: %w", path, err)
	}
	return nil
}

// removeStateIfOurs removes the state file only when it still carries
// instance, so an owner never deletes its successor's state.
func removeStateIfOurs(path, instance string) error {
	st, err := ReadState(path)
	if err != nil {
		if errors.Is(err, ErrNoState) {
			return nil
		}
		return err
	}
	if st.Instance != instance {
		return nil
	}
	if err := stateFS.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove state: %w", err)
	}
	return nil // not fsynced: a removal lost to a power loss leaves a stale state (see WriteState)
}
