// The console's own JSON routes: configuration, the owner's status, a
// kind's schema, the spool's failed batches and their retry.

package console

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// Config is the body of GET /console/api/config.
type Config struct {
	// AllowWrites is Options.AllowWrites: the page shows retry buttons.
	AllowWrites bool `json:"allowWrites"`
	// Spool is whether the spool page has a spool to show.
	Spool bool `json:"spool"`
}

func (h *handler) config(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, Config{AllowWrites: h.opts.AllowWrites, Spool: h.opts.Spool != nil})
}

// Owner is the body of GET /console/api/owner: the owner's status as the
// serving process reads it, with the heartbeat's age measured by the
// server (the browser's clock may differ).
type Owner struct {
	Role           string `json:"role"`
	Phase          string `json:"phase"`
	Epoch          int64  `json:"epoch"`
	PID            int    `json:"pid"`
	Host           string `json:"host"`
	Build          string `json:"build"`
	HeartbeatAt    string `json:"heartbeatAt"`
	HeartbeatAgeMS int64  `json:"heartbeatAgeMs"`
	Stale          bool   `json:"stale"`
	SocketAlive    bool   `json:"socketAlive"`
	Backlog        int    `json:"backlog"`
	Failed         int    `json:"failed"`
	Refused        int    `json:"refused"`
	LastError      string `json:"lastError"`
	Hint           string `json:"hint,omitempty"`
}

func (h *handler) owner(w http.ResponseWriter, r *http.Request) {
	if h.opts.Status == nil {
		h.fail(w, r, recordstore.Errorf(recordstore.ErrNotFound, "this process cannot read the owner's status"))
		return
	}
	st, err := h.opts.Status(r.Context())
	if err != nil {
		h.fail(w, r, fmt.Errorf("read owner status: %w", err))
		return
	}
	out := Owner{
		Role: string(st.Role), Phase: string(st.Phase), Epoch: st.Epoch, PID: st.PID, Host: st.Host, Build: st.Build,
		HeartbeatAgeMS: st.HeartbeatAgeMS, Stale: st.Stale, SocketAlive: st.SocketAlive,
		Backlog: st.Backlog, Failed: st.Failed, Refused: st.Refused, LastError: st.LastError, Hint: st.Hint,
	}
	if !st.HeartbeatAt.IsZero() {
		out.HeartbeatAt = recordstore.FormatDatetime(st.HeartbeatAt)
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *handler) kind(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("kind")
	if err := recordstore.ValidateKindName(name); err != nil {
		h.fail(w, r, err)
		return
	}
	if h.opts.Backend == nil {
		h.fail(w, r, recordstore.Errorf(recordstore.ErrNotFound, "kind %q: this console has no store", name))
		return
	}
	k, err := h.opts.Backend.Kind(r.Context(), name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, k)
}

// Spool is the body of GET /console/api/spool.
type Spool struct {
	// Backlog is the number of batches in incoming/.
	Backlog int `json:"backlog"`
	// Failed are the batches of failed/, oldest first.
	Failed []FailedBatch `json:"failed"`
	// AllowWrites is whether the retry route is open.
	AllowWrites bool `json:"allowWrites"`
}

// FailedBatch is one batch of failed/.
type FailedBatch struct {
	Batch    string `json:"batch"`
	Producer string `json:"producer"`
	Created  string `json:"created"`
	// Failure is its error.json; nil when it has none (Problem says why).
	Failure *spool.Failure `json:"failure"`
	Problem string         `json:"problem,omitempty"`
}

// maxFailedListed bounds the failed batches one answer lists: the page is
// for reading, query spool ls lists them all.
const maxFailedListed = 500

func (h *handler) spool(w http.ResponseWriter, r *http.Request) {
	d := h.opts.Spool
	if d == nil {
		h.fail(w, r, ErrNoSpool)
		return
	}
	incoming, err := d.List(r.Context(), spool.StateIncoming)
	if err != nil {
		h.fail(w, r, fmt.Errorf("list the spool's incoming batches: %w", err))
		return
	}
	failed, err := d.List(r.Context(), spool.StateFailed)
	if err != nil {
		h.fail(w, r, fmt.Errorf("list the spool's failed batches: %w", err))
		return
	}
	out := Spool{Backlog: len(incoming), Failed: []FailedBatch{}, AllowWrites: h.opts.AllowWrites}
	for i, b := range failed {
		if i == maxFailedListed {
			break
		}
		fb := FailedBatch{Batch: b.String(), Producer: b.Instance, Created: recordstore.FormatDatetime(b.Created)}
		f, err := d.ReadFailure(r.Context(), fb.Batch)
		if err != nil {
			fb.Problem = recordstore.Message(err)
		} else {
			fb.Failure = f
		}
		out.Failed = append(out.Failed, fb)
	}
	writeJSON(w, http.StatusOK, out)
}

// Retried is the body of a successful retry.
type Retried struct {
	Batch   string `json:"batch"`
	Retried bool   `json:"retried"`
}

// retry moves a failed batch back to incoming/. On disk when it fails: see
// spool.Dir.Retry (nothing moves when it is refused).
func (h *handler) retry(w http.ResponseWriter, r *http.Request) {
	if err := h.checkWrite(r); err != nil {
		h.fail(w, r, err)
		return
	}
	d := h.opts.Spool
	if d == nil {
		h.fail(w, r, ErrNoSpool)
		return
	}
	name := r.PathValue("batch")
	if _, err := spool.ParseBatchName(name); err != nil {
		h.fail(w, r, err)
		return
	}
	err := d.Retry(r.Context(), name)
	switch {
	case errors.Is(err, fs.ErrExist):
		err = recordstore.Errorf(recordstore.ErrInvalid, "%w (incoming/ already holds a batch of that name)", err)
	case errors.Is(err, fs.ErrNotExist):
		err = recordstore.Errorf(recordstore.ErrNotFound, "spool batch %s (not in failed/)", name)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("console retried a failed batch", "batch", name, "at", time.Now().UTC().Format(time.RFC3339Nano))
	writeJSON(w, http.StatusOK, Retried{Batch: name, Retried: true})
}

// checkWrite refuses a write when writes are off, and a write that does
// not come from the console's own page: without its header, or with an
// Origin other than the request's own host.
func (h *handler) checkWrite(r *http.Request) error {
	if !h.opts.AllowWrites {
		return ErrWritesDisabled
	}
	if r.Header.Get(writeHeader) != "1" {
		return ErrCrossOrigin
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return ErrCrossOrigin
		}
	}
	return nil
}
