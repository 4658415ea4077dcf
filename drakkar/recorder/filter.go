// Filter: the recording-side knobs (store_events, event_min_duration_ms,
// output_min_duration_ms, store_output, store_stdin, stdin_max_bytes)
// applied to an event before it enters the buffer. They gate which rows
// exist and what they hold, never the table layout.

package recorder

import (
	"maps"
	"time"
	"unicode/utf8"
)

// Filter applies a Config's recording knobs. Its zero value admits nothing;
// build it with NewFilter. It is a value: safe to share between goroutines.
type Filter struct {
	storeEvents       bool
	eventMinDuration  time.Duration
	outputMinDuration time.Duration
	storeOutput       bool
	storeStdin        bool
	stdinMaxBytes     int
}

// NewFilter returns the filter of c's ui.recorder.* knobs.
func NewFilter(c Config) Filter {
	return Filter{
		storeEvents:       c.StoreEvents,
		eventMinDuration:  c.EventMinDuration,
		outputMinDuration: c.OutputMinDuration,
		storeOutput:       c.StoreOutput,
		storeStdin:        c.StoreStdin,
		stdinMaxBytes:     c.StdinMaxBytes,
	}
}

// Admit reports whether e is to be recorded, and trims e in place to what
// the knobs let through:
//   - store_events false: nothing is admitted.
//   - event_min_duration_ms: a task event whose duration is below it is not
//     admitted. Only events that carry a duration are judged (task_completed,
//     task_failed); a task_started row is written before its duration is
//     known and always passes, as do non-task events.
//   - output_min_duration_ms: a task event with a duration below it keeps
//     its row but args, stdout and stderr become NULL (stdout_size stays).
//   - store_output false: stdout and stderr become NULL on every task event.
//   - stdin (metadata "stdin" of task events): task_failed always keeps it;
//     other task events keep it only with store_stdin. Kept stdin is cut to
//     stdin_max_bytes (0 = no cap; the cut falls on a UTF-8 character
//     boundary) with "stdin_truncated": true; dropped stdin leaves only
//     "stdin_bytes". The metadata map is copied before it is changed.
func (f Filter) Admit(e *Event) bool {
	if !f.storeEvents {
		return false
	}
	if !e.IsTask() {
		return true
	}
	fast := func(min time.Duration) bool { return e.Duration != nil && *e.Duration < min }
	if fast(f.eventMinDuration) {
		return false
	}
	if fast(f.outputMinDuration) {
		e.Args, e.Stdout, e.Stderr = nil, nil, nil
	}
	if !f.storeOutput {
		e.Stdout, e.Stderr = nil, nil
	}
	f.trimStdin(e)
	return true
}

func (f Filter) trimStdin(e *Event) {
	stdin, ok := e.Metadata["stdin"].(string)
	if !ok {
		return
	}
	meta := maps.Clone(e.Metadata)
	e.Metadata = meta
	if !f.storeStdin && e.Kind != KindTaskFailed {
		delete(meta, "stdin")
		if _, has := meta["stdin_bytes"]; !has {
			meta["stdin_bytes"] = int64(len(stdin))
		}
		return
	}
	if f.stdinMaxBytes > 0 && len(stdin) > f.stdinMaxBytes {
		cut := f.stdinMaxBytes
		for cut > 0 && !utf8.RuneStart(stdin[cut]) {
			cut--
		}
		meta["stdin"] = stdin[:cut]
		meta["stdin_truncated"] = true
	}
}
