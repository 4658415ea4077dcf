// Specs and fuzz target of ParseEventJSON.

package recorder_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("ParseEventJSON", func() {
	now := time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC)

	It("reads every column and stores what it read", func() {
		e, err := recorder.ParseEventJSONAt([]byte(`{"ts":1791778323.456789,"dt":"ignored","event":"task_completed",
			"partition":3,"offset":42,"task_id":"t-1","args":["a",1.0,{"b":null}],"stdout_size":4,
			"stdout":"out\n","stderr":null,"exit_code":-1,"duration":2.5,"output_topic":"res",
			"metadata":{"z":1,"a":"\u2028"},"pid":77,"labels":{"k":"v"},"origin":"webapp",
			"client_name":"ui","request_id":"r"}`), now)
		Expect(err).NotTo(HaveOccurred())
		Expect(row(e)).To(Equal(map[string]any{
			"ts": atTS, "dt": atDT, "event": "task_completed", "partition": int64(3), "offset": int64(42),
			"task_id": "t-1", "args": `["a",1.0,{"b":null}]`, "stdout_size": int64(4), "stdout": "out\n",
			"stderr": nil, "exit_code": int64(-1), "duration": 2.5, "output_topic": "res",
			"metadata": "{\"a\":\"\u2028\",\"z\":1}", "pid": int64(77), "labels": `{"k":"v"}`,
			"origin": "webapp", "client_name": "ui", "request_id": "r",
		}))
	})

	It("sets ts to now when it is not given, and origin to kafka", func() {
		e, err := recorder.ParseEventJSONAt([]byte(`{"event":"annotation"}`), now)
		Expect(err).NotTo(HaveOccurred())
		m := row(e)
		Expect(m).To(HaveKeyWithValue("ts", float64(now.Unix())+0.678901))
		Expect(m).To(HaveKeyWithValue("dt", "2026-01-02 03:04:05.678"))
		Expect(m).To(HaveKeyWithValue("origin", "kafka"))
	})

	It("derives dt from ts as Python does, the fraction rounded to the microsecond", func() {
		e, err := recorder.ParseEventJSONAt([]byte(`{"event":"x","ts":1767322800.9999996}`), now)
		Expect(err).NotTo(HaveOccurred())
		Expect(row(e)).To(HaveKeyWithValue("dt", "2026-01-02 03:00:01.000"))
	})

	DescribeTable("refuses bad input with an error naming the key",
		func(line, want string) {
			_, err := recorder.ParseEventJSONAt([]byte(line), now)
			Expect(err).To(MatchError(recorder.ErrEvent))
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("a truncated line", `{"event":`, "truncated JSON: the line ends inside a value"),
		Entry("a line cut inside a string", `{"event":"task_sta`, "truncated JSON"),
		Entry("not JSON", `{event}`, "not valid JSON at byte 2: invalid character 'e'"),
		Entry("an array", `["event"]`, "not a JSON object"),
		Entry("null", `null`, "not a JSON object"),
		Entry("two objects", `{"event":"x"} {}`, "more than one JSON value"),
		Entry("missing event", `{"ts":1}`, "event: missing"),
		Entry("empty event", `{"event":""}`, "event: must be a non-empty string"),
		Entry("event not a string", `{"event":1}`, "event: must be a string"),
		Entry("unknown key", `{"event":"x","colour":1}`, `unknown key "colour"`),
		Entry("id is assigned by the store", `{"event":"x","id":1}`, `unknown key "id"`),
		Entry("ts a string", `{"event":"x","ts":"1"}`, "ts: must be a number"),
		Entry("ts out of range", `{"event":"x","ts":1e300}`, "ts: out of range"),
		Entry("partition a float", `{"event":"x","partition":1.5}`, "partition: must be an integer"),
		Entry("offset a string", `{"event":"x","offset":"7"}`, "offset: must be an integer"),
		Entry("pid beyond int64", `{"event":"x","pid":9223372036854775808}`, "pid: must be an integer"),
		Entry("stdout_size null", `{"event":"x","stdout_size":null}`, "stdout_size: must be an integer"),
		Entry("task_id a number", `{"event":"x","task_id":5}`, "task_id: must be a string"),
		Entry("origin null", `{"event":"x","origin":null}`, "origin: must be a string"),
		Entry("origin empty", `{"event":"x","origin":""}`, "origin: must be a non-empty string"),
		Entry("duration negative", `{"event":"x","duration":-1}`, "duration: out of range"),
		Entry("duration a bool", `{"event":"x","duration":true}`, "duration: must be a number"),
		Entry("metadata an array", `{"event":"x","metadata":[1]}`, "metadata: must be a JSON object"),
		Entry("labels with a null", `{"event":"x","labels":{"a":null}}`, "labels: must be a JSON object of strings"),
		Entry("args with a number beyond float64", `{"event":"x","args":[1e400]}`, "args: a number is out of range"),
		Entry("metadata with a number beyond float64", `{"event":"x","metadata":{"n":-1e999}}`, "metadata: a number is out of range"),
		Entry("labels with a number", `{"event":"x","labels":{"a":1}}`, "labels: must be a JSON object of strings"),
		Entry("invalid UTF-8 in a string", "{\"event\":\"a\xff\xfe\"}", "not UTF-8 text"),
		Entry("invalid UTF-8 in a key", "{\"event\":\"a\",\"\xc3\":1}", "not UTF-8 text"),
		Entry("a lone high surrogate", `{"event":"a\ud800"}`, `a lone surrogate (\ud800)`),
		Entry("a high surrogate before a non-surrogate", `{"event":"x","stdout":"\ud800\u0041"}`, `a lone surrogate (\ud800)`),
		Entry("a lone low surrogate in args", `{"event":"x","args":["\udc00"]}`, `a lone surrogate (\udc00)`),
		Entry("an escaped NUL", `{"event":"x","stderr":"a\u0000b"}`, `an escaped NUL (\u0000)`),
		Entry("an escaped NUL in a metadata key", `{"event":"x","metadata":{"\u0000":1}}`, `an escaped NUL (\u0000)`),
	)
})

// FuzzParseEventJSON checks that any line either parses into an event whose
// values encode, or fails with ErrEvent; never a panic or another error.
func FuzzParseEventJSON(f *testing.F) {
	f.Add([]byte(`{"event":"task_started","ts":1.5,"args":[1,"x"],"metadata":{"a":null},"labels":{"k":"v"}}`))
	f.Add([]byte(`{"event":"x","partition":-1,"duration":0.001,"origin":"webapp"}`))
	f.Add([]byte(`{"event":"x","ts":1e300}`))
	f.Add([]byte(`{}`))
	f.Add([]byte("{\"event\":\"a\xff\xfe\"}"))
	f.Add([]byte("{\"event\":\"\xed\xa0\x80\"}")) // a surrogate encoded as UTF-8
	f.Add([]byte(`{"event":"a\ud800"}`))
	f.Add([]byte(`{"event":"\ud83d\ude00","stdout":"\\u0000"}`))
	f.Add([]byte(`{"event":"x","metadata":{"k":"\u0000"}}`))
	now := time.Unix(1700000000, 0)
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := recorder.ParseEventJSONAt(line, now)
		if err != nil {
			if !errors.Is(err, recorder.ErrEvent) {
				t.Fatalf("error is not ErrEvent: %v", err)
			}
			return
		}
		vals, err := e.Values()
		if err != nil {
			t.Fatalf("parsed event does not encode: %v", err)
		}
		for i, v := range vals {
			if s, ok := v.(string); ok && !faithfulText(line, s) {
				t.Fatalf("column %d holds text the line did not give: %q", i+1, s)
			}
		}
		if len(vals) != len(recorder.EventColumns)-1 || vals[2] == "" {
			t.Fatalf("bad values %v", vals)
		}
	})
}

// faithfulText reports whether s, text parsed from line, is UTF-8 without
// NUL, and holds U+FFFD only when line gave one (raw or escaped): never a
// replacement for bytes or escapes that were no text.
func faithfulText(line []byte, s string) bool {
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return false
	}
	if !strings.ContainsRune(s, utf8.RuneError) {
		return true
	}
	low := bytes.ToLower(line)
	return bytes.Contains(low, []byte("\\ufffd")) || bytes.Contains(line, []byte("\xef\xbf\xbd"))
}
