// ParseEventJSON: an event given as one JSON object, the form the CLI takes
// events in (one per line).

package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fb46ecde/records/recordstore"
)

// ParseEventJSON is ParseEventJSONAt with the current time.
func ParseEventJSON(line []byte) (Event, error) {
	return ParseEventJSONAt(line, time.Now())
}

// ParseEventJSONAt parses one JSON object whose keys are event columns
// (EventColumns without id). event is required, a non-empty string. ts
// (REAL Unix seconds) is optional and defaults to now; it is taken to
// whole microseconds the way Python reads a float timestamp. dt is always
// derived from ts: a dt key is accepted (rows copied from a query carry
// one) and ignored. Integer columns take JSON integers, text columns
// strings, duration a number of seconds, args any JSON value, metadata an
// object, labels an object of strings; null is NULL for every nullable
// column. origin, when given, is a non-empty string. An unknown key, a
// wrong type, a missing event, or anything but one object is an ErrEvent
// naming the key.
func ParseEventJSONAt(line []byte, now time.Time) (Event, error) {
	fields, err := decodeObject(line)
	if err != nil {
		return Event{}, err
	}
	e := NewEvent("", now)
	if _, ok := fields["event"]; !ok {
		return Event{}, recordstore.Errorf(ErrEvent, "event: missing")
	}
	keys := make([]string, 0, len(fields))
	for key := range fields {
		keys = append(keys, key)
	}
	sort.Strings(keys) // the first bad key in name order is the one reported
	for _, key := range keys {
		raw := fields[key]
		set, ok := eventFields[key]
		if !ok {
			return Event{}, recordstore.Errorf(ErrEvent, "unknown key %s", recordstore.Quote(key))
		}
		if err := set(&e, raw); err != nil {
			return Event{}, recordstore.Errorf(ErrEvent, "%s: %s", key, err.Error())
		}
	}
	return e, nil
}

// decodeObject reads exactly one JSON object, numbers kept as json.Number.
// Text that is not UTF-8, and escapes that name no Unicode text (a lone
// surrogate, \u0000), are refused: encoding/json would store U+FFFD or a
// NUL in their place.
func decodeObject(line []byte) (map[string]json.RawMessage, error) {
	if !utf8.Valid(line) {
		return nil, recordstore.Errorf(ErrEvent, "not UTF-8 text")
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var fields map[string]json.RawMessage
	if err := d.Decode(&fields); err != nil || fields == nil {
		return nil, recordstore.Errorf(ErrEvent, "%s", jsonProblem(err))
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, recordstore.Errorf(ErrEvent, "more than one JSON value")
	}
	if err := checkEscapes(line); err != nil {
		return nil, recordstore.Errorf(ErrEvent, "%s", err.Error())
	}
	return fields, nil
}

// jsonProblem says why a line did not decode as one JSON object: it ends
// inside a value (truncated), it is no JSON at all (with the offset of the
// first bad byte), or it is valid JSON of another type (err nil: null).
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated JSON: the line ends inside a value"
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON at byte %d: %s", syn.Offset, syn.Error())
	default:
		return "not a JSON object"
	}
}

// checkEscapes refuses the \u escapes of line, valid JSON, that are no
// Unicode text: \u0000, and a surrogate that is not the first half of a
// pair followed by its second half. In JSON a backslash occurs only inside
// strings, so every backslash starts an escape.
func checkEscapes(line []byte) error {
	for i := 0; i < len(line); i++ {
		if line[i] != '\\' {
			continue
		}
		if i+1 < len(line) && line[i+1] != 'u' {
			i++ // \", \\, \n, ...: two bytes
			continue
		}
		r, ok := hex4(line, i)
		switch {
		case !ok:
			return errors.New("bad \\u escape")
		case r == 0:
			return errors.New("an escaped NUL (\\u0000) in text")
		case utf16.IsSurrogate(r):
			lo, ok := hex4(line, i+6)
			if r >= 0xdc00 || !ok || lo < 0xdc00 || lo > 0xdfff {
				return fmt.Errorf("a lone surrogate (\\u%04x) in text", r)
			}
			i += 11
		default:
			i += 5
		}
	}
	return nil
}

// hex4 reads the rune of the \uXXXX escape at line[i:].
func hex4(line []byte, i int) (rune, bool) {
	if i+6 > len(line) || line[i] != '\\' || line[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(line[i+2:i+6]), 16, 32)
	return rune(n), err == nil
}

var eventFields = map[string]func(e *Event, raw json.RawMessage) error{
	"ts": func(e *Event, raw json.RawMessage) error {
		f, err := number(raw)
		if err != nil {
			return err
		}
		if math.Abs(f) > 253402300799 { // beyond year 9999
			return errors.New("out of range")
		}
		e.At = timeOfTS(f)
		return nil
	},
	"dt": func(e *Event, raw json.RawMessage) error { return nil },
	"event": func(e *Event, raw json.RawMessage) error {
		s, err := text(raw)
		if err == nil && s == "" {
			err = errors.New("must be a non-empty string")
		}
		e.Kind = s
		return err
	},
	"partition":    intField(func(e *Event) **int64 { return &e.Partition }),
	"offset":       intField(func(e *Event) **int64 { return &e.Offset }),
	"exit_code":    intField(func(e *Event) **int64 { return &e.ExitCode }),
	"pid":          intField(func(e *Event) **int64 { return &e.PID }),
	"task_id":      textField(func(e *Event) **string { return &e.TaskID }),
	"stdout":       textField(func(e *Event) **string { return &e.Stdout }),
	"stderr":       textField(func(e *Event) **string { return &e.Stderr }),
	"output_topic": textField(func(e *Event) **string { return &e.OutputTopic }),
	"client_name":  textField(func(e *Event) **string { return &e.ClientName }),
	"request_id":   textField(func(e *Event) **string { return &e.RequestID }),
	"stdout_size": func(e *Event, raw json.RawMessage) error {
		n, err := integer(raw)
		e.StdoutSize = n
		return err
	},
	"origin": func(e *Event, raw json.RawMessage) error {
		s, err := text(raw)
		if err == nil && s == "" {
			err = errors.New("must be a non-empty string")
		}
		e.Origin = s
		return err
	},
	"duration": func(e *Event, raw json.RawMessage) error {
		if isNull(raw) {
			return nil
		}
		f, err := number(raw)
		if err == nil && (f < 0 || f*float64(time.Second) >= math.MaxInt64) {
			err = errors.New("out of range")
		}
		e.Duration = Ptr(time.Duration(f * float64(time.Second)))
		return err
	},
	"args": func(e *Event, raw json.RawMessage) error {
		if isNull(raw) {
			return nil
		}
		var v any
		if err := decode(raw, &v); err != nil {
			return errors.New("must be JSON")
		}
		if err := encodable(v); err != nil {
			return err
		}
		e.Args = v
		return nil
	},
	"metadata": func(e *Event, raw json.RawMessage) error {
		if isNull(raw) {
			return nil
		}
		var m map[string]any
		if err := decode(raw, &m); err != nil {
			return errors.New("must be a JSON object or null")
		}
		if err := encodable(m); err != nil {
			return err
		}
		e.Metadata = m
		return nil
	},
	"labels": func(e *Event, raw json.RawMessage) error {
		if isNull(raw) {
			return nil
		}
		var m map[string]any
		if err := decode(raw, &m); err != nil {
			return errors.New("must be a JSON object of strings or null")
		}
		labels := make(map[string]string, len(m))
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return errors.New("must be a JSON object of strings or null")
			}
			labels[k] = s
		}
		e.Labels = labels
		return nil
	},
}

func intField(field func(*Event) **int64) func(*Event, json.RawMessage) error {
	return func(e *Event, raw json.RawMessage) error {
		if isNull(raw) {
			return nil
		}
		n, err := integer(raw)
		*field(e) = Ptr(n)
		return err
	}
}

func textField(field func(*Event) **string) func(*Event, json.RawMessage) error {
	return func(e *Event, raw json.RawMessage) error {
		if isNull(raw) {
			return nil
		}
		s, err := text(raw)
		*field(e) = Ptr(s)
		return err
	}
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

func decode(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}

// encodable checks that a decoded value encodes as canonical JSON: a
// number beyond float64, like 1e400, does not.
func encodable(v any) error {
	if _, err := canonicalJSON(v); err != nil {
		return errors.New("a number is out of range")
	}
	return nil
}

func text(raw json.RawMessage) (string, error) {
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil {
		return "", errors.New("must be a string")
	}
	return s, nil
}

func integer(raw json.RawMessage) (int64, error) {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, errors.New("must be an integer")
	}
	return n, nil
}

func number(raw json.RawMessage) (float64, error) {
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, errors.New("must be a number")
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, errors.New("must be a finite number")
	}
	return f, nil
}
