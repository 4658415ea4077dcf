// The multi-process harness's step script: what a child process is told to
// do (Script, Step), how its failpoints behave (FailpointRule), and the JSON
// line it prints for every step (Line).

package recordstoretest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// Script is what one child process runs: its steps, in order, against the
// store configured at Path. It travels to the child as JSON in the
// environment (ChildEnv).
type Script struct {
	// Path is the store's configured path (the same for every child of a
	// test).
	Path string `json:"path"`
	// Failpoints are armed before the first step (see also OpArm).
	Failpoints []FailpointRule `json:"failpoints,omitempty"`
	// Steps run one after the other; each prints one Line. A failed step
	// does not stop the script unless StopOnError is set.
	Steps []Step `json:"steps"`
	// StopOnError makes the child exit (status 1) after the first failed
	// step.
	StopOnError bool `json:"stopOnError,omitempty"`
	// Debug makes the store log at debug level on the child's stderr
	// (default: warnings and errors only).
	Debug bool `json:"debug,omitempty"`
}

// The step operations. Steps that touch the store need an earlier OpOpen.
const (
	// OpOpen opens the store with Step.Options (through the OpenFunc given
	// to RunChild). Result: {"role": ...}.
	OpOpen = "open"
	// OpDeclare declares Step.Schema. Result: the KindStatus.
	OpDeclare = "declare"
	// OpAppend appends Step.Rows and/or Step.Gen rows of Step.Kind to
	// Step.Stream through the store's backend and waits for the result
	// (a non-owner writes through the spool). Result: AppendResult.
	OpAppend = "append"
	// OpPublish publishes one batch into the spool without waiting:
	// Step.Entries, or one append entry built like OpAppend's (then
	// sealing when Step.Seal). Each append entry's schema is Step.Schema,
	// else the kind as the store knows it. Result: {"id": batch id}.
	OpPublish = "publish"
	// OpAwait waits for the batch with id Step.ID (published by anyone),
	// or the batch published at step Step.Ref, or, with neither, for every
	// batch this child published and has not awaited yet. Result: the
	// BatchResult, or a list of them. A batch whose result carries an
	// error (the batch failed, or one of its entries did) fails the step
	// with that error's code; the result is printed all the same.
	OpAwait = "await"
	// OpWrite buffers Step.Rows and/or Step.Gen rows of Step.Kind (the
	// store's declaration, or Step.Schema) for Step.Stream in the child's
	// bulk writer, made on first use with batches of at most
	// Step.BatchRows rows (the store must be a BulkWriterStore). A batch
	// that fills up is delivered at once. Result: nothing.
	OpWrite = "write"
	// OpFlush flushes the child's bulk writer and waits for the outcome of
	// every batch it delivered since the last flush. Result: the list of
	// BatchResults; an error in one of them fails the step with its code,
	// as OpAwait does.
	OpFlush = "flush"
	// OpSeal, OpDelete: the backend calls on Step.Stream. Result: Meta
	// (seal) or nothing (delete).
	OpSeal   = "seal"
	OpDelete = "delete"
	// OpScan returns the rows of Step.Stream after Step.After (at most
	// Step.Limit). Result: a list of records, as recordstore.Record
	// renders them ({"_seq": n, column: value, ...}).
	OpScan = "scan"
	// OpMeta returns Step.Stream's Meta.
	OpMeta = "meta"
	// OpTail follows Step.Stream from Step.After with recordstore.Tail
	// until it has seen Step.Count rows (or the stream is sealed).
	// Result: {"count": n, "lastSeq": seq}.
	OpTail = "tail"
	// OpStatus returns the store's status (ChildStore.Status).
	OpStatus = "status"
	// OpWaitRole waits until the store's role is Step.Role (polling).
	OpWaitRole = "wait-role"
	// OpSleep sleeps Step.Duration.
	OpSleep = "sleep"
	// OpHold blocks until the parent calls Child.Release (or kills the
	// child). It prints its line when released.
	OpHold = "hold"
	// OpClose closes the store.
	OpClose = "close"
	// OpArm arms Step.Failpoint.
	OpArm = "arm"
	// OpHit fires the failpoint named Step.Failpoint.Name, as the store
	// would: a way to crash or pause a child at a chosen step.
	OpHit = "hit"
	// OpExit ends the child at once with status Step.Code, closing
	// nothing (the store's lock is dropped by the kernel).
	OpExit = "exit"
)

// The lines a child prints that are not the result of a step (their Step
// is the index of the step running at the time, or -1).
const (
	// EventStart is the child's first line. Result: {"pid": n}.
	EventStart = "start"
	// EventDone is the child's last line when the script ran to its end.
	EventDone = "done"
	// EventFailpoint is printed when an armed failpoint fires, before its
	// action. Result: {"name", "hit", "action"}.
	EventFailpoint = "failpoint"
	// EventRole is printed when the store reports a role change (see
	// ChildOptions.Event). Role holds the new role.
	EventRole = "role"
	// EventBatch is printed for every batch the store reports applied or
	// failed, when StoreOptions.BatchEvents is set. Result: BatchResult.
	EventBatch = "batch"
)

// Step is one thing a child does. Which fields matter depends on Op (see
// the Op constants).
type Step struct {
	Op string `json:"op"`
	// Name, optional, names the step for the parent: Child.StepNamed reads
	// its line by this name, and the child prints it in the line's "name".
	// A name must be unique in its script (StartChild refuses a repeated
	// one); steps without a name are read by index.
	Name   string            `json:"name,omitempty"`
	Stream string            `json:"stream,omitempty"`
	Kind   string            `json:"kind,omitempty"`
	Schema *recordstore.Kind `json:"schema,omitempty"`
	Rows   []recordstore.Row `json:"rows,omitempty"`
	Gen    *Gen              `json:"gen,omitempty"`
	// Entries make OpPublish publish a multi-entry batch.
	Entries []PublishEntry `json:"entries,omitempty"`
	// Seal seals the stream after an OpPublish append entry.
	Seal bool `json:"seal,omitempty"`
	// After and Limit select OpScan's window; After is also OpTail's
	// starting point.
	After int64 `json:"after,omitempty"`
	Limit int   `json:"limit,omitempty"`
	// Count is how many rows OpTail waits for.
	Count int `json:"count,omitempty"`
	// Ref is the index of the OpPublish step OpAwait waits for.
	Ref *int `json:"ref,omitempty"`
	// RefName is the Name of the OpPublish step OpAwait waits for (the
	// same as Ref, by name; set one of them).
	RefName string `json:"refName,omitempty"`
	// ID is the batch id OpAwait waits for.
	ID string `json:"id,omitempty"`
	// Role is what OpWaitRole waits for ("owner", "non-owner").
	Role string `json:"role,omitempty"`
	// Duration is OpSleep's length.
	Duration time.Duration `json:"duration,omitempty"`
	// Timeout bounds the step (its context); default DefaultStepTimeout.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Options configure OpOpen.
	Options *StoreOptions `json:"options,omitempty"`
	// Failpoint is what OpArm arms and what OpHit fires.
	Failpoint *FailpointRule `json:"failpoint,omitempty"`
	// Code is OpExit's exit status.
	Code int `json:"code,omitempty"`
	// BatchRows caps the batches of the bulk writer OpWrite makes.
	BatchRows int64 `json:"batchRows,omitempty"`
}

// DefaultStepTimeout bounds a step that sets no Timeout.
const DefaultStepTimeout = time.Minute

// PublishEntry is one entry of a batch published by OpPublish.
type PublishEntry struct {
	Op     recordstore.BatchOp `json:"op"`
	Stream string              `json:"stream,omitempty"`
	Kind   string              `json:"kind,omitempty"`
	// Schema is the producer's declaration of Kind carried in the batch;
	// default: the kind as the store knows it.
	Schema     *recordstore.Kind `json:"schema,omitempty"`
	Rows       []recordstore.Row `json:"rows,omitempty"`
	Gen        *Gen              `json:"gen,omitempty"`
	Seal       bool              `json:"seal,omitempty"`
	Generation int64             `json:"generation,omitempty"`
	TTL        time.Duration     `json:"ttl,omitempty"`
}

// Gen generates Count rows numbered From, From+1, ...: row i has column
// Key (default "k") set to fmt.Sprintf("%s-%08d", Prefix, i), column Num
// (default "n") set to i, and the columns of Extra.
type Gen struct {
	Prefix string         `json:"prefix"`
	From   int            `json:"from"`
	Count  int            `json:"count"`
	Key    string         `json:"key,omitempty"`
	Num    string         `json:"num,omitempty"`
	Extra  map[string]any `json:"extra,omitempty"`
}

// GenKey returns the key Gen gives row i of prefix.
func GenKey(prefix string, i int) string {
	return fmt.Sprintf("%s-%08d", prefix, i)
}

// Rows returns the generated rows.
func (g *Gen) Rows() []recordstore.Row {
	if g == nil {
		return nil
	}
	key, num := g.Key, g.Num
	if key == "" {
		key = "k"
	}
	if num == "" {
		num = "n"
	}
	rows := make([]recordstore.Row, g.Count)
	for j := range rows {
		i := g.From + j
		r := recordstore.Row{key: GenKey(g.Prefix, i), num: int64(i)}
		for c, v := range g.Extra {
			r[c] = v
		}
		rows[j] = r
	}
	return rows
}

// StoreOptions configure OpOpen. They are handed to the OpenFunc inside
// ChildOptions; zero values mean the store's defaults. Durations are
// nanoseconds in JSON.
type StoreOptions struct {
	// Format is the spool codec of non-owner writes ("ndjson",
	// "ndjson.gz", "parquet").
	Format string `json:"format,omitempty"`
	// Build names the child's build in state files and manifests.
	Build string `json:"build,omitempty"`
	// StartWait bounds how long a non-owner waits for the owner to be
	// ready.
	StartWait time.Duration `json:"startWait,omitempty"`
	// DrainOnClose bounds the owner's final drain (and enables a
	// non-owner's drain on close).
	DrainOnClose time.Duration `json:"drainOnClose,omitempty"`
	// PollMin and PollMax bound the ingest loop's polling.
	PollMin time.Duration `json:"pollMin,omitempty"`
	PollMax time.Duration `json:"pollMax,omitempty"`
	// Heartbeat is the state file refresh period.
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	// GapWait is how long a producer's out-of-order batch is held back.
	GapWait time.Duration `json:"gapWait,omitempty"`
	// GCInterval is the spool GC period; TmpAge and FailedAge its ages.
	GCInterval time.Duration `json:"gcInterval,omitempty"`
	TmpAge     time.Duration `json:"tmpAge,omitempty"`
	FailedAge  time.Duration `json:"failedAge,omitempty"`
	// BatchEvents makes the child print an EventBatch line for every
	// batch its store applies or fails.
	BatchEvents bool `json:"batchEvents,omitempty"`
	// NoFollowRecheck disables recordstore.Wait's periodic recheck in the
	// child, so that only a notification wakes a follower.
	NoFollowRecheck bool `json:"noFollowRecheck,omitempty"`
	// LiveFile, when set, asks the child's opener for a store with a
	// caller-named live file: the owner writes this file (carrying the
	// ledger of CarryFrom), a non-owner writes through the spool only.
	// Openers that know no such store ignore it.
	LiveFile  string   `json:"liveFile,omitempty"`
	CarryFrom []string `json:"carryFrom,omitempty"`
	// DeferElection opens the store without an election until its first
	// write (owner.Options.DeferElection).
	DeferElection bool `json:"deferElection,omitempty"`
	// SpoolOnly sends every write of a non-owner through the spool, never
	// over the owner's socket (owner.Options.SpoolOnly).
	SpoolOnly bool `json:"spoolOnly,omitempty"`
}

// The failpoint actions.
const (
	// ActKill makes the child SIGKILL itself (a real crash: no deferred
	// code, no flush, the kernel drops its locks).
	ActKill = "kill"
	// ActPause makes the child SIGSTOP itself; Child.Cont resumes it.
	ActPause = "pause"
	// ActExit makes the child exit at once with status 3.
	ActExit = "exit"
	// ActBlock blocks the goroutine that hit the failpoint until the
	// parent calls Child.Release; the rest of the process runs on.
	ActBlock = "block"
	// ActReport only prints the EventFailpoint line.
	ActReport = "report"
)

// FailpointRule arms one failpoint: the Hit-th time (1 = the first) the
// store reaches the point named Name, the child prints an EventFailpoint
// line and does Action. Names are those of owner's Fail* constants
// ("during-starting", "after-ledger-commit", "before-trash",
// "after-final-drain", ...) and spool's publish steps
// ("publish:tmp-created", ...).
type FailpointRule struct {
	Name   string `json:"name"`
	Action string `json:"action"`
	Hit    int    `json:"hit,omitempty"`
}

// Line is what a child prints for each step and event: one JSON object per
// line on its standard output.
type Line struct {
	// Step is the index of the step (for events: of the step running
	// when the event happened, -1 outside any step).
	Step int `json:"step"`
	// Op is the step's operation or the event's name.
	Op string `json:"op"`
	// OK is false when the step failed; Code is then recordstore.Code of
	// its error (or "pending" for an owner.PendingError), Error its text.
	OK    bool   `json:"ok"`
	Code  string `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
	// Result is the step's result as JSON (see the Op constants).
	Result json.RawMessage `json:"result,omitempty"`
	// Role is the store's role after the step ("" before open).
	Role string `json:"role,omitempty"`
	// MS is how long the step took, in milliseconds.
	MS float64 `json:"ms"`
	// Name is the step's Name on step lines ("" for a step without one),
	// and the failpoint's name on EventFailpoint lines.
	Name string `json:"name,omitempty"`
}

// Decode unmarshals the line's result into v, numbers as json.Number when
// v holds interface values.
func (l Line) Decode(v any) error {
	if len(l.Result) == 0 {
		return fmt.Errorf("step %d (%s) has no result", l.Step, l.Op)
	}
	dec := json.NewDecoder(bytes.NewReader(l.Result))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode result of step %d (%s): %w", l.Step, l.Op, err)
	}
	return nil
}

// String renders the line as its JSON text.
func (l Line) String() string {
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Sprintf("step %d %s", l.Step, l.Op)
	}
	return string(b)
}

// Records decodes an OpScan result: one map per record with its "_seq"
// and columns (numbers as json.Number).
func (l Line) Records() ([]map[string]any, error) {
	var recs []map[string]any
	err := l.Decode(&recs)
	return recs, err
}

// Ref returns a pointer to i, for Step.Ref.
func Ref(i int) *int { return &i }

// Named returns the step with its Name set to name, for scripts written as
// lists of step shorthands: open(opts).Named("open").
func (s Step) Named(name string) Step {
	s.Name = name
	return s
}

// Validate checks what the parent can check of a script before a child
// runs it: every step Name is unique, and every RefName names a step of
// the script. Its errors are recordstore.ErrInvalid.
func (s Script) Validate() error {
	index := make(map[string]int, len(s.Steps))
	for i, st := range s.Steps {
		if st.Name == "" {
			continue
		}
		if j, dup := index[st.Name]; dup {
			return recordstore.Invalidf("script: steps %d and %d are both named %q: a step name must be unique in its script", j, i, st.Name)
		}
		index[st.Name] = i
	}
	for i, st := range s.Steps {
		if st.RefName == "" {
			continue
		}
		if st.Ref != nil {
			return recordstore.Invalidf("script: step %d sets both Ref and RefName", i)
		}
		if _, ok := index[st.RefName]; !ok {
			return recordstore.Invalidf("script: step %d refers to step %q, which the script does not name", i, st.RefName)
		}
	}
	return nil
}

// StepIndex returns the index of the step named name, or false when no
// step has that name.
func (s Script) StepIndex(name string) (int, bool) {
	if name == "" {
		return 0, false
	}
	for i, st := range s.Steps {
		if st.Name == name {
			return i, true
		}
	}
	return 0, false
}
