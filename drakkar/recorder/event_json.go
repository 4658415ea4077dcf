// ParseEventJSON: an event given as one JSON object, the form the CLI takes
// events in (one per line).

package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"sort"
	"strconv"
	"time"

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
func decodeObject(line []byte) (map[string]json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var fields map[string]json.RawMessage
	if err := d.Decode(&fields); err != nil || fields == nil {
		return nil, recordstore.Errorf(ErrEvent, "not a JSON object")
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, recordstore.Errorf(ErrEvent, "more than one JSON value")
	}
	return fields, nil
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
