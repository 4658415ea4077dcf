// The reference model's stream operations: reads, seal/reopen, expire,
// trim, delete, the retention sweep and Close.

package recordstoretest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// Scan returns the rows of the stream's current generation after opts.After.
func (m *model) Scan(ctx context.Context, stream string, opts recordstore.ScanOptions) ([]recordstore.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(ctx); err != nil {
		return nil, err
	}
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return nil, err
	}
	if opts.After < 0 || opts.Limit < 0 {
		return nil, recordstore.Invalidf("scan %s: after %d, limit %d: want both >= 0", stream, opts.After, opts.Limit)
	}
	s := m.liveLocked(stream)
	if s == nil {
		return nil, recordstore.Errorf(recordstore.ErrNotFound, "stream %s", stream)
	}
	k := m.mu.kinds[s.kind]
	out := []recordstore.Record{}
	for _, r := range s.rows {
		if r.seq <= opts.After {
			continue
		}
		if opts.Limit > 0 && len(out) == opts.Limit {
			break
		}
		out = append(out, recordstore.Record{Seq: r.seq, Values: k.Decode(r.vals)})
	}
	return out, nil
}

// Meta describes a live stream.
func (m *model) Meta(ctx context.Context, stream string) (recordstore.Meta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.streamLocked(ctx, stream)
	if err != nil {
		return recordstore.Meta{}, err
	}
	return s.meta(), nil
}

// Streams lists live streams by id, of one kind when kind is not "".
func (m *model) Streams(ctx context.Context, kind string) ([]recordstore.Meta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(ctx); err != nil {
		return nil, err
	}
	if kind != "" {
		if err := recordstore.ValidateKindName(kind); err != nil {
			return nil, err
		}
		if _, ok := m.mu.kinds[kind]; !ok {
			return nil, recordstore.Errorf(recordstore.ErrNotFound, "kind %s", kind)
		}
	}
	ids := make([]string, 0, len(m.mu.streams))
	for id := range m.mu.streams {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := []recordstore.Meta{}
	for _, id := range ids {
		if s := m.liveLocked(id); s != nil && (kind == "" || s.kind == kind) {
			out = append(out, s.meta())
		}
	}
	return out, nil
}

// Seal makes the stream refuse appends; sealing a sealed stream changes
// nothing.
func (m *model) Seal(ctx context.Context, stream string) (recordstore.Meta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.streamLocked(ctx, stream)
	if err != nil {
		return recordstore.Meta{}, err
	}
	if !s.sealed {
		s.sealed = true
		m.touchLocked(s)
	}
	return s.meta(), nil
}

// Reopen unseals the stream when generation is its current one.
func (m *model) Reopen(ctx context.Context, stream string, generation int64) (recordstore.Meta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.streamLocked(ctx, stream)
	if err != nil {
		return recordstore.Meta{}, err
	}
	if s.gen != generation {
		return recordstore.Meta{}, fmt.Errorf("%w: stream %s generation %d (current %d)",
			recordstore.ErrNotFound, stream, generation, s.gen)
	}
	if s.sealed {
		s.sealed = false
		m.touchLocked(s)
	}
	return s.meta(), nil
}

// Expire makes the stream expire ttl from now.
func (m *model) Expire(ctx context.Context, stream string, ttl time.Duration) (recordstore.Meta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(ctx); err != nil {
		return recordstore.Meta{}, err
	}
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return recordstore.Meta{}, err
	}
	if ttl <= 0 {
		return recordstore.Meta{}, recordstore.Invalidf("expire %s: ttl %v: want > 0", stream, ttl)
	}
	s, err := m.streamLocked(ctx, stream)
	if err != nil {
		return recordstore.Meta{}, err
	}
	exp := m.now().Add(ttl)
	s.expires = &exp
	m.touchLocked(s)
	return s.meta(), nil
}

// Trim drops the rows of appends made before the given time.
func (m *model) Trim(ctx context.Context, stream string, before time.Time) (recordstore.Meta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.streamLocked(ctx, stream)
	if err != nil {
		return recordstore.Meta{}, err
	}
	if s.dropBefore(before) > 0 {
		m.touchLocked(s)
	}
	return s.meta(), nil
}

// Delete forgets the stream's rows; its generation number is kept.
func (m *model) Delete(ctx context.Context, stream string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.streamLocked(ctx, stream); err != nil {
		return err
	}
	delete(m.mu.streams, stream)
	m.notifier.Notify(stream)
	return nil
}

// Sweep runs one retention pass: expired streams are forgotten and rows
// retention drops old appends.
func (m *model) Sweep(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(ctx); err != nil {
		return err
	}
	now := m.now()
	for id := range m.mu.streams {
		s := m.liveLocked(id)
		if s == nil {
			continue
		}
		if dropRetained(s, m.mu.kinds[s.kind], now) > 0 {
			m.touchLocked(s)
		}
	}
	return nil
}

// touchLocked records a change to s and wakes its followers.
func (m *model) touchLocked(s *modelStream) {
	s.updated = m.now()
	m.notifier.Notify(s.id)
}

// Notifier returns the model's notifier.
func (m *model) Notifier() *recordstore.Notifier { return m.notifier }

// Close makes every later call fail with ErrClosed. Closing twice is fine.
func (m *model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.closed = true
	return nil
}
