// GET /api/v1/batches/{batch}: the outcome of a batch spooled to the store,
// at once or after waiting for it.

package recordresults

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/spool"
)

// MaxBatchWait bounds the wait parameter of GET /api/v1/batches/{batch}.
const MaxBatchWait = time.Minute

// PendingBatch says that a batch waits in the spool, not applied yet: the
// body of a 202 answer of GET /api/v1/batches/{batch}, and what query
// append --no-wait prints.
type PendingBatch struct {
	Batch   string `json:"batch"`
	Pending bool   `json:"pending"` // always true
}

// batch answers with the ledger's result of the batch the path names (a
// batch id or a batch name): 200 and the result — also for a failed batch,
// whose result says why —, 202 and {"batch","pending":true} while it waits
// in the spool (after waiting up to the wait parameter, a Go duration of
// at most MaxBatchWait, or until HandlerOptions.Done is closed; default:
// no wait), 404 (not_found) when neither the
// ledger nor the spool holds it, 400 (invalid) for a bad batch or wait.
func (h *handler) batch(w http.ResponseWriter, r *http.Request) {
	id, err := spool.IDOf(r.PathValue("batch"))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	var wait time.Duration
	if q := r.URL.Query().Get("wait"); q != "" {
		if wait, err = time.ParseDuration(q); err != nil || wait < 0 || wait > MaxBatchWait {
			writeError(w, r, h.log, recordstore.Errorf(recordstore.ErrInvalid, "wait %q: want a duration from 0 to %s, like 5s", q, MaxBatchWait))
			return
		}
	}
	var res recordstore.BatchResult
	if wait == 0 {
		res, err = h.opts.Batches.Outcome(r.Context(), id)
	} else {
		ctx, stop := h.doneContext(r.Context()) // a shutdown answers 202 at once
		ctx, cancel := context.WithTimeout(ctx, wait)
		res, err = h.opts.Batches.Await(ctx, id)
		cancel()
		stop()
	}
	if errors.Is(err, owner.ErrPending) {
		writeJSON(w, http.StatusAccepted, PendingBatch{Batch: id, Pending: true})
		return
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
