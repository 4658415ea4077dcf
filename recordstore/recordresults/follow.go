// GET /api/v1/streams/{stream}/follow: a stream's rows as NDJSON, written
// and flushed as they arrive, until the stream is sealed.

package recordresults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/fb46ecde/records/recordstore"
)

// errFollowLimit stops a follow once limit rows were written.
var errFollowLimit = errors.New("follow limit reached")

// follow answers GET /api/v1/streams/{stream}/follow?after=&limit=: every
// row with seq > after, then each new row as it is appended, flushed row by
// row. The response ends when the stream is sealed and fully written, when
// limit rows (0: no limit) were written, when the client goes away, or when
// HandlerOptions.Done is closed. A stream that does not exist yet is waited
// for. Bad parameters and an invalid stream id get a JSON error response;
// once the status is sent, a failure of the store aborts the response
// (see abort): the client sees it truncated. A
// HEAD request gets the headers a GET starts with, at once.
func (h *handler) follow(w http.ResponseWriter, r *http.Request) {
	stream := r.PathValue("stream")
	if err := recordstore.ValidateStreamID(stream); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	after, limit, err := pageParams(r)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	w.Header().Set("Content-Type", ContentTypeNDJSON)
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK) // the headers a GET would start with, and no wait for rows
		return
	}
	ctx, cancel := h.doneContext(r.Context())
	defer cancel()

	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush() // the client learns at once that the follow started
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	var written int64
	err = recordstore.Tail(ctx, h.b, stream, after, func(rec recordstore.Record) error {
		if err := enc.Encode(rec); err != nil {
			return fmt.Errorf("write row %d: %w", rec.Seq, err)
		}
		if err := rc.Flush(); err != nil {
			return fmt.Errorf("flush row %d: %w", rec.Seq, err)
		}
		if written++; limit > 0 && written >= limit {
			return errFollowLimit
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFollowLimit) && ctx.Err() == nil {
		h.abort("follow", stream, err)
	}
}

// doneContext is the request's context, also ended when Done is closed:
// what a follow, or a batch wait, runs under.
func (h *handler) doneContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if h.opts.Done != nil {
		go func() {
			select {
			case <-h.opts.Done:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}
