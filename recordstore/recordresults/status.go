// Status: the owner of a store as `query status` and GET /api/v1/status
// print it — the state file's fields, whether the socket answered, and
// whether the owner looks stale.

package recordresults

import (
	"encoding/json"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
)

// Status is the printed form of an owner.Status. Times are in the stored
// datetime form (UTC, microseconds). When no process owns the store
// (phase "none") it prints as {"phase":"none"} alone (with "corrupt" when
// set).
type Status struct {
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
	// SocketAlive is true when the owner answered over its socket.
	SocketAlive bool `json:"socketAlive"`
	// Stale is true when the heartbeat is older than three intervals, or
	// the state says ready but the owner's pid is gone.
	Stale bool `json:"stale"`
	// Corrupt, when not empty, is the damage the serving process met in
	// the live file (code corrupt); absent otherwise.
	Corrupt string `json:"corrupt,omitempty"`
}

// NewStatus returns the printed form of st.
func NewStatus(st owner.Status) Status {
	return Status{
		Instance: st.Instance, PID: st.PID, Host: st.Host, Build: st.Build,
		Phase: st.Phase, Epoch: st.Epoch,
		StartedAt: datetime(st.StartedAt), HeartbeatAt: datetime(st.HeartbeatAt),
		Store: st.Store, CatalogVersion: st.CatalogVersion, Socket: st.Socket, Spool: st.Spool,
		Backlog: st.Backlog, Failed: st.Failed, Refused: st.Refused, LastError: st.LastError,
		SocketAlive: st.SocketAlive, Stale: st.Stale,
	}
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
	type fields Status // without this method
	return json.Marshal(fields(s))
}

func datetime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return recordstore.FormatDatetime(t)
}
