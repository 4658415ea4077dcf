// Event: one row of the recorder's events table, its column order, its
// stored values, and the builders of the event kinds the worker records.

package recorder

import (
	"github.com/fb46ecde/records/drakkar/dbfiles"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// ErrEvent is returned for an event that cannot be stored: a JSON column
// that does not encode, or a JSON line (ParseEventJSON) that breaks the
// rules. The message names the column. errors.Is(err,
// recordstore.ErrInvalid) holds as well.
var ErrEvent = recordstore.Invalidf("bad event")

// Event kinds with a builder.
const (
	KindTaskStarted    = "task_started"
	KindTaskCompleted  = "task_completed"
	KindTaskFailed     = "task_failed"
	KindAnnotation     = "annotation"
	KindResourceSample = "resource_sample"
	KindRuntimeStall   = "runtime_stall"
)

// DefaultOrigin is the origin of an event that names none.
const DefaultOrigin = "kafka"

// EventColumns is the pinned column list of the events table, id first, in
// the order of the spec's DDL. Values returns the columns after id.
var EventColumns = []string{
	"id", "ts", "dt", "event", "partition", "offset", "task_id", "args",
	"stdout_size", "stdout", "stderr", "exit_code", "duration",
	"output_topic", "metadata", "pid", "labels", "origin", "client_name",
	"request_id",
}

// Event is one row of the events table but its id, which the store
// assigns. A nil pointer, a nil Args and a nil map are SQL NULL.
type Event struct {
	// At is the clock reading of the event; ts and dt are both derived from
	// it, truncated to whole microseconds.
	At time.Time
	// Kind is the event column: task_started, annotation, ...
	Kind string
	// Partition and Offset are the Kafka source position.
	Partition *int64
	Offset    *int64
	// TaskID identifies the task of task events.
	TaskID *string
	// Args is the task's arguments, stored as canonical JSON.
	Args any
	// StdoutSize is the byte size of the task's stdout; it is kept when the
	// content is trimmed.
	StdoutSize int64
	// Stdout and Stderr are the task's output.
	Stdout *string
	Stderr *string
	// ExitCode is the task's exit code.
	ExitCode *int64
	// Duration is stored as REAL seconds.
	Duration *time.Duration
	// OutputTopic is the topic the task's result went to.
	OutputTopic *string
	// Metadata is stored as canonical JSON.
	Metadata map[string]any
	// PID is the task's process id.
	PID *int64
	// Labels is stored as canonical JSON.
	Labels map[string]string
	// Origin is where the work came from; "" is stored as DefaultOrigin.
	Origin string
	// ClientName and RequestID identify a request of a non-Kafka origin.
	ClientName *string
	RequestID  *string

	// tries counts the failed flushes of this event (see Buffer.Requeue).
	tries int
}

// Ptr returns a pointer to v, for the nullable fields of Event and State.
func Ptr[T any](v T) *T { return &v }

// NewEvent returns an event of kind at the given time with the default
// origin and nothing else set.
func NewEvent(kind string, at time.Time) Event {
	return Event{At: at, Kind: kind, Origin: DefaultOrigin}
}

// IsTask reports whether the event is a task event (its kind starts with
// "task_"): the events the duration and output knobs apply to.
func (e Event) IsTask() bool { return len(e.Kind) > 5 && e.Kind[:5] == "task_" }

// Values returns the stored values of the 19 columns after id, in
// EventColumns order: nil, int64, float64 or string, JSON columns encoded
// canonically. An unencodable JSON column is an ErrEvent naming it.
func (e Event) Values() ([]any, error) {
	args, err := jsonColumn("args", e.Args)
	if err != nil {
		return nil, err
	}
	var meta, labels any
	if e.Metadata != nil {
		if meta, err = jsonColumn("metadata", e.Metadata); err != nil {
			return nil, err
		}
	}
	if e.Labels != nil {
		if labels, err = jsonColumn("labels", e.Labels); err != nil {
			return nil, err
		}
	}
	origin := e.Origin
	if origin == "" {
		origin = DefaultOrigin
	}
	return []any{
		dbfiles.TS(e.At), dbfiles.DT(e.At), e.Kind, nullable(e.Partition), nullable(e.Offset),
		nullable(e.TaskID), args, e.StdoutSize, nullable(e.Stdout), nullable(e.Stderr),
		nullable(e.ExitCode), seconds(e.Duration), nullable(e.OutputTopic), meta,
		nullable(e.PID), labels, origin, nullable(e.ClientName), nullable(e.RequestID),
	}, nil
}

// jsonColumn encodes v canonically; nil is NULL.
func jsonColumn(name string, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := canonicalJSON(v)
	if err != nil {
		return nil, recordstore.Errorf(ErrEvent, "%s: %w", name, err)
	}
	return string(b), nil
}

func nullable[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// seconds is a duration as REAL seconds, or nil.
func seconds(d *time.Duration) any {
	if d == nil {
		return nil
	}
	return d.Seconds()
}

// milliseconds is a duration as a JSON number of milliseconds.
func milliseconds(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Task identifies the task of a task event and where its work came from.
type Task struct {
	// ID is the task id.
	ID string
	// Partition and Offset are the Kafka source position; nil for work of
	// another origin.
	Partition, Offset *int64
	// Labels are the task's labels; nil is NULL.
	Labels map[string]string
	// Origin is where the work came from; "" is DefaultOrigin.
	Origin string
	// ClientName and RequestID identify a request of a non-Kafka origin.
	ClientName, RequestID *string
}

// Started is what a task_started event records.
type Started struct {
	// Args is the task's arguments (any JSON value).
	Args any
	// PID is the subprocess id.
	PID int
	// Stdin is the task's stdin. The builder records it whole; Filter
	// keeps it only when store_stdin is on, capped.
	Stdin []byte
	// QueueWait is the wait before a slot freed up (metadata queue_wait_ms).
	QueueWait time.Duration
	// SourceOffsets is metadata source_offsets (any JSON value; nil = absent).
	SourceOffsets any
}

// Completed is what a task_completed event records.
type Completed struct {
	Args     any
	PID      int
	Duration time.Duration
	ExitCode int
	Stdout   string
	Stderr   string
	// OutputTopic is where the result went ("" = NULL).
	OutputTopic string
	// SpawnLatency is the subprocess start latency (metadata spawn_ms).
	SpawnLatency time.Duration
}

// Failed is what a task_failed event records.
type Failed struct {
	Args     any
	PID      int
	Duration time.Duration
	// ExitCode is nil when the task never exited (spawn failure, timeout).
	ExitCode *int64
	Stdout   string
	Stderr   string
	// Stdin is always kept for a failed task (capped by Filter).
	Stdin []byte
	// Exception and Traceback are the failure detail (metadata exception
	// and, when not empty, traceback).
	Exception string
	Traceback string
}

// Resources is what a resource_sample event records. A nil field is a
// value the platform does not give: it is left out of the metadata, never
// written as zero.
type Resources struct {
	RSSBytes        *int64
	Threads         *int64
	OpenFDs         *int64
	CPUPercent      *float64
	ChildCPUPercent *float64
	NetBytesSent    *int64
	NetBytesRecv    *int64
}

func taskEvent(kind string, at time.Time, t Task, args any, pid int) Event {
	e := NewEvent(kind, at)
	e.TaskID = Ptr(t.ID)
	e.Partition, e.Offset = t.Partition, t.Offset
	e.Labels = t.Labels
	if t.Origin != "" {
		e.Origin = t.Origin
	}
	e.ClientName, e.RequestID = t.ClientName, t.RequestID
	e.Args = args
	if pid != 0 {
		e.PID = Ptr(int64(pid))
	}
	return e
}

// TaskStarted builds a task_started event: args, pid, labels, and metadata
// queue_wait_ms, stdin_bytes, stdin and (when given) source_offsets.
func TaskStarted(at time.Time, t Task, s Started) Event {
	e := taskEvent(KindTaskStarted, at, t, s.Args, s.PID)
	e.Metadata = map[string]any{
		"queue_wait_ms": milliseconds(s.QueueWait),
		"stdin_bytes":   int64(len(s.Stdin)),
		"stdin":         string(s.Stdin),
	}
	if s.SourceOffsets != nil {
		e.Metadata["source_offsets"] = s.SourceOffsets
	}
	return e
}

// TaskCompleted builds a task_completed event: duration, exit_code,
// stdout/stderr with stdout_size, output_topic, and metadata spawn_ms.
func TaskCompleted(at time.Time, t Task, c Completed) Event {
	e := taskEvent(KindTaskCompleted, at, t, c.Args, c.PID)
	e.Duration = Ptr(c.Duration)
	e.ExitCode = Ptr(int64(c.ExitCode))
	e.Stdout, e.Stderr = Ptr(c.Stdout), Ptr(c.Stderr)
	e.StdoutSize = int64(len(c.Stdout))
	if c.OutputTopic != "" {
		e.OutputTopic = Ptr(c.OutputTopic)
	}
	e.Metadata = map[string]any{"spawn_ms": milliseconds(c.SpawnLatency)}
	return e
}

// TaskFailed builds a task_failed event: duration, exit_code, stdout/stderr
// with stdout_size, and metadata exception, traceback, stdin and
// stdin_bytes.
func TaskFailed(at time.Time, t Task, f Failed) Event {
	e := taskEvent(KindTaskFailed, at, t, f.Args, f.PID)
	e.Duration = Ptr(f.Duration)
	e.ExitCode = f.ExitCode
	e.Stdout, e.Stderr = Ptr(f.Stdout), Ptr(f.Stderr)
	e.StdoutSize = int64(len(f.Stdout))
	e.Metadata = map[string]any{
		"exception":   f.Exception,
		"stdin_bytes": int64(len(f.Stdin)),
		"stdin":       string(f.Stdin),
	}
	if f.Traceback != "" {
		e.Metadata["traceback"] = f.Traceback
	}
	return e
}

// Annotation builds an annotation event: the handler's own diagnostics in
// metadata, tied to a task when taskID is not "".
func Annotation(at time.Time, taskID string, data map[string]any) Event {
	e := NewEvent(KindAnnotation, at)
	if taskID != "" {
		e.TaskID = Ptr(taskID)
	}
	e.Metadata = data
	if e.Metadata == nil {
		e.Metadata = map[string]any{}
	}
	return e
}

// ResourceSample builds a resource_sample event; its metadata holds only
// the fields r gives (rss_bytes, threads, open_fds, cpu_percent,
// child_cpu_percent, net_bytes_sent, net_bytes_recv).
func ResourceSample(at time.Time, r Resources) Event {
	e := NewEvent(KindResourceSample, at)
	e.Metadata = map[string]any{}
	put := func(k string, v any, ok bool) {
		if ok {
			e.Metadata[k] = v
		}
	}
	put("rss_bytes", nullable(r.RSSBytes), r.RSSBytes != nil)
	put("threads", nullable(r.Threads), r.Threads != nil)
	put("open_fds", nullable(r.OpenFDs), r.OpenFDs != nil)
	put("cpu_percent", nullable(r.CPUPercent), r.CPUPercent != nil)
	put("child_cpu_percent", nullable(r.ChildCPUPercent), r.ChildCPUPercent != nil)
	put("net_bytes_sent", nullable(r.NetBytesSent), r.NetBytesSent != nil)
	put("net_bytes_recv", nullable(r.NetBytesRecv), r.NetBytesRecv != nil)
	return e
}

// RuntimeStall builds a runtime_stall event: the stall as duration, and
// metadata stall_ms and the captured stacks.
func RuntimeStall(at time.Time, stall time.Duration, stacks []string) Event {
	e := NewEvent(KindRuntimeStall, at)
	e.Duration = Ptr(stall)
	if stacks == nil {
		stacks = []string{}
	}
	e.Metadata = map[string]any{"stall_ms": milliseconds(stall), "stacks": stacks}
	return e
}
