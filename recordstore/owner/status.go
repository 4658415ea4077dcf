// Status: what a process can learn about a store's owner from the outside —
// the state file, a status call over the socket, heartbeat age and pid
// liveness.

package owner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/fb46ecde/records/recordstore/spool"
)

// Role is a process's role for one store.
type Role string

// The roles.
const (
	// RoleOwner holds the lock and writes the live file.
	RoleOwner Role = "owner"
	// RoleNonOwner reads the live file and writes through the spool.
	RoleNonOwner Role = "non-owner"
	// RoleDetached writes through the spool but cannot read: the owner
	// runs another catalog version (see Options.OpenDetached). It never
	// becomes the owner.
	RoleDetached Role = "detached"
	// RoleReadOnly reads the live file and writes nothing (Options.ReadOnly).
	RoleReadOnly Role = "read-only"
	// RoleDeferred reads the live file and has not taken part in the
	// election yet (Options.DeferElection): its first write elects it
	// owner or non-owner.
	RoleDeferred Role = "deferred"
	// RoleClosed is the role after Close.
	RoleClosed Role = "closed"
)

// DefaultHeartbeat is how often an owner refreshes heartbeatAt.
const DefaultHeartbeat = 5 * time.Second

// Status is the state file's fields plus what the reader observed. The
// owner itself fills Role, Backlog, Failed and LastError live.
type Status struct {
	State
	// Role is the answering process's role (set by the owner's status
	// action; empty when read from the state file alone).
	Role Role `json:"role,omitempty"`
	// SocketAlive is true when the socket answered a status call.
	SocketAlive bool `json:"socketAlive"`
	// Stale is true when the heartbeat is older than three intervals, or
	// the state says ready but its pid is gone (same host only).
	Stale bool `json:"stale"`
	// HeartbeatAgeMS is the heartbeat's age when the status was taken.
	HeartbeatAgeMS int64 `json:"heartbeatAgeMs"`
	// Hint says what to do about a status of PhaseUnknown.
	Hint string `json:"hint,omitempty"`
	// Replica is where the owner's replication stands: set by an owner
	// that runs a replica (Options.Replica), nil otherwise.
	Replica *ReplicaStatus `json:"replica,omitempty"`
	// Wake says how followers learn of the owner's commits: WakePush or
	// WakePolling. In the owner's answer, WakePush (it pushes commit
	// notices); in a non-owner's Store.Status, whether that process is
	// subscribed to them right now; read from the state file alone (the
	// socket dead), WakePolling.
	Wake string `json:"wake,omitempty"`
	// Subscribers is, in the owner's answer, how many processes are
	// subscribed to its commit notices.
	Subscribers int64 `json:"subscribers,omitempty"`
	// Notices is, in a non-owner's Store.Status, how many commit notices
	// this process has taken from its subscriptions since it opened (one
	// notice may stand for several commits), each already handed to its
	// backend (see ActionSubscribe).
	Notices uint64 `json:"notices,omitempty"`
	// Lease is the owner's lease on the store (Options.Fence): set by an
	// owner that holds one, nil otherwise. Its generation is the fencing
	// epoch across hosts; Epoch stays the live file's own writer epoch.
	Lease *FenceStatus `json:"lease,omitempty"`
}

// BadStateHint is the Hint of a status whose state file cannot be read.
const BadStateHint = "the state file is not a valid owner state; the next process to own the store replaces it (run any command that opens the store, e.g. query kind list)"

// ReadStatus reports on the owner of the store configured at path: phase
// PhaseNone when there is no state file, PhaseUnknown (with Hint and
// Backlog) when it cannot be decoded; otherwise the state, refreshed by a
// status call over the socket when it answers, with Stale computed from
// the heartbeat (interval heartbeat, DefaultHeartbeat when 0) and pid.
// Backlog is always counted afresh: by the owner that answers, else from
// incoming/ directly (the state file's is as old as its heartbeat).
// It writes nothing and creates no folder.
func ReadStatus(ctx context.Context, path string, heartbeat time.Duration) (Status, error) {
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeat
	}
	st, err := ReadState(PathsFor(path).State)
	switch {
	case errors.Is(err, ErrNoState):
		return Status{State: State{Phase: PhaseNone}}, nil
	case errors.Is(err, ErrBadState):
		return Status{State: State{Phase: PhaseUnknown, Backlog: countIncoming(path)}, Hint: BadStateHint}, nil
	case err != nil:
		return Status{}, err
	}
	out := Status{State: st}
	if st.Socket != "" {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := Call(cctx, st.Socket, Request{Action: ActionStatus})
		cancel()
		if err == nil && resp.Status != nil && resp.Status.Instance == st.Instance {
			out = *resp.Status
			out.SocketAlive = true
		}
	}
	if !out.SocketAlive {
		out.Backlog = countIncoming(path)
		out.Wake = WakePolling
	}
	out.HeartbeatAgeMS = time.Since(out.HeartbeatAt).Milliseconds()
	out.Stale = time.Since(out.HeartbeatAt) > 3*heartbeat ||
		(out.Phase == PhaseReady && sameHost(out.Host) && !pidAlive(out.PID))
	return out, nil
}

// ReadSpool asks the owner of the store configured at path for its spool
// listing over its socket (which incoming batches it has applied, in
// particular). ok is false, with no error, when no owner answers: there is
// no state file or its socket is dead.
func ReadSpool(ctx context.Context, path string) (l SpoolListing, ok bool, err error) {
	st, err := ReadState(PathsFor(path).State)
	if errors.Is(err, ErrNoState) {
		return l, false, nil
	}
	if err != nil {
		return l, false, err
	}
	if st.Socket == "" {
		return l, false, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := Call(cctx, st.Socket, Request{Action: ActionSpool})
	if err != nil || resp.Spool == nil {
		return l, false, nil
	}
	return *resp.Spool, true, nil
}

// countIncoming counts the batches in the incoming/ folder of the store's
// spool at path, without opening (or creating) the spool; 0 when it cannot
// be read.
func countIncoming(path string) int {
	ents, err := os.ReadDir(filepath.Join(spool.PathFor(path), string(spool.StateIncoming)))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if _, err := spool.ParseBatchName(e.Name()); err == nil {
			n++
		}
	}
	return n
}

func sameHost(host string) bool {
	h, err := os.Hostname()
	return err == nil && h == host
}
