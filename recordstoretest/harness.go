// Harness and DescribeBackend: how a backend plugs into the conformance
// suite, and the per-spec state every spec works on.

package recordstoretest

import (
	"context"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// Harness tells the suite how to open the backend under test and what it
// can do.
type Harness struct {
	// Open returns a fresh, empty backend whose only time source is clock.
	// Its background retention must not run on its own (the suite calls
	// Sweep itself when the backend is a recordstore.Sweeper), so that
	// every spec is deterministic. The suite closes the backend.
	Open func(ctx context.Context, clock *Clock) (recordstore.Backend, error)

	// Reopen, when set, closes b and opens the same store again with the
	// same clock. The specs about what survives a reopen are skipped when
	// it is nil (a backend that keeps nothing across Close).
	Reopen func(ctx context.Context, clock *Clock, b recordstore.Backend) (recordstore.Backend, error)

	// Unsupported lists the conflict policies the backend refuses at
	// DeclareKind with ErrUnsupported. The specs that need those policies
	// are skipped, and one spec checks the refusal instead. The refusal is
	// for new kinds: redeclaring a stored kind with another policy is
	// still ErrSchemaConflict.
	Unsupported []recordstore.OnConflict

	// Capacity, when set, lets the suite check ErrCapacity: see
	// CapacityHook. Leave it nil for a backend with no write limits.
	Capacity *CapacityHook

	// Bind, when set, makes the suite run on bound kinds, as
	// BatchHarness.Bind does: every kind a spec declares is passed through
	// Bind (recordstoretest.BindTable for a backend that speaks SQLite's
	// DDL), whose tables must never reuse an id (AUTOINCREMENT, as
	// BindTable's); a spec that writes several streams of one kind gets one
	// kind per stream after the first, named after the kind and the stream;
	// the specs bound kinds cannot meet are skipped with a message naming
	// the rule (retention, indexes, widening, listing several streams of one
	// kind). The randomized model test gives each stream of its pool a
	// bound kind of its own, without retention.
	Bind func(k recordstore.Kind) recordstore.Kind

	// ModelRuns is how many independent runs the randomized model test
	// makes (0 means 3), each of ModelSteps random operations (0 means
	// 300). Raise them for a soak.
	ModelRuns, ModelSteps int
}

// CapacityHook opens a backend with a write limit small enough that Exceed
// runs into it.
type CapacityHook struct {
	// Open returns a fresh, empty backend configured with a small limit.
	Open func(ctx context.Context, clock *Clock) (recordstore.Backend, error)
	// Exceed makes one write that goes over the limit and returns its
	// error. The suite has declared kind (the suite's "event" kind:
	// columns n integer required, msg string) and appended a few rows to
	// stream before calling it; it then checks for ErrCapacity and that
	// the store did not change.
	Exceed func(ctx context.Context, b recordstore.Backend, stream, kind string) error
}

// supports reports whether the backend implements policy p.
func (h Harness) supports(p recordstore.OnConflict) bool {
	return !slices.Contains(h.Unsupported, p)
}

// DescribeBackend registers the conformance suite for one backend under a
// ginkgo Describe named name, and returns true so it can be called at
// package level:
//
//	var _ = recordstoretest.DescribeBackend("mybackend", harness)
//
// The caller's test package runs it with RunSpecs.
func DescribeBackend(name string, h Harness) bool {
	if h.Open == nil {
		panic("recordstoretest: Harness.Open is nil")
	}
	return Describe(name, func() {
		s := &suite{h: h, bind: h.Bind}
		BeforeEach(s.setUp)
		s.describeAppends()
		s.describeKinds()
		s.describeRefusals()
		s.describeConflicts()
		s.describeValues()
		s.describeRetention()
		s.describeLifecycle()
		s.describeFollow()
		s.describeConcurrency()
		s.describePersistence()
		s.describeModel()
	})
}

// suite is the state of the spec being run: a fresh backend and its clock.
type suite struct {
	h      Harness
	ctx    context.Context
	clock  *Clock
	b      recordstore.Backend
	closed bool // the spec closed b itself

	// bind, when set, turns the suite's kinds into bound kinds, one per
	// stream (see kindName); streamKinds holds the per-stream kinds the
	// running spec used, by name.
	bind        func(k recordstore.Kind) recordstore.Kind
	streamKinds map[string]recordstore.Kind
	firstStream map[string]string           // kind name → the first stream written with it
	declared    map[string]recordstore.Kind // the kinds the spec declared, as given
}

// setUp opens a fresh backend for one spec and arranges its teardown.
func (s *suite) setUp() {
	s.ctx = context.Background()
	s.clock = NewClock(ClockStart)
	b, err := s.h.Open(s.ctx, s.clock)
	Expect(err).NotTo(HaveOccurred(), "open the backend under test")
	s.b, s.closed = b, false
	s.streamKinds, s.firstStream, s.declared = nil, nil, nil
	DeferCleanup(s.tearDown)
}

// tearDown checks the store's invariants and closes it.
func (s *suite) tearDown() {
	if s.closed {
		return
	}
	s.checkInvariants()
	Expect(s.b.Close()).To(Succeed(), "close the backend under test")
}

// sweeper returns the backend's Sweeper, or nil.
func (s *suite) sweeper() recordstore.Sweeper {
	sw, _ := s.b.(recordstore.Sweeper)
	return sw
}

// sweep runs one retention pass when the backend has a sweeper; it reports
// whether it did.
func (s *suite) sweep() bool {
	sw := s.sweeper()
	if sw == nil {
		return false
	}
	Expect(sw.Sweep(s.ctx)).To(Succeed(), "sweep")
	return true
}

// requirePolicy skips the current spec when the backend does not implement
// policy p.
func (s *suite) requirePolicy(p recordstore.OnConflict) {
	if !s.h.supports(p) {
		Skip("the backend does not implement onConflict " + string(p))
	}
}
