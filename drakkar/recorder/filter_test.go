// Specs of Filter: one group per recording knob.

package recorder_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/recorder"
)

// filterWith returns the filter of the default config changed by sets.
func filterWith(sets ...string) recorder.Filter {
	c := valid()
	for _, kv := range sets {
		k, v, _ := strings.Cut(kv, "=")
		Expect(c.Set(k, v)).To(Succeed())
	}
	Expect(c.Validate()).To(Succeed())
	return recorder.NewFilter(c)
}

func completed(d time.Duration) recorder.Event {
	return recorder.TaskCompleted(at, recorder.Task{ID: "t"}, recorder.Completed{
		Args: []any{"a"}, Duration: d, Stdout: "out", Stderr: "err",
	})
}

func started(stdin string) recorder.Event {
	return recorder.TaskStarted(at, recorder.Task{ID: "t"}, recorder.Started{Args: []any{"a"}, Stdin: []byte(stdin)})
}

func failed(stdin string) recorder.Event {
	return recorder.TaskFailed(at, recorder.Task{ID: "t"}, recorder.Failed{Duration: time.Second, Stdin: []byte(stdin), Exception: "x"})
}

var _ = Describe("Filter", func() {
	It("admits nothing when store_events is off", func() {
		f := filterWith("ui.recorder.store_events=false")
		for _, e := range []recorder.Event{completed(time.Hour), recorder.Annotation(at, "", nil)} {
			Expect(f.Admit(&e)).To(BeFalse())
		}
	})

	It("admits nothing from its zero value", func() {
		e := recorder.Annotation(at, "", nil)
		Expect(recorder.Filter{}.Admit(&e)).To(BeFalse())
	})

	DescribeTable("event_min_duration_ms drops only task events that are faster",
		func(e recorder.Event, admitted bool) {
			Expect(filterWith("ui.recorder.event_min_duration_ms=100").Admit(&e)).To(Equal(admitted))
		},
		Entry("a faster completed task", completed(99*time.Millisecond), false),
		Entry("a completed task exactly at the threshold", completed(100*time.Millisecond), true),
		Entry("a faster failed task", recorder.TaskFailed(at, recorder.Task{ID: "t"}, recorder.Failed{Duration: time.Millisecond}), false),
		Entry("a started task, whose duration is not known yet", started(""), true),
		Entry("a short runtime stall, not a task event", recorder.RuntimeStall(at, time.Millisecond, nil), true),
		Entry("an annotation", recorder.Annotation(at, "t", nil), true),
	)

	It("persists everything with the default event_min_duration_ms of 0", func() {
		e := completed(0)
		Expect(filterWith().Admit(&e)).To(BeTrue())
	})

	Describe("output_min_duration_ms", func() {
		It("keeps the row of a faster task but drops args, stdout and stderr, not stdout_size", func() {
			e := completed(499 * time.Millisecond)
			Expect(filterWith().Admit(&e)).To(BeTrue())
			m := row(e)
			Expect(m["args"]).To(BeNil())
			Expect(m["stdout"]).To(BeNil())
			Expect(m["stderr"]).To(BeNil())
			Expect(m["stdout_size"]).To(Equal(int64(3)))
		})

		It("keeps the output of a task as slow as the threshold", func() {
			e := completed(500 * time.Millisecond)
			Expect(filterWith().Admit(&e)).To(BeTrue())
			Expect(row(e)).To(SatisfyAll(HaveKeyWithValue("args", `["a"]`), HaveKeyWithValue("stdout", "out")))
		})
	})

	It("store_output=false drops stdout and stderr of every task event but keeps args", func() {
		e := completed(time.Hour)
		Expect(filterWith("ui.recorder.store_output=false").Admit(&e)).To(BeTrue())
		Expect(row(e)).To(SatisfyAll(HaveKeyWithValue("stdout", BeNil()), HaveKeyWithValue("stderr", BeNil()),
			HaveKeyWithValue("args", `["a"]`), HaveKeyWithValue("stdout_size", int64(3))))
	})

	Describe("stdin", func() {
		meta := func(e recorder.Event) map[string]any {
			return e.Metadata
		}

		It("is replaced by its size marker on task_started when store_stdin is off", func() {
			e := started("abc")
			Expect(filterWith().Admit(&e)).To(BeTrue())
			Expect(meta(e)).NotTo(HaveKey("stdin"))
			Expect(meta(e)).To(HaveKeyWithValue("stdin_bytes", int64(3)))
		})

		It("is kept on task_started when store_stdin is on", func() {
			e := started("abc")
			Expect(filterWith("ui.recorder.store_stdin=true").Admit(&e)).To(BeTrue())
			Expect(meta(e)).To(HaveKeyWithValue("stdin", "abc"))
			Expect(meta(e)).NotTo(HaveKey("stdin_truncated"))
		})

		It("is capped at stdin_max_bytes and flagged as truncated", func() {
			e := started("abcdef")
			Expect(filterWith("ui.recorder.store_stdin=true", "ui.recorder.stdin_max_bytes=4").Admit(&e)).To(BeTrue())
			Expect(meta(e)).To(HaveKeyWithValue("stdin", "abcd"))
			Expect(meta(e)).To(HaveKeyWithValue("stdin_truncated", true))
			Expect(meta(e)).To(HaveKeyWithValue("stdin_bytes", int64(6)))
		})

		It("is cut on a character boundary", func() {
			e := started("aé")
			Expect(filterWith("ui.recorder.store_stdin=true", "ui.recorder.stdin_max_bytes=2").Admit(&e)).To(BeTrue())
			Expect(meta(e)).To(HaveKeyWithValue("stdin", "a"))
		})

		It("is not capped with stdin_max_bytes 0", func() {
			big := strings.Repeat("x", 100000)
			e := started(big)
			Expect(filterWith("ui.recorder.store_stdin=true", "ui.recorder.stdin_max_bytes=0").Admit(&e)).To(BeTrue())
			Expect(meta(e)).To(HaveKeyWithValue("stdin", big))
		})

		It("is always kept, capped, on task_failed even with store_stdin off", func() {
			e := failed("abcdef")
			Expect(filterWith("ui.recorder.stdin_max_bytes=2").Admit(&e)).To(BeTrue())
			Expect(meta(e)).To(HaveKeyWithValue("stdin", "ab"))
			Expect(meta(e)).To(HaveKeyWithValue("stdin_truncated", true))
		})

		It("changes a copy of the metadata, never the caller's map", func() {
			e := started("abc")
			shared := e.Metadata
			Expect(filterWith().Admit(&e)).To(BeTrue())
			Expect(shared).To(HaveKeyWithValue("stdin", "abc"))
		})
	})
})
