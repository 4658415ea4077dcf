// Status: the owner of a store as `query status` and GET /api/v1/status
// print it — the state file's fields, whether the socket answered, and
// whether the owner looks stale.

package recordresults

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
)

// Status is an owner.Status as it is printed: it is the owner's status,
// with the damage the serving process met beside it. Its JSON form differs
// from owner.Status's: times are in the stored datetime form (UTC,
// microseconds; "" when zero), lastError is always there, wake and
// subscribers are there when set, and role, heartbeatAgeMs and hint are
// left out. When no process owns the store
// (phase "none") it prints as {"phase":"none"} alone (with "corrupt" when
// set).
type Status struct {
	owner.Status
	// Corrupt, when not empty, is the damage met in the live file (code
	// corrupt): by the owner (owner.State.Corrupt), or by the serving
	// process; absent otherwise.
	Corrupt string
}

// NewStatus returns the printed form of st: Corrupt is the message of the
// damage the owner recorded (owner.State.Corrupt), if any.
func NewStatus(st owner.Status) Status {
	out := Status{Status: st}
	if st.State.Corrupt != nil {
		out.Corrupt = st.State.Corrupt.Message
	}
	return out
}

// printedStatus is the JSON form of a Status, field by field in the order
// it is printed. A spec checks that it prints every field of owner.State.
type printedStatus struct {
	Instance       string          `json:"instance"`
	PID            int             `json:"pid"`
	Host           string          `json:"host"`
	Build          string          `json:"build"`
	Phase          owner.Phase     `json:"phase"`
	Epoch          int64           `json:"epoch"`
	StartedAt      string          `json:"startedAt"`
	HeartbeatAt    string          `json:"heartbeatAt"`
	Store          string          `json:"store"`
	CatalogVersion int             `json:"catalogVersion"`
	Socket         string          `json:"socket"`
	Spool          owner.SpoolInfo `json:"spool"`
	Backlog        int             `json:"backlog"`
	Failed         int             `json:"failed"`
	Refused        int             `json:"refused"`
	LastError      string          `json:"lastError"`
	SocketAlive    bool            `json:"socketAlive"`
	Stale          bool            `json:"stale"`
	Wake           string          `json:"wake,omitempty"`
	Subscribers    int64           `json:"subscribers,omitempty"`
	Corrupt        string          `json:"corrupt,omitempty"`
	// Replica is the owner's replication (owner.Status.Replica), printed
	// only when the owner replicates.
	Replica *owner.ReplicaStatus `json:"replica,omitempty"`
	// Lease is the owner's lease across hosts (owner.Status.Lease),
	// printed only when the owner holds one.
	Lease *owner.FenceStatus `json:"lease,omitempty"`
}

// MarshalJSON prints {"phase":"none"} when no process owns the store (with
// "corrupt" when set), and every field otherwise.
func (s Status) MarshalJSON() ([]byte, error) {
	if s.Phase == owner.PhaseNone {
		return json.Marshal(struct {
			Phase   owner.Phase `json:"phase"`
			Corrupt string      `json:"corrupt,omitempty"`
		}{s.Phase, s.Corrupt})
	}
	st := s.State
	return json.Marshal(printedStatus{
		Instance: st.Instance, PID: st.PID, Host: st.Host, Build: st.Build,
		Phase: st.Phase, Epoch: st.Epoch,
		StartedAt: datetime(st.StartedAt), HeartbeatAt: datetime(st.HeartbeatAt),
		Store: st.Store, CatalogVersion: st.CatalogVersion, Socket: st.Socket, Spool: st.Spool,
		Backlog: st.Backlog, Failed: st.Failed, Refused: st.Refused, LastError: st.LastError,
		SocketAlive: s.SocketAlive, Stale: s.Stale, Corrupt: s.Corrupt, Wake: s.Wake, Subscribers: s.Subscribers, Replica: s.Replica,
		Lease: s.Lease,
	})
}

// UnmarshalJSON reads what MarshalJSON prints (a client of GET
// /api/v1/status). A time that is not RFC 3339 text is an error wrapping
// recordstore.ErrInvalid; an empty one is the zero time.
func (s *Status) UnmarshalJSON(data []byte) error {
	var p printedStatus
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	started, err := parseDatetime(p.StartedAt)
	if err != nil {
		return fmt.Errorf("status startedAt: %w", err)
	}
	heartbeat, err := parseDatetime(p.HeartbeatAt)
	if err != nil {
		return fmt.Errorf("status heartbeatAt: %w", err)
	}
	*s = Status{Status: owner.Status{State: owner.State{
		Instance: p.Instance, PID: p.PID, Host: p.Host, Build: p.Build,
		Phase: p.Phase, Epoch: p.Epoch, StartedAt: started, HeartbeatAt: heartbeat,
		Store: p.Store, CatalogVersion: p.CatalogVersion, Socket: p.Socket, Spool: p.Spool,
		Backlog: p.Backlog, Failed: p.Failed, Refused: p.Refused, LastError: p.LastError,
	}, SocketAlive: p.SocketAlive, Stale: p.Stale, Wake: p.Wake, Subscribers: p.Subscribers, Replica: p.Replica, Lease: p.Lease}, Corrupt: p.Corrupt}
	return nil
}

func datetime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return recordstore.FormatDatetime(t)
}

func parseDatetime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return recordstore.ParseDatetime(s)
}
