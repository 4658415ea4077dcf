// Specs of Event: the pinned columns, the stored values, and the builders.

package recorder_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/recorder"
)

// at is a clock reading with sub-microsecond digits, to see truncation.
var at = time.Date(2026, 10, 12, 4, 12, 3, 456789999, time.UTC)

const atTS = 1791778323.456789 // at, truncated to the microsecond
const atDT = "2026-10-12 04:12:03.456"

// row maps the values of an event to their column names.
func row(e recorder.Event) map[string]any {
	vals, err := e.Values()
	Expect(err).NotTo(HaveOccurred())
	Expect(vals).To(HaveLen(len(recorder.EventColumns) - 1))
	m := map[string]any{}
	for i, v := range vals {
		m[recorder.EventColumns[i+1]] = v
	}
	return m
}

var _ = Describe("Event", func() {
	It("pins the 20 columns of the events table in DDL order", func() {
		Expect(recorder.EventColumns).To(Equal([]string{
			"id", "ts", "dt", "event", "partition", "offset", "task_id", "args",
			"stdout_size", "stdout", "stderr", "exit_code", "duration",
			"output_topic", "metadata", "pid", "labels", "origin", "client_name",
			"request_id",
		}))
	})

	It("stores a bare event as NULLs, stdout_size 0 and origin kafka, with ts and dt from one truncated reading", func() {
		Expect(row(recorder.NewEvent("custom", at))).To(Equal(map[string]any{
			"ts": atTS, "dt": atDT, "event": "custom", "partition": nil, "offset": nil,
			"task_id": nil, "args": nil, "stdout_size": int64(0), "stdout": nil, "stderr": nil,
			"exit_code": nil, "duration": nil, "output_topic": nil, "metadata": nil,
			"pid": nil, "labels": nil, "origin": "kafka", "client_name": nil, "request_id": nil,
		}))
	})

	It("stores an empty origin as kafka", func() {
		Expect(row(recorder.Event{At: at, Kind: "x"})["origin"]).To(Equal("kafka"))
	})

	It("refuses a JSON column that does not encode, naming it", func() {
		e := recorder.NewEvent("x", at)
		e.Args = map[string]any{"f": func() {}}
		_, err := e.Values()
		Expect(err).To(MatchError(recorder.ErrEvent))
		Expect(err.Error()).To(ContainSubstring("args:"))
	})

	task := recorder.Task{
		ID: "t-1", Partition: recorder.Ptr[int64](3), Offset: recorder.Ptr[int64](42),
		Labels: map[string]string{"user": "ü", "a": "1"},
	}

	It("builds task_started with args, pid, labels and its metadata", func() {
		m := row(recorder.TaskStarted(at, task, recorder.Started{
			Args: []any{"--in", "x.json"}, PID: 77, Stdin: []byte("hello"),
			QueueWait: 1500 * time.Microsecond, SourceOffsets: map[string]any{"3": 42},
		}))
		Expect(m).To(HaveKeyWithValue("event", "task_started"))
		Expect(m).To(HaveKeyWithValue("task_id", "t-1"))
		Expect(m).To(HaveKeyWithValue("partition", int64(3)))
		Expect(m).To(HaveKeyWithValue("offset", int64(42)))
		Expect(m).To(HaveKeyWithValue("args", `["--in","x.json"]`))
		Expect(m).To(HaveKeyWithValue("pid", int64(77)))
		Expect(m).To(HaveKeyWithValue("labels", `{"a":"1","user":"ü"}`))
		Expect(m).To(HaveKeyWithValue("metadata", `{"queue_wait_ms":1.5,"source_offsets":{"3":42},"stdin":"hello","stdin_bytes":5}`))
		Expect(m).To(HaveKeyWithValue("origin", "kafka"))
	})

	It("builds task_completed with duration, exit code, output, size and spawn_ms", func() {
		m := row(recorder.TaskCompleted(at, task, recorder.Completed{
			Duration: 2500 * time.Millisecond, ExitCode: 0, Stdout: "out\n", Stderr: "",
			OutputTopic: "results", SpawnLatency: 3 * time.Millisecond,
		}))
		Expect(m).To(HaveKeyWithValue("event", "task_completed"))
		Expect(m).To(HaveKeyWithValue("duration", 2.5))
		Expect(m).To(HaveKeyWithValue("exit_code", int64(0)))
		Expect(m).To(HaveKeyWithValue("stdout", "out\n"))
		Expect(m).To(HaveKeyWithValue("stderr", ""))
		Expect(m).To(HaveKeyWithValue("stdout_size", int64(4)))
		Expect(m).To(HaveKeyWithValue("output_topic", "results"))
		Expect(m).To(HaveKeyWithValue("metadata", `{"spawn_ms":3.0}`))
		Expect(m).To(HaveKeyWithValue("pid", BeNil()))
	})

	It("builds task_failed with stdin and the exception in metadata", func() {
		web := recorder.Task{ID: "r-9", Origin: "webapp", ClientName: recorder.Ptr("ui"), RequestID: recorder.Ptr("req-1")}
		m := row(recorder.TaskFailed(at, web, recorder.Failed{
			Duration: time.Second, Stdin: []byte("in"), Exception: "boom", Traceback: "tb",
		}))
		Expect(m).To(HaveKeyWithValue("event", "task_failed"))
		Expect(m).To(HaveKeyWithValue("exit_code", BeNil()))
		Expect(m).To(HaveKeyWithValue("partition", BeNil()))
		Expect(m).To(HaveKeyWithValue("origin", "webapp"))
		Expect(m).To(HaveKeyWithValue("client_name", "ui"))
		Expect(m).To(HaveKeyWithValue("request_id", "req-1"))
		Expect(m).To(HaveKeyWithValue("metadata", `{"exception":"boom","stdin":"in","stdin_bytes":2,"traceback":"tb"}`))
	})

	It("builds an annotation, tied to a task or not", func() {
		Expect(row(recorder.Annotation(at, "t-1", map[string]any{"note": "slow disk"}))).To(SatisfyAll(
			HaveKeyWithValue("event", "annotation"), HaveKeyWithValue("task_id", "t-1"),
			HaveKeyWithValue("metadata", `{"note":"slow disk"}`)))
		Expect(row(recorder.Annotation(at, "", nil))).To(SatisfyAll(
			HaveKeyWithValue("task_id", BeNil()), HaveKeyWithValue("metadata", `{}`)))
	})

	It("builds a resource sample that omits what the platform lacks, never zeroes it", func() {
		m := row(recorder.ResourceSample(at, recorder.Resources{
			RSSBytes: recorder.Ptr[int64](1 << 20), CPUPercent: recorder.Ptr(12.0), OpenFDs: recorder.Ptr[int64](0),
		}))
		Expect(m).To(HaveKeyWithValue("event", "resource_sample"))
		Expect(m).To(HaveKeyWithValue("metadata", `{"cpu_percent":12.0,"open_fds":0,"rss_bytes":1048576}`))
	})

	It("builds a runtime stall with its duration and stacks", func() {
		m := row(recorder.RuntimeStall(at, 3*time.Second, []string{"goroutine 1"}))
		Expect(m).To(HaveKeyWithValue("event", "runtime_stall"))
		Expect(m).To(HaveKeyWithValue("duration", 3.0))
		Expect(m).To(HaveKeyWithValue("metadata", `{"stacks":["goroutine 1"],"stall_ms":3000.0}`))
	})

	DescribeTable("knows its task events",
		func(kind string, want bool) { Expect(recorder.NewEvent(kind, at).IsTask()).To(Equal(want)) },
		Entry(nil, "task_started", true), Entry(nil, "task_failed", true),
		Entry(nil, "annotation", false), Entry(nil, "task_", false), Entry(nil, "", false),
	)
})
