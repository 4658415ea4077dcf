// Status: what a process can learn about a store's owner from the outside —
// the state file, a status call over the socket, heartbeat age and pid
// liveness.

package owner

import (
	"context"
	"errors"
	"os"
	"time"
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
}

// ReadStatus reports on the owner of the store configured at path: phase
// PhaseNone when there is no state file; otherwise the state, refreshed by
// a status call over the socket when it answers, with Stale computed from
// the heartbeat (interval heartbeat, DefaultHeartbeat when 0) and pid.
func ReadStatus(ctx context.Context, path string, heartbeat time.Duration) (Status, error) {
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeat
	}
	st, err := ReadState(PathsFor(path).State)
	if errors.Is(err, ErrNoState) {
		return Status{State: State{Phase: PhaseNone}}, nil
	}
	if err != nil {
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

func sameHost(host string) bool {
	h, err := os.Hostname()
	return err == nil && h == host
}
