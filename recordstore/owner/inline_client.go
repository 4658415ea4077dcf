// The fast path of a non-owner's write, producer side: a small batch is
// sent over the owner's control socket (ActionAppend) and answered once the
// owner's commit of it is durable — one round trip and the owner's one
// fsync, shared with every batch of its group. The spool stays the path
// when the batch is large, when no owner answers, when the owner predates
// the action, and when the caller asks for it; the batch then goes to the
// spool under the same id, which the ledger never applies twice.

package owner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
	"github.com/fb46ecde/records/recordstore/spool"
)

// submitFast is submit for a non-owner: b is stamped (its id and its
// producer seq taken), sent inline when it encodes within
// spool.MaxInlineBytes and an owner's socket is known, and its result
// returned as the owner answers. Otherwise — the batch is large, no
// socket, the owner refuses it or cannot commit it, predates the append
// action, or the connection fails — it goes through the spool under the
// same id and seq (submitSpooled): after a request that was sent, the
// ledger is asked first, since the owner may have committed it. Either
// way it is applied once.
func (s *Store[T]) submitFast(ctx context.Context, b recordstore.Batch) (recordstore.BatchResult, error) {
	if err := s.ready(ctx); err != nil {
		return recordstore.BatchResult{}, err
	}
	s.stamp(&b)
	res, done, sent, err := s.tryInline(ctx, &b)
	if done {
		return res, err
	}
	return s.submitSpooled(ctx, b, func(ctx context.Context, b recordstore.Batch, visible func(string)) (string, error) {
		return s.publishFallback(ctx, b, sent, visible)
	})
}

// fastOrPublish is a NoWait write with WriteOptions.Fast in a non-owner:
// b is stamped and tried on the fast path (tryInline); when the owner
// answers, done is set with its result (or the ledger's). Otherwise b is
// published to the spool under the same id, the owner poked, and its id
// returned (not done), as Publish does.
func (s *Store[T]) fastOrPublish(ctx context.Context, b recordstore.Batch) (id string, res recordstore.BatchResult, done bool, err error) {
	if err := s.ready(ctx); err != nil {
		return "", res, false, err
	}
	s.stamp(&b)
	res, done, sent, err := s.tryInline(ctx, &b)
	if done {
		return b.ID, res, true, err
	}
	if id, err = s.publishFallback(ctx, b, sent, nil); err != nil {
		return "", res, false, err
	}
	s.nudge(ctx, id)
	return id, res, false, nil
}

// tryInline sends the stamped batch b over the fast path when it encodes
// within spool.MaxInlineBytes and an owner's socket is known. done is set
// when the outcome is known: the owner's answer, or — after a request that
// was sent without an answer, since the owner may have committed it — the
// ledger's record (or the ledger's error). sent says whether a request
// reached the socket.
func (s *Store[T]) tryInline(ctx context.Context, b *recordstore.Batch) (res recordstore.BatchResult, done, sent bool, err error) {
	data, err := spool.EncodeInline(ctx, b, s.spool.Limits())
	if err != nil {
		return res, false, false, nil // the spool refuses it the same way, or takes it (too large)
	}
	res, ok, sent := s.sendInline(ctx, b, data)
	if ok {
		// This process's followers of the batch's streams learn of it
		// here: the notice of a commit that held nothing else starts no
		// probe of the file (noticeFilter).
		s.backend.Notifier().Notify(batchStreams(b)...)
		return res, true, true, nil
	}
	if sent {
		if res, ok, err := s.ledger(ctx, b.ID); ok || (err != nil && !errors.As(err, new(*PendingError))) {
			return res, true, true, err
		}
	}
	return res, false, sent, nil
}

// publishFallback publishes a stamped batch the fast path did not
// deliver. Its seq is taken, and the owner may hold it: it is published
// whatever ctx says, so that the producer's seqs have no gap (the wait
// for its outcome, if any, honours ctx). When the publish fails and the
// batch was never sent, its seq is given back (unstamp).
func (s *Store[T]) publishFallback(ctx context.Context, b recordstore.Batch, sent bool, visible func(string)) (string, error) {
	id, err := s.publishStamped(context.WithoutCancel(ctx), b, visible)
	if err != nil && !sent && !errors.Is(err, fsutil.ErrSync) {
		s.unstamp(&b) // nothing of it is anywhere
	}
	return id, err
}

// stamp sets b's ID, Created and Producer, taking the next producer seq.
func (s *Store[T]) stamp(b *recordstore.Batch) {
	if !appendsOnly(b) {
		s.push.filter.forgetTakes()
	}
	s.pub.Lock()
	s.pub.seq++
	seq := s.pub.seq
	s.pub.Unlock()
	b.ID = spool.NewID()
	b.Created = time.Now().UTC()
	b.Producer = recordstore.Producer{Instance: s.id.Instance, Seq: seq, PID: s.id.Pid, Host: s.id.Host, Build: s.opts.Build}
}

// unstamp gives back b's seq after its publish failed (nothing of it is
// in incoming/), when no later seq was taken: the producer's next batch
// then has no gap before it. (A later one taken meanwhile leaves the gap;
// the owner waits GapWait for it, as for a producer that died.)
func (s *Store[T]) unstamp(b *recordstore.Batch) {
	s.pub.Lock()
	if s.pub.seq == b.Producer.Seq {
		s.pub.seq--
	}
	s.pub.Unlock()
}

// publishStamped publishes a stamped batch (see stamp) as it is, calling
// visible once it is in incoming/ (see publishNotify).
func (s *Store[T]) publishStamped(ctx context.Context, b recordstore.Batch, visible func(id string)) (string, error) {
	if err := s.ready(ctx); err != nil {
		return "", err
	}
	var notify func(spool.BatchName)
	if visible != nil {
		notify = func(n spool.BatchName) { visible(n.ID) }
	}
	s.pub.Lock()
	_, err := s.spool.PublishNotify(ctx, &b, s.opts.Format, notify)
	s.pub.Unlock()
	if err != nil {
		return "", fmt.Errorf("publish batch: %w", err)
	}
	s.opts.Failpoint(FailAfterPublish)
	return b.ID, nil
}

// sendInline sends an inline batch to the owner's socket and returns its
// result (ok) once the owner answered with it. sent says whether the
// request may have reached the owner: when it did and no result came, the
// owner may have committed the batch.
func (s *Store[T]) sendInline(ctx context.Context, b *recordstore.Batch, data []byte) (res recordstore.BatchResult, ok, sent bool) {
	id := b.ID
	sock := s.ownerSocket()
	if sock == "" || s.inlineRefused(sock) {
		return res, false, false
	}
	s.push.filter.begin()
	resp, sent, err := s.callInline(ctx, sock, Request{Action: ActionAppend, Batch: data})
	switch {
	case err == nil && len(resp.Results) == 1 && resp.Results[0].Done && resp.Results[0].Result != nil && resp.Results[0].Result.ID == id:
		out := resp.Results[0]
		s.push.filter.end(out.Epoch, out.Commit, tookStreams(b, out.Result))
		return *out.Result, true, true
	case err == nil:
		s.log.Debug("fast path: the owner's answer has no result", "batch", id)
	case resp.Error != "" && (strings.HasPrefix(resp.Error, "unknown action") || strings.HasPrefix(resp.Error, inlineOffText)):
		s.refuseInline(sock) // an owner that predates the append action, or replicates
	case resp.Error != "":
		s.log.Debug("fast path: the owner did not commit the batch", "batch", id, "error", resp.Error)
	default:
		s.log.Debug("fast path: no answer", "batch", id, "error", err)
		if ctx.Err() == nil {
			s.forgetSocket(sock)
		}
	}
	s.push.filter.end(0, 0, nil)
	return res, false, sent
}

// inlineRefused reports whether the owner at sock answered the append
// action as unknown.
func (s *Store[T]) inlineRefused(sock string) bool {
	s.sock.Lock()
	defer s.sock.Unlock()
	return s.sock.noInline == sock
}

// refuseInline remembers that the owner at sock does not know the append
// action (until another socket is read from the state file).
func (s *Store[T]) refuseInline(sock string) {
	s.sock.Lock()
	s.sock.noInline = sock
	s.sock.Unlock()
}

// callInline is Call for the append action over a kept connection (see
// connPool), with the producer's failpoint between sending the request
// and reading the answer; sent reports whether any of the request was
// written. An answer with an error is returned with it (resp.Error set).
func (s *Store[T]) callInline(ctx context.Context, path string, req Request) (resp Response, sent bool, err error) {
	return s.conns.callKept(ctx, path, req, func() { s.opts.Failpoint(FailInlineAfterSend) })
}

// tookStreams returns the streams the appends of b added rows to, with
// their kinds, as res (the owner's answer) says: none unless b committed,
// and no entry that failed.
func tookStreams(b *recordstore.Batch, res *recordstore.BatchResult) []streamKind {
	if res.Outcome != recordstore.OutcomeCommitted || res.Error != nil || len(res.Entries) != len(b.Entries) {
		return nil
	}
	var out []streamKind
	for i, e := range b.Entries {
		if e.Op == recordstore.OpAppend && res.Entries[i].Error == nil && e.Stream != "" {
			out = append(out, streamKind{e.Stream, e.Kind})
		}
	}
	return out
}

// batchStreams returns the streams b's entries name.
func batchStreams(b *recordstore.Batch) []string {
	var out []string
	for _, e := range b.Entries {
		if e.Stream != "" && !slices.Contains(out, e.Stream) {
			out = append(out, e.Stream)
		}
	}
	return out
}
