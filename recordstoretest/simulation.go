// The randomized model test: random operations run against the backend and
// the reference model, whose answers and whole state are compared after
// every step (after bbolt's simulation tests).

package recordstoretest

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// simOp is one random operation. once, when set, acts on what the two
// stores share (the clock) or on the backend alone (a reopen). run, when
// set, performs the operation on a store and renders its outcome as text;
// it is called on the backend under test and on the model, and the two
// texts must match.
type simOp struct {
	desc string
	once func()
	run  func(ctx context.Context, b recordstore.Backend) string
}

// simulation drives one run of the model test.
type simulation struct {
	s       *suite
	seed    uint64
	rng     *rand.Rand
	model   *model
	kinds   []recordstore.Kind
	streams []simStream
	appends []time.Time // the time of every append made, for trim boundaries
	history []string
}

// simStream is a stream id of the pool and the kind it is usually written as.
type simStream struct{ id, kind string }

// simKinds are the kinds the model test writes: one per policy and
// retention mode. When the suite binds its kinds, each is bound once per
// stream of the pool, without retention (see newSimulation).
func simKinds() []recordstore.Kind {
	col := func(name string, t recordstore.ColumnType) recordstore.Column {
		return recordstore.Column{Name: name, Type: t}
	}
	str, num := recordstore.TypeString, recordstore.TypeInteger
	return []recordstore.Kind{
		{Name: "sim_plain", Columns: []recordstore.Column{{Name: "n", Type: num, Required: true}, col("s", str)}},
		{Name: "sim_skip", Columns: []recordstore.Column{col("id", str), col("v", num), col("s", str)}, Key: []string{"id"}},
		{Name: "sim_replace", Columns: []recordstore.Column{col("id", str), col("v", num), col("s", str)}, Key: []string{"id"},
			OnConflict: recordstore.ConflictReplace,
			Retention:  &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(30 * time.Minute)}},
		{Name: "sim_lww", Columns: []recordstore.Column{col("id", str), col("ver", num), col("node", str), col("v", num)},
			Key: []string{"id"}, OnConflict: recordstore.ConflictLWW, LWW: &recordstore.LWW{Version: "ver", Tiebreak: "node"}},
		{Name: "sim_session", Columns: []recordstore.Column{{Name: "n", Type: num, Required: true}},
			Retention: &recordstore.Retention{Mode: recordstore.RetainStream, TTL: recordstore.Duration(45 * time.Minute)}},
	}
}

// newSimulation prepares a run with its own model sharing the suite's clock.
func newSimulation(s *suite, seed uint64) *simulation {
	sim := &simulation{s: s, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), model: newModel(s.clock)}
	for _, k := range simKinds() {
		if k.OnConflict != "" && !s.h.supports(k.OnConflict) {
			continue
		}
		base := strings.TrimPrefix(k.Name, "sim_")
		if s.bound() {
			// A bound kind has no retention and holds one stream: each
			// stream of the pool gets a bound kind of its own.
			k.Retention = nil
			for _, x := range []string{"a", "b"} {
				bk := k.Clone()
				bk.Name = k.Name + "_" + x
				bk = s.bind(bk)
				sim.kinds = append(sim.kinds, bk)
				sim.streams = append(sim.streams, simStream{base + "." + x, bk.Name})
			}
			continue
		}
		sim.kinds = append(sim.kinds, k)
		sim.streams = append(sim.streams, simStream{base + ".a", k.Name}, simStream{base + ".b", k.Name})
	}
	return sim
}

// run declares the kinds, then makes steps random operations, comparing
// the backend with the model after each.
func (sim *simulation) run(steps int) {
	for _, k := range sim.kinds {
		sim.do(sim.declareOp(k))
	}
	for range steps {
		sim.do(sim.nextOp())
	}
}

// do runs op on both stores and compares the outcomes and whole states.
func (sim *simulation) do(op simOp) {
	ctx := sim.s.ctx
	sim.history = append(sim.history, fmt.Sprintf("%4d %s  [clock %s]", len(sim.history), op.desc,
		recordstore.FormatDatetime(sim.s.clock.Now())))
	if op.once != nil {
		op.once()
	}
	if op.run != nil {
		got := op.run(ctx, sim.s.b)
		want := op.run(ctx, sim.model)
		Expect(got == want).To(BeTrue(), sim.failure(fmt.Sprintf(
			"the backend answered differently from the model\n  backend: %s\n  model:   %s", got, want)))
	}
	diff := sim.state(sim.s.b).diff(sim.state(sim.model))
	Expect(diff).To(BeEmpty(), sim.failure("the backend's state differs from the model's\n"+diff))
}

// failure describes where a run went wrong and how to replay it.
func (sim *simulation) failure(what string) string {
	last := sim.history
	if len(last) > 40 {
		last = last[len(last)-40:]
	}
	return fmt.Sprintf("%s\nmodel test seed %d (from the ginkgo random seed; replay with --ginkgo.seed), step %d\nlast operations:\n%s",
		what, sim.seed, len(sim.history)-1, strings.Join(last, "\n"))
}

// simState is what the comparison reads from a store after every step.
type simState struct {
	Snapshot storeSnapshot
	Metas    []string // Meta outcome of every pool stream, live or not
}

// diff describes every line where got differs from want ("" when none).
func (got simState) diff(want simState) string {
	var out []string
	cmp := func(what, g, w string) {
		if g != w {
			out = append(out, fmt.Sprintf("%s\n  backend: %s\n  model:   %s", what, g, w))
		}
	}
	cmp("kinds", strings.Join(got.Snapshot.Kinds, "\n           "), strings.Join(want.Snapshot.Kinds, "\n           "))
	cmp("streams", strings.Join(got.Snapshot.Streams, "\n           "), strings.Join(want.Snapshot.Streams, "\n           "))
	for i := range max(len(got.Metas), len(want.Metas)) {
		cmp("meta", nth(got.Metas, i), nth(want.Metas, i))
	}
	ids := map[string]bool{}
	for id := range got.Snapshot.Rows {
		ids[id] = true
	}
	for id := range want.Snapshot.Rows {
		ids[id] = true
	}
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		cmp("rows of "+id, got.Snapshot.Rows[id], want.Snapshot.Rows[id])
	}
	return strings.Join(out, "\n")
}

// nth returns xs[i], or "(none)" past its end.
func nth(xs []string, i int) string {
	if i < len(xs) {
		return xs[i]
	}
	return "(none)"
}

// state reads b's whole state.
func (sim *simulation) state(b recordstore.Backend) simState {
	st := simState{Snapshot: takeSnapshot(sim.s.ctx, b)}
	for _, ps := range sim.streams {
		m, err := b.Meta(sim.s.ctx, ps.id)
		st.Metas = append(st.Metas, ps.id+" "+outcome(m, err))
	}
	return st
}

// outcome renders a call's result, or its error code, as text.
func outcome(v any, err error) string {
	if err != nil {
		return "error " + recordstore.Code(err)
	}
	return jsonText(v)
}

// pick returns a random element of xs.
func pick[T any](rng *rand.Rand, xs []T) T {
	return xs[rng.IntN(len(xs))]
}
