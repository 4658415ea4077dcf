// GET /api/v1/streams/{stream}/follow: a stream's rows as NDJSON or
// Server-Sent Events, written and flushed as they arrive, until the stream
// is sealed, deleted, or passes `to`; and Reader.Follow, the same in Go.

package recordresults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/fb46ecde/records/recordstore"
)

// ContentTypeSSE is the content type of a follow as Server-Sent Events.
const ContentTypeSSE = "text/event-stream"

// errFollowEnd stops a follow that has sent what it was asked for (limit
// rows, or the row at `to`).
var errFollowEnd = errors.New("follow ended")

// follower is a checked follow: the query, and its plan once the stream's
// kind is known (only a follow with filters needs one).
type follower struct {
	r     *Reader
	q     Query
	needs bool // the query filters rows: a plan is needed
	p     *plan
}

// prepareFollow checks q for a follow: Sort and Cursor are refused
// (ErrInvalid: a follow goes in seq order); filters are checked against the
// kind now when the stream exists, else at its first row.
func (r *Reader) prepareFollow(ctx context.Context, q Query) (*follower, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	if q.Sort != "" && q.Sort != "_seq" || q.Cursor != "" || q.PageSize != 0 {
		return nil, recordstore.Invalidf("a follow goes in seq order, unpaged: sort, cursor and page_size do not apply")
	}
	f := &follower{r: r, q: q, needs: q.Text != "" || len(q.Where) > 0 || !q.From.IsZero() || !q.Until.IsZero()}
	if f.needs {
		p, err := r.plan(ctx, f.planQuery())
		if err != nil && !errors.Is(err, recordstore.ErrNotFound) {
			return nil, err
		}
		f.p = p
	}
	return f, nil
}

// planQuery is the query a follow's plan checks: its filters.
func (f *follower) planQuery() Query {
	q := f.q
	q.Limit = 0
	return q
}

// followEnd says why a follow ended without an error: the reason an SSE
// follow sends in its end event, and the seq a client that reconnects
// resumes after.
type followEnd struct {
	// reason is "sealed" (the generation is sealed and every row was
	// read), "gone" (the stream was deleted or expired), "to" (the row at
	// `to` was sent or passed), "limit" (Limit rows were sent), or ""
	// when ctx ended (the client left, or the server shuts down: a client
	// may come back).
	reason string
	// seq is the last seq the follow read (sent or not), q.To after a
	// "to" end, the generation's last seq after "sealed".
	seq int64
}

// run calls fn with each row the follow selects, as they arrive, until the
// stream's generation is sealed and read, or gone, or `to` is passed, or
// Limit rows were sent, or ctx ends (nil in each case, and why in the
// followEnd), or fn fails.
func (f *follower) run(ctx context.Context, fn func(recordstore.Record) error) (followEnd, error) {
	var sent int
	end := followEnd{seq: f.q.After}
	var gen int64 // the generation found at the start; 0 when none
	if m, err := f.r.b.Meta(ctx, f.q.Stream); err == nil {
		gen = m.Generation
	}
	err := recordstore.Tail(ctx, f.r.b, f.q.Stream, f.q.After, func(rec recordstore.Record) error {
		if f.q.To > 0 && rec.Seq > f.q.To {
			end = followEnd{reason: "to", seq: f.q.To}
			return errFollowEnd
		}
		end.seq = rec.Seq
		if f.needs && f.p == nil {
			p, err := f.r.plan(ctx, f.planQuery())
			if err != nil {
				return err
			}
			f.p = p
		}
		if f.p == nil || f.p.rq.Match(rec) {
			if err := fn(rec); err != nil {
				return err
			}
			if sent++; f.q.Limit > 0 && sent >= f.q.Limit {
				end.reason = "limit"
				return errFollowEnd
			}
		}
		if f.q.To > 0 && rec.Seq >= f.q.To {
			end.reason = "to"
			return errFollowEnd
		}
		return nil
	})
	if ctx.Err() != nil {
		return followEnd{}, nil
	}
	if errors.Is(err, errFollowEnd) {
		return end, nil
	}
	if err != nil {
		return followEnd{}, err
	}
	return f.endOfGeneration(ctx, gen, end.seq), nil
}

// endOfGeneration tells why Tail returned nil: the generation gen (0: the
// one created after the follow began) is sealed and read, or it is gone.
func (f *follower) endOfGeneration(ctx context.Context, gen, last int64) followEnd {
	m, err := f.r.b.Meta(ctx, f.q.Stream)
	if err == nil && m.Sealed && (gen == 0 || m.Generation == gen) {
		return followEnd{reason: "sealed", seq: max(last, m.HighSeq)}
	}
	return followEnd{reason: "gone", seq: last}
}

// Follow calls fn with every row of q's stream with seq > q.After that q's
// filters select (q.Text, q.Where, q.From/q.Until), then with each such
// row as it is appended, in seq order. It returns nil when the stream's
// generation is sealed and fully read, when it is deleted or expires, once
// the follow passed q.To, after q.Limit rows, or when ctx ends; fn's error
// if fn fails. A stream that does not exist yet is waited for (its filters
// are checked against its kind at its first row). Sort, Cursor and
// PageSize are ErrInvalid.
func (r *Reader) Follow(ctx context.Context, q Query, fn func(recordstore.Record) error) error {
	f, err := r.prepareFollow(ctx, q)
	if err != nil {
		return err
	}
	_, err = f.run(ctx, fn)
	return err
}

// follow answers GET /api/v1/streams/{stream}/follow?<query>: NDJSON, or
// Server-Sent Events when the client accepts text/event-stream (or asks
// format=sse): one event per row, its id the row's seq, so that a client
// reconnecting with Last-Event-ID resumes after it (the header wins over
// after). An SSE follow that ends for good — sealed, gone, `to` or limit
// reached — ends with an "end" event (see writeEndEvent); one with nothing
// left to send before it starts (resuming at `to`, or at the last seq of a
// sealed stream) is answered 204, which makes an EventSource stop instead
// of reconnecting. Bad parameters, an invalid stream id and filters that
// do not fit an existing stream's kind get a JSON error response; once the
// status is sent, a failure aborts the response (see abort): the client
// sees it truncated. A HEAD request gets the headers a GET starts with, at
// once.
func (h *handler) follow(w http.ResponseWriter, r *http.Request) {
	stream := r.PathValue("stream")
	if err := recordstore.ValidateStreamID(stream); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	v := r.URL.Query()
	sse := v.Get("format") == "sse" || strings.Contains(r.Header.Get("Accept"), ContentTypeSSE)
	if f := v.Get("format"); f != "" && f != "sse" && f != string(FormatNDJSON) {
		writeError(w, r, h.log, recordstore.Invalidf("format=%s: a follow is ndjson or sse", recordstore.Quote(f)))
		return
	}
	q, err := ParseQuery(stream, v)
	if err == nil && sse {
		err = lastEventID(r, &q)
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ctx, cancel := h.doneContext(r.Context())
	defer cancel()
	// A client resuming after `to` (Last-Event-ID) has had every event.
	ended := q.To > 0 && q.After >= q.To
	if sse && !ended {
		if ended, err = h.sealedPast(ctx, q); err != nil {
			writeError(w, r, h.log, err)
			return
		}
	}
	if sse && ended {
		w.WriteHeader(http.StatusNoContent) // an EventSource does not reconnect
		return
	}
	var f *follower
	if r.Method != http.MethodHead && !ended {
		if f, err = h.rd.prepareFollow(ctx, q); err != nil {
			writeError(w, r, h.log, err)
			return
		}
	}
	if sse {
		w.Header().Set("Content-Type", ContentTypeSSE)
		w.Header().Set("Cache-Control", "no-cache")
	} else {
		w.Header().Set("Content-Type", ContentTypeNDJSON)
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead || ended {
		return // the headers a GET would start with, and no wait for rows
	}
	rc := http.NewResponseController(w)
	_ = rc.Flush() // the client learns at once that the follow started
	send := followWriter(w, sse)
	end, err := f.run(ctx, func(rec recordstore.Record) error {
		if err := send(rec); err != nil {
			return fmt.Errorf("write row %d: %w", rec.Seq, err)
		}
		if err := rc.Flush(); err != nil {
			return fmt.Errorf("flush row %d: %w", rec.Seq, err)
		}
		return nil
	})
	if err == nil && sse && end.reason != "" {
		if err = writeEndEvent(w, end); err == nil {
			err = rc.Flush()
		}
	}
	if err != nil && ctx.Err() == nil {
		h.abort(r, "follow", stream, err)
	}
}

// sealedPast reports whether q's stream is sealed with no row after
// q.After: a follow of it has nothing to send. A stream that does not
// exist is not (a follow waits for it).
func (h *handler) sealedPast(ctx context.Context, q Query) (bool, error) {
	m, err := h.b.Meta(ctx, q.Stream)
	if errors.Is(err, recordstore.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return m.Sealed && q.After >= m.HighSeq, nil
}

// endEvent is the data of the "end" event.
type endEvent struct {
	Reason string `json:"reason"`
	Seq    int64  `json:"seq"`
}

// writeEndEvent writes the last event of an SSE follow that ended for
// good: "id: SEQ", "event: end" and "data: {"reason":R,"seq":SEQ}", R
// being sealed, gone, to or limit and SEQ the last seq the follow read, so
// that a client that reconnects anyway (Last-Event-ID: SEQ) is answered
// 204 after a sealed stream or `to`.
func writeEndEvent(w http.ResponseWriter, end followEnd) error {
	b, err := json.Marshal(endEvent{Reason: end.reason, Seq: end.seq})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "id: %d\nevent: end\ndata: %s\n\n", end.seq, b)
	return err
}

// lastEventID makes an SSE follow resume after the Last-Event-ID header's
// seq, when the header is set.
func lastEventID(r *http.Request, q *Query) error {
	id := r.Header.Get("Last-Event-ID")
	if id == "" {
		return nil
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < 0 {
		return recordstore.Invalidf("Last-Event-ID %s: want the seq of the last event received", recordstore.Quote(id))
	}
	q.After = n
	return nil
}

// followWriter returns the function writing one row of a follow: a line
// of NDJSON, or an SSE event "id: SEQ" + "data: <row JSON>".
func followWriter(w http.ResponseWriter, sse bool) func(recordstore.Record) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if !sse {
		return func(rec recordstore.Record) error { return enc.Encode(rec) }
	}
	return func(rec recordstore.Record) error {
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "id: %d\ndata: %s\n\n", rec.Seq, b)
		return err
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
