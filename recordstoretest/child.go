// The child side of the multi-process harness: RunChild turns a test binary
// started by StartChild into a script runner that opens the caller's store
// and prints one JSON Line per step.

package recordstoretest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// ChildEnv is the environment variable that makes a test binary a child:
// it holds the Script as JSON, or "@" followed by the path of a file holding
// it (StartChild uses a file for large scripts; the child removes it).
const ChildEnv = "RECORDSTORE_CHILD"

// OpenFunc opens the store under test at path in a child process. The
// options carry the step's StoreOptions and the hooks the store must call:
// Failpoint at every failpoint, OnRole at every role change, OnBatch (when
// set) for every batch applied or failed.
type OpenFunc func(ctx context.Context, path string, o ChildOptions) (ChildStore, error)

// ChildOptions are what an OpenFunc configures its store with. OwnerOptions
// maps them onto owner.Options.
type ChildOptions struct {
	StoreOptions
	// Failpoint is called with the name of every failpoint the store
	// reaches; armed ones act (see FailpointRule).
	Failpoint func(name string)
	// OnRole is called after every role change with the new role.
	OnRole func(role string)
	// OnBatch, when not nil, is called for every batch the store applies
	// or fails.
	OnBatch func(recordstore.BatchResult)
	// Logger writes to the child's standard error.
	Logger *slog.Logger
}

// ChildStore is the store a child drives: one process's handle on a store,
// whatever its role. owner.Store satisfies it through OwnerChild.
type ChildStore interface {
	// Backend is the store's backend (the same value for its whole life).
	Backend() recordstore.Backend
	// Role is the process's current role ("owner", "non-owner", "closed").
	Role() string
	// Publish writes a batch into the spool without waiting and returns
	// its id; a store with no spool returns recordstore.ErrUnsupported.
	Publish(ctx context.Context, b recordstore.Batch) (string, error)
	// Await waits for a published batch's outcome.
	Await(ctx context.Context, id string) (recordstore.BatchResult, error)
	// Status reports on the store (any JSON-encodable value).
	Status(ctx context.Context) (any, error)
	// Close releases the store.
	Close() error
}

// BulkWriter is a store's bulk writer, as OpWrite and OpFlush drive it
// (owner.Writer is one).
type BulkWriter interface {
	// Append buffers rows of kind for stream, delivering full batches.
	Append(ctx context.Context, stream string, kind *recordstore.Kind, rows []recordstore.Row) error
	// Flush delivers what is buffered and returns the outcome of every
	// batch delivered since the last Flush; the error joins theirs.
	Flush(ctx context.Context) ([]recordstore.BatchResult, error)
}

// BulkWriterStore is a ChildStore that has a bulk writer (OpWrite and
// OpFlush need one). OwnerChild's stores are.
type BulkWriterStore interface {
	// NewBulkWriter returns a writer whose batches hold at most maxRows
	// rows (0: the writer's default).
	NewBulkWriter(maxRows int64) BulkWriter
}

// RunChild runs the script of ChildEnv and exits the process when the
// test binary was started as a child; otherwise it returns at once. Call it
// first thing in TestMain, before m.Run:
//
//	func TestMain(m *testing.M) {
//		recordstoretest.RunChild(openMyStore)
//		os.Exit(m.Run())
//	}
//
// The child exits with status 0 after the last step (closing nothing the
// script did not close), 1 when StopOnError stopped it or the script could
// not be read, and dies of SIGKILL when its standard input closes (the
// parent is gone), so a crashed test leaves no processes behind.
func RunChild(open OpenFunc) {
	raw, ok := os.LookupEnv(ChildEnv)
	if !ok {
		return
	}
	os.Exit(runChild(raw, open))
}

func runChild(raw string, open OpenFunc) int {
	out := &lineWriter{w: os.Stdout}
	script, err := loadScript(raw)
	if err != nil {
		out.write(Line{Step: -1, Op: EventStart, Code: recordstore.Code(err), Error: err.Error()})
		return 1
	}
	c := newChild(script, open, out)
	out.write(Line{Step: -1, Op: EventStart, OK: true, Result: mustJSON(map[string]int{"pid": os.Getpid()})})
	go c.readStdin()
	for _, r := range script.Failpoints {
		c.fp.arm(r)
	}
	for i, st := range script.Steps {
		if !c.runStep(i, st) && script.StopOnError {
			return 1
		}
	}
	c.step.Store(-1)
	out.write(Line{Step: -1, Op: EventDone, OK: true, Role: c.role()})
	return 0
}

// loadScript decodes the script from ChildEnv's value, numbers as
// json.Number so that integers in rows stay exact.
func loadScript(raw string) (Script, error) {
	data := []byte(raw)
	if path, ok := strings.CutPrefix(raw, "@"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return Script{}, fmt.Errorf("read script: %w", err)
		}
		_ = os.Remove(path)
		data = b
	}
	var s Script
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return Script{}, recordstore.Invalidf("decode script: %v", err)
	}
	return s, nil
}

// child is the state of a running script.
type child struct {
	script  Script
	open    OpenFunc
	out     *lineWriter
	fp      *failpoints
	release chan struct{} // one value per "release" line on stdin
	log     *slog.Logger
	step    atomic.Int64 // the step running now, -1 outside steps

	store  ChildStore
	isOpen bool
	// published lists this child's publishes in order.
	published []publication
	// writer is the bulk writer of OpWrite and OpFlush, made on first use.
	writer BulkWriter
}

// publication is one batch this child published.
type publication struct {
	step    int
	id      string
	awaited bool
}

func newChild(s Script, open OpenFunc, out *lineWriter) *child {
	level := slog.LevelWarn
	if s.Debug {
		level = slog.LevelDebug
	}
	c := &child{
		script:  s,
		open:    open,
		out:     out,
		release: make(chan struct{}, 64),
		log:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With("pid", os.Getpid()),
	}
	c.step.Store(-1)
	c.fp = &failpoints{armed: map[string][]armedRule{}, hits: map[string]int{}, c: c}
	return c
}

// readStdin turns "release" lines into release tokens and kills the child
// when stdin closes.
func (c *child) readStdin() {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "release" {
			c.release <- struct{}{}
		}
	}
	c.log.Warn("standard input closed: the parent is gone; exiting")
	killSelf()
}

// role returns the store's role, "" before the first open.
func (c *child) role() string {
	if c.store == nil {
		return ""
	}
	return c.store.Role()
}

// runStep runs one step and prints its line; it reports success.
func (c *child) runStep(i int, st Step) bool {
	c.step.Store(int64(i))
	start := time.Now()
	res, err := c.do(i, st)
	l := Line{Step: i, Op: st.Op, Name: st.Name, OK: err == nil, Role: c.role(),
		MS: float64(time.Since(start).Microseconds()) / 1000}
	if err != nil {
		l.Code, l.Error = lineCode(err), err.Error()
	}
	if res != nil {
		b, merr := json.Marshal(res)
		if merr != nil {
			l.OK, l.Code, l.Error = false, recordstore.CodeInternal, "encode result: "+merr.Error()
		} else {
			l.Result = b
		}
	}
	c.out.write(l)
	return l.OK
}

// lineCode is recordstore.Code, with "timeout" for a step whose deadline
// passed without a more precise code.
func lineCode(err error) string {
	code := recordstore.Code(err)
	if code == recordstore.CodeInternal && errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return code
}

// event prints a line that is not a step's result.
func (c *child) event(op, name string, result any) {
	l := Line{Step: int(c.step.Load()), Op: op, OK: true, Name: name}
	if op == EventRole {
		l.Role, _ = result.(string)
	} else if result != nil {
		l.Result = mustJSON(result)
	}
	c.out.write(l)
}

// lineWriter prints lines atomically: steps and events come from several
// goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  *os.File
}

func (lw *lineWriter) write(l Line) {
	b, err := json.Marshal(l)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"step":%d,"op":%q,"ok":false,"code":"internal","error":"encode line"}`, l.Step, l.Op))
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	_, _ = lw.w.Write(append(b, '\n'))
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}
