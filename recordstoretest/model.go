// The reference model: a small in-memory Backend that follows the contract
// as plainly as possible. The suite runs against it, and the randomized test
// compares every backend with it step by step.

package recordstoretest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// model implements recordstore.Backend (and Sweeper) in memory, with one
// mutex around everything. It favours being obviously right over being fast.
type model struct {
	clock    *Clock
	notifier *recordstore.Notifier

	mu struct {
		sync.Mutex
		closed      bool
		kinds       map[string]recordstore.Kind
		streams     map[string]*modelStream // may hold expired streams; live() drops them
		generations map[string]int64        // last generation of every stream id ever created
		used        map[string]int64        // bound kinds: the highest seq their table ever held
	}
}

// modelStream is one generation of a stream.
type modelStream struct {
	id, kind         string
	gen, high        int64
	sealed           bool
	created, updated time.Time
	expires          *time.Time
	rows             []modelRow // in seq order
}

// modelRow is one stored row and the time of the append that stored it.
type modelRow struct {
	seq  int64
	at   time.Time
	vals recordstore.Values
}

var (
	_ recordstore.Backend = (*model)(nil)
	_ recordstore.Sweeper = (*model)(nil)
)

// newModel returns an empty model reading time from clock.
func newModel(clock *Clock) *model {
	m := &model{clock: clock, notifier: recordstore.NewNotifier()}
	m.mu.kinds = map[string]recordstore.Kind{}
	m.mu.streams = map[string]*modelStream{}
	m.mu.generations = map[string]int64{}
	m.mu.used = map[string]int64{}
	return m
}

// now is the clock's time at the precision every backend keeps.
func (m *model) now() time.Time {
	return m.clock.Now().UTC().Truncate(time.Microsecond)
}

// beginLocked refuses work on a closed model or an ended context.
func (m *model) beginLocked(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.mu.closed {
		return fmt.Errorf("model: %w", recordstore.ErrClosed)
	}
	return nil
}

// liveLocked returns the live stream id, or nil when it does not exist or
// has expired (an expired stream is forgotten at once; its generation is
// remembered).
func (m *model) liveLocked(id string) *modelStream {
	s := m.mu.streams[id]
	if s == nil {
		return nil
	}
	if s.expires != nil && !m.now().Before(*s.expires) {
		delete(m.mu.streams, id)
		return nil
	}
	return s
}

// streamLocked validates id and returns its live stream or ErrNotFound.
func (m *model) streamLocked(ctx context.Context, id string) (*modelStream, error) {
	if err := m.beginLocked(ctx); err != nil {
		return nil, err
	}
	if err := recordstore.ValidateStreamID(id); err != nil {
		return nil, err
	}
	s := m.liveLocked(id)
	if s == nil {
		return nil, recordstore.Errorf(recordstore.ErrNotFound, "stream %s", id)
	}
	return s, nil
}

// DeclareKind validates k and stores it, or reconciles it with the stored
// declaration.
func (m *model) DeclareKind(ctx context.Context, k recordstore.Kind) (recordstore.KindStatus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(ctx); err != nil {
		return "", err
	}
	k = k.Clone()
	if err := k.Validate(); err != nil {
		return "", err
	}
	stored, ok := m.mu.kinds[k.Name]
	if !ok {
		m.mu.kinds[k.Name] = k
		return recordstore.KindCreated, nil
	}
	merged, status, err := recordstore.Reconcile(stored, k, false)
	if err != nil {
		return "", err
	}
	m.mu.kinds[k.Name] = merged
	return status, nil
}

// Kinds lists the declared kinds by name.
func (m *model) Kinds(ctx context.Context) ([]recordstore.Kind, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(ctx); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(m.mu.kinds))
	for name := range m.mu.kinds {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]recordstore.Kind, len(names))
	for i, name := range names {
		out[i] = m.mu.kinds[name].Clone()
	}
	return out, nil
}

// Kind returns one declared kind.
func (m *model) Kind(ctx context.Context, name string) (recordstore.Kind, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(ctx); err != nil {
		return recordstore.Kind{}, err
	}
	if err := recordstore.ValidateKindName(name); err != nil {
		return recordstore.Kind{}, err
	}
	k, ok := m.mu.kinds[name]
	if !ok {
		return recordstore.Kind{}, recordstore.Errorf(recordstore.ErrNotFound, "kind %s", name)
	}
	return k.Clone(), nil
}

// Append checks the whole input first (names, rows, keys), then the
// stream's state (kind, seal), then applies rows retention, then the rows.
func (m *model) Append(ctx context.Context, stream, kind string, rows []recordstore.Row) (recordstore.AppendResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.beginLocked(ctx); err != nil {
		return recordstore.AppendResult{}, err
	}
	k, vals, err := m.checkAppendLocked(stream, kind, rows)
	if err != nil {
		return recordstore.AppendResult{}, err
	}
	s := m.liveLocked(stream)
	if s != nil && s.kind != kind {
		return recordstore.AppendResult{}, fmt.Errorf("%w: stream %s holds kind %s, not %s",
			recordstore.ErrSchemaConflict, stream, s.kind, kind)
	}
	if s != nil && s.sealed {
		return recordstore.AppendResult{}, recordstore.Errorf(recordstore.ErrSealed, "stream %s", stream)
	}
	now := m.now()
	changed := false
	if s == nil {
		s = m.createLocked(stream, k, now)
		changed = true
	}
	if dropRetained(s, k, now) > 0 {
		changed = true
	}
	res := applyRows(s, k, vals, now)
	if k.Table != nil {
		m.mu.used[k.Name] = max(m.mu.used[k.Name], s.high)
	}
	if changed || res.Appended > 0 {
		s.updated = now
		m.notifier.Notify(stream)
	}
	return res, nil
}

// checkAppendLocked validates an append's input and returns its kind and
// normalized rows.
func (m *model) checkAppendLocked(stream, kind string, rows []recordstore.Row) (recordstore.Kind, []recordstore.Values, error) {
	if err := recordstore.ValidateStreamID(stream); err != nil {
		return recordstore.Kind{}, nil, err
	}
	if err := recordstore.ValidateKindName(kind); err != nil {
		return recordstore.Kind{}, nil, err
	}
	if len(rows) == 0 {
		return recordstore.Kind{}, nil, recordstore.Invalidf("append to %s: no rows", stream)
	}
	k, ok := m.mu.kinds[kind]
	if !ok {
		return recordstore.Kind{}, nil, recordstore.Errorf(recordstore.ErrNotFound, "kind %s", kind)
	}
	vals := make([]recordstore.Values, len(rows))
	seen := map[string]int{} // key → row, counted from 1 as in every row error
	for i, r := range rows {
		v, err := k.Normalize(r)
		if err != nil {
			return recordstore.Kind{}, nil, fmt.Errorf("row %d: %w", i+1, err)
		}
		if key, ok := keyOf(&k, v); ok {
			if first, dup := seen[key]; dup {
				return recordstore.Kind{}, nil, recordstore.Invalidf("kind %s: rows %d and %d have the same key %s", k.Name, first, i+1, key)
			}
			seen[key] = i + 1
		}
		vals[i] = v
	}
	return k, vals, nil
}

// createLocked starts the next generation of stream id.
func (m *model) createLocked(id string, k recordstore.Kind, now time.Time) *modelStream {
	m.mu.generations[id]++
	s := &modelStream{id: id, kind: k.Name, gen: m.mu.generations[id], created: now, updated: now}
	if k.Table != nil {
		// A bound kind's table never reuses an id (an AUTOINCREMENT
		// table, as BindTable makes): a new generation starts after the
		// highest seq it ever held.
		s.high = m.mu.used[k.Name]
	}
	if r := k.Retention; r != nil && r.Mode == recordstore.RetainStream {
		exp := now.Add(time.Duration(r.TTL))
		s.expires = &exp
	}
	m.mu.streams[id] = s
	return s
}

// applyRows stores vals in s under k's conflict policy and returns the
// window. Keys inside vals are distinct (checked before).
func applyRows(s *modelStream, k recordstore.Kind, vals []recordstore.Values, now time.Time) recordstore.AppendResult {
	res := recordstore.AppendResult{Stream: s.id, Kind: k.Name, From: s.high + 1}
	for _, v := range vals {
		if key, ok := keyOf(&k, v); ok {
			if i := s.findKey(&k, key); i >= 0 {
				if !incomingWins(&k, v, s.rows[i].vals) {
					res.Skipped++
					continue
				}
				s.rows = slices.Delete(s.rows, i, i+1)
				res.Replaced++
			}
		}
		s.high++
		s.rows = append(s.rows, modelRow{seq: s.high, at: now, vals: v})
		res.Appended++
	}
	res.To = s.high
	return res
}

// incomingWins applies the conflict policy to an incoming row whose key is
// stored.
func incomingWins(k *recordstore.Kind, in, stored recordstore.Values) bool {
	switch k.Policy() {
	case recordstore.ConflictReplace:
		return true
	case recordstore.ConflictLWW:
		vi := k.ColumnIndex(k.LWW.Version)
		if c := compareStored(in[vi], stored[vi]); c != 0 {
			return c > 0
		}
		if k.LWW.Tiebreak == "" {
			return false
		}
		ti := k.ColumnIndex(k.LWW.Tiebreak)
		return compareStored(in[ti], stored[ti]) < 0
	}
	return false
}

// compareStored orders two stored values of one column: null first, then
// numbers numerically and text byte-wise.
func compareStored(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch x := a.(type) {
	case int64:
		return cmp.Compare(x, b.(int64))
	case float64:
		return cmp.Compare(x, b.(float64))
	case string:
		return strings.Compare(x, b.(string))
	}
	panic(fmt.Sprintf("model: cannot compare %T", a))
}

// keyOf renders the key of a normalized row as comparable text; ok is false
// for kinds without a key.
func keyOf(k *recordstore.Kind, v recordstore.Values) (string, bool) {
	if len(k.Key) == 0 {
		return "", false
	}
	parts := make([]any, 0, len(k.Key))
	for _, i := range k.KeyIndexes() {
		parts = append(parts, v[i])
	}
	b, err := json.Marshal(parts)
	if err != nil {
		panic(fmt.Sprintf("model: key of %v: %v", parts, err))
	}
	return string(b), true
}

// findKey returns the index of the stored row with key, or -1.
func (s *modelStream) findKey(k *recordstore.Kind, key string) int {
	for i, r := range s.rows {
		if rk, _ := keyOf(k, r.vals); rk == key {
			return i
		}
	}
	return -1
}

// dropRetained applies rows retention: rows of appends made before
// now - ttl are dropped. It returns how many rows went.
func dropRetained(s *modelStream, k recordstore.Kind, now time.Time) int {
	r := k.Retention
	if r == nil || r.Mode != recordstore.RetainRows {
		return 0
	}
	return s.dropBefore(now.Add(-time.Duration(r.TTL)))
}

// dropBefore drops the rows of appends made before t.
func (s *modelStream) dropBefore(t time.Time) int {
	n := len(s.rows)
	s.rows = slices.DeleteFunc(s.rows, func(r modelRow) bool { return r.at.Before(t) })
	return n - len(s.rows)
}

// meta describes s.
func (s *modelStream) meta() recordstore.Meta {
	low := s.high + 1
	if len(s.rows) > 0 {
		low = s.rows[0].seq
	}
	var exp *time.Time
	if s.expires != nil {
		t := *s.expires
		exp = &t
	}
	return recordstore.Meta{
		Stream: s.id, Kind: s.kind, Generation: s.gen,
		Total: int64(len(s.rows)), LowSeq: low, HighSeq: s.high, Sealed: s.sealed,
		CreatedAt: s.created, UpdatedAt: s.updated, ExpiresAt: exp,
	}
}

// NewModel returns the reference model as a recordstore.Backend: an
// in-memory store that follows the contract as plainly as possible, reading
// time from clock. Other packages' tests compare their reads with it.
func NewModel(clock *Clock) recordstore.Backend { return newModel(clock) }
