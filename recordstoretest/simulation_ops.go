// The random operations of the model test and their weights.

package recordstoretest

import (
	"context"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// nextOp draws the next operation.
func (sim *simulation) nextOp() simOp {
	type weighted struct {
		w  int
		op func() simOp
	}
	table := []weighted{
		{36, sim.appendOp}, {8, sim.scanOp}, {6, sim.sealOp}, {5, sim.reopenOp},
		{4, sim.expireOp}, {6, sim.trimOp}, {4, sim.deleteOp}, {14, sim.advanceOp},
		{3, sim.jumpToExpiryOp}, {5, sim.redeclareOp},
	}
	if _, ok := sim.s.b.(recordstore.Sweeper); ok {
		table = append(table, weighted{4, sim.sweepOp})
	}
	if sim.s.h.Reopen != nil {
		table = append(table, weighted{2, sim.reopenStoreOp})
	}
	total := 0
	for _, t := range table {
		total += t.w
	}
	n := sim.rng.IntN(total)
	for _, t := range table {
		if n < t.w {
			return t.op()
		}
		n -= t.w
	}
	panic("unreachable")
}

func (sim *simulation) declareOp(k recordstore.Kind) simOp {
	return simOp{desc: "declare " + k.String(), run: func(ctx context.Context, b recordstore.Backend) string {
		st, err := b.DeclareKind(ctx, k.Clone())
		return outcome(st, err)
	}}
}

// redeclareOp declares a pool kind again: as it was, with an added column,
// or with a changed column type (a conflict).
func (sim *simulation) redeclareOp() simOp {
	k := pick(sim.rng, sim.kinds).Clone()
	switch sim.rng.IntN(4) {
	case 0:
		k.Columns = append(k.Columns, recordstore.Column{Name: "extra", Type: recordstore.TypeString})
	case 1:
		k.Columns[len(k.Columns)-1].Type = recordstore.TypeJSON
	}
	if stored, err := sim.model.Kind(sim.s.ctx, k.Name); err == nil && len(stored.Columns) > len(k.Columns) {
		k.Columns = stored.Columns // the extra column is already there: repeat it
	}
	return sim.declareOp(k)
}

// appendOp appends 1-4 random rows (rarely none), usually under the
// stream's own kind, with keys drawn from a small set so that they collide.
func (sim *simulation) appendOp() simOp {
	ps := pick(sim.rng, sim.streams)
	kind := ps.kind
	if sim.rng.IntN(12) == 0 {
		kind = pick(sim.rng, sim.kinds).Name
		if sim.s.bound() {
			if _, err := sim.model.Meta(sim.s.ctx, ps.id); err != nil {
				// Another bound kind's table holds another stream: only a
				// live stream is written with a kind not its own (a
				// conflict), so that no table is asked to hold two.
				kind = ps.kind
			}
		}
	}
	k, err := sim.model.Kind(sim.s.ctx, kind)
	if err != nil {
		k = sim.kindNamed(kind)
	}
	n := 1 + sim.rng.IntN(4)
	if sim.rng.IntN(40) == 0 {
		n = 0
	}
	rows := sim.rows(k, n)
	sim.appends = append(sim.appends, sim.s.clock.Now())
	return simOp{desc: fmt.Sprintf("append %s %s %s", ps.id, kind, jsonText(rows)),
		run: func(ctx context.Context, b recordstore.Backend) string {
			res, err := b.Append(ctx, ps.id, kind, cloneRows(rows))
			return outcome(res, err)
		}}
}

// rows makes n random rows of k. Keys are distinct, except that now and
// then one is repeated (the append must then be refused).
func (sim *simulation) rows(k recordstore.Kind, n int) []recordstore.Row {
	ids := sim.rng.Perm(6)
	rows := make([]recordstore.Row, n)
	for i := range rows {
		r := recordstore.Row{}
		for _, c := range k.Columns {
			switch c.Name {
			case "id":
				r["id"] = fmt.Sprintf("k%d", ids[i])
			case "n", "v":
				r[c.Name] = int64(sim.rng.IntN(1000))
			case "ver":
				r["ver"] = sim.maybeNil(int64(sim.rng.IntN(4)))
			case "node":
				r["node"] = sim.maybeNil(pick(sim.rng, []string{"a", "b", "c", "B"}))
			default:
				if c.Type == recordstore.TypeString && sim.rng.IntN(2) == 0 {
					r[c.Name] = pick(sim.rng, []string{"x", "ÿ", "hello world"})
				}
			}
		}
		rows[i] = r
	}
	if n > 1 && len(k.Key) > 0 && sim.rng.IntN(10) == 0 {
		rows[n-1]["id"] = rows[0]["id"]
	}
	return rows
}

// maybeNil returns v, or nil one time in twelve.
func (sim *simulation) maybeNil(v any) any {
	if sim.rng.IntN(12) == 0 {
		return nil
	}
	return v
}

func (sim *simulation) scanOp() simOp {
	ps := pick(sim.rng, sim.streams)
	opts := recordstore.ScanOptions{After: int64(sim.rng.IntN(12)), Limit: sim.rng.IntN(5)}
	if sim.rng.IntN(25) == 0 {
		opts.Limit = -1
	}
	return simOp{desc: fmt.Sprintf("scan %s %+v", ps.id, opts), run: func(ctx context.Context, b recordstore.Backend) string {
		recs, err := b.Scan(ctx, ps.id, opts)
		return outcome(recs, err)
	}}
}

func (sim *simulation) sealOp() simOp {
	ps := pick(sim.rng, sim.streams)
	return simOp{desc: "seal " + ps.id, run: func(ctx context.Context, b recordstore.Backend) string {
		return outcome(b.Seal(ctx, ps.id))
	}}
}

// reopenOp reopens with the current generation, or one off by one.
func (sim *simulation) reopenOp() simOp {
	ps := pick(sim.rng, sim.streams)
	gen := int64(1)
	if m, err := sim.model.Meta(sim.s.ctx, ps.id); err == nil {
		gen = m.Generation
	}
	gen += int64(pick(sim.rng, []int{0, 0, 0, -1, 1}))
	return simOp{desc: fmt.Sprintf("reopen %s gen %d", ps.id, gen), run: func(ctx context.Context, b recordstore.Backend) string {
		return outcome(b.Reopen(ctx, ps.id, gen))
	}}
}

func (sim *simulation) expireOp() simOp {
	ps := pick(sim.rng, sim.streams)
	ttl := pick(sim.rng, []time.Duration{0, time.Second, 10 * time.Minute, 45 * time.Minute, 2 * time.Hour})
	return simOp{desc: fmt.Sprintf("expire %s %v", ps.id, ttl), run: func(ctx context.Context, b recordstore.Backend) string {
		return outcome(b.Expire(ctx, ps.id, ttl))
	}}
}

// trimOp trims before a time near an earlier append's time, or near now.
func (sim *simulation) trimOp() simOp {
	ps := pick(sim.rng, sim.streams)
	before := sim.s.clock.Now().Add(-time.Duration(sim.rng.IntN(3)) * 20 * time.Minute)
	if len(sim.appends) > 0 && sim.rng.IntN(2) == 0 {
		before = pick(sim.rng, sim.appends).Add(pick(sim.rng, []time.Duration{-time.Microsecond, 0, time.Microsecond}))
	}
	return simOp{desc: "trim " + ps.id + " before " + recordstore.FormatDatetime(before),
		run: func(ctx context.Context, b recordstore.Backend) string {
			return outcome(b.Trim(ctx, ps.id, before))
		}}
}

func (sim *simulation) deleteOp() simOp {
	ps := pick(sim.rng, sim.streams)
	return simOp{desc: "delete " + ps.id, run: func(ctx context.Context, b recordstore.Backend) string {
		return outcome(nil, b.Delete(ctx, ps.id))
	}}
}

// advanceOp moves the clock forward by an amount chosen near the
// retention ttls, so that boundaries are hit exactly.
func (sim *simulation) advanceOp() simOp {
	d := pick(sim.rng, []time.Duration{time.Microsecond, time.Second, 5 * time.Minute,
		30*time.Minute - time.Microsecond, 30 * time.Minute, 45 * time.Minute, time.Hour})
	return simOp{desc: fmt.Sprintf("advance the clock %v", d), once: func() { sim.s.clock.Advance(d) }}
}

// jumpToExpiryOp moves the clock to a stream's expiry instant, or one
// microsecond before it.
func (sim *simulation) jumpToExpiryOp() simOp {
	var targets []time.Time
	now := sim.s.clock.Now()
	metas, _ := sim.model.Streams(sim.s.ctx, "")
	for _, m := range metas {
		if m.ExpiresAt == nil {
			continue
		}
		for _, t := range []time.Time{m.ExpiresAt.Add(-time.Microsecond), *m.ExpiresAt} {
			if t.After(now) {
				targets = append(targets, t)
			}
		}
	}
	if len(targets) == 0 {
		return sim.advanceOp()
	}
	t := pick(sim.rng, targets)
	return simOp{desc: "set the clock to " + recordstore.FormatDatetime(t), once: func() { sim.s.clock.Set(t) }}
}

// sweepOp runs one retention pass on both stores.
func (sim *simulation) sweepOp() simOp {
	return simOp{desc: "sweep", run: func(ctx context.Context, b recordstore.Backend) string {
		sw, ok := b.(recordstore.Sweeper)
		if !ok {
			return "no sweeper"
		}
		return outcome(nil, sw.Sweep(ctx))
	}}
}

// reopenStoreOp closes and reopens the backend under test; the model is
// left alone.
func (sim *simulation) reopenStoreOp() simOp {
	return simOp{desc: "reopen the store", once: func() { sim.s.reopenStore() }}
}

// kindNamed returns the pool kind called name.
func (sim *simulation) kindNamed(name string) recordstore.Kind {
	for _, k := range sim.kinds {
		if k.Name == name {
			return k
		}
	}
	panic("simulation: no kind " + name)
}

// cloneRows copies rows so that no backend can alter what the other sees.
func cloneRows(rows []recordstore.Row) []recordstore.Row {
	out := make([]recordstore.Row, len(rows))
	for i, r := range rows {
		c := make(recordstore.Row, len(r))
		for k, v := range r {
			c[k] = v
		}
		out[i] = c
	}
	return out
}
