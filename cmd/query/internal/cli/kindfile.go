// Reading kind files ({"kinds": [...]}): errors that say which kind (by
// position and name), which field and what was expected.

package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/fb46ecde/records/recordstore"
)

// utf8BOM is the byte order mark some editors put at the start of a UTF-8
// file. A kind file may start with one: it is skipped.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readKindFile reads and checks the shape of a kind file: one JSON object
// with a non-empty "kinds" list, no unknown fields, no kind named twice. A
// leading UTF-8 byte order mark is skipped. Its errors are ErrInvalid and
// name the file, and the kind (its position from 1, and its name) and the
// field at fault.
func (a *app) readKindFile(src string) (recordstore.KindFile, error) {
	var file recordstore.KindFile
	data, name, err := a.readInput(src)
	if err != nil {
		return file, err
	}
	kinds, err := decodeKindFile(data)
	if err != nil {
		return file, recordstore.Errorf(recordstore.ErrInvalid, "kind file %s: %w", name, err)
	}
	file.Kinds = kinds
	return file, nil
}

// decodeKindFile decodes the kinds of a kind file's text (see
// readKindFile); its errors do not name the file.
func decodeKindFile(data []byte) ([]recordstore.Kind, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New(`empty input (want {"kinds": [...]})`)
	}
	var top struct {
		Kinds []json.RawMessage `json:"kinds"`
	}
	if err := decodeStrict(data, &top); err != nil {
		return nil, describeJSONError(err, "")
	}
	if len(top.Kinds) == 0 {
		return nil, errors.New(`no kinds (want {"kinds": [...]})`)
	}
	kinds := make([]recordstore.Kind, len(top.Kinds))
	first := map[string]int{}
	for i, raw := range top.Kinds {
		if err := decodeKind(raw, &kinds[i]); err != nil {
			return nil, fmt.Errorf("kind %d%s: %w", i+1, nameLabel(raw), err)
		}
		name := kinds[i].Name
		if j, ok := first[name]; ok {
			return nil, fmt.Errorf("kinds %d and %d are both named %s", j+1, i+1, recordstore.Quote(name))
		}
		first[name] = i
	}
	return kinds, nil
}

// decodeStrict decodes exactly one JSON value of data into v, refusing
// unknown fields and anything after the value.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("extra data after the JSON object")
	}
	return nil
}

// decodeKind decodes one kind of the file. When that fails, the parts
// that can be told apart (each column, lww, retention) are decoded alone
// to say which one is at fault.
func decodeKind(raw json.RawMessage, k *recordstore.Kind) error {
	err := decodeStrict(raw, k)
	if err == nil {
		return nil
	}
	var parts struct {
		Columns   []json.RawMessage `json:"columns"`
		LWW       json.RawMessage   `json:"lww"`
		Retention json.RawMessage   `json:"retention"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		for j, c := range parts.Columns {
			var col recordstore.Column
			if cerr := decodeStrict(c, &col); cerr != nil {
				return fmt.Errorf("column %d%s: %w", j+1, nameLabel(c), describeJSONError(cerr, ""))
			}
		}
		if perr := decodePart(parts.LWW, &recordstore.LWW{}); perr != nil {
			return describeJSONError(perr, "lww")
		}
		if perr := decodePart(parts.Retention, &recordstore.Retention{}); perr != nil {
			return describeJSONError(perr, "retention")
		}
	}
	return describeJSONError(err, "")
}

// decodePart decodes one optional part of a kind (nothing when absent).
func decodePart(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return decodeStrict(raw, v)
}

// nameLabel is ` ("name")` for a kind or column object with a string
// name, else "".
func nameLabel(raw json.RawMessage) string {
	var probe struct {
		Name any `json:"name"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return ""
	}
	if s, ok := probe.Name.(string); ok {
		return " (" + recordstore.Quote(s) + ")"
	}
	return ""
}

// describeJSONError turns a decoding error into a message that names the
// field (inside part, when set) and what was expected, and quotes no more
// than a bounded piece of the input. Errors of the kind's own checks (a
// ttl that is not text) pass through.
func describeJSONError(err error, part string) error {
	field := func(f string) string {
		switch {
		case part != "" && f != "":
			return part + "." + f
		case part != "":
			return part
		}
		return f
	}
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, recordstore.ErrInvalid):
		if part != "" {
			return fmt.Errorf("%s: %w", part, err)
		}
		return err
	case errors.As(err, &syn):
		return fmt.Errorf("not valid JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return errors.New("the JSON ends early")
	case errors.As(err, &typ):
		f := field(typ.Field)
		if f == "" {
			return fmt.Errorf("want %s, got %s", jsonWant(typ.Type), clipWord(typ.Value))
		}
		return fmt.Errorf("field %s: want %s, got %s", f, jsonWant(typ.Type), clipWord(typ.Value))
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, `json: unknown field "`); ok {
		name = strings.TrimSuffix(name, `"`)
		if part != "" {
			return fmt.Errorf("%s: unknown field %s", part, recordstore.Quote(name))
		}
		return fmt.Errorf("unknown field %s", recordstore.Quote(name))
	}
	return errors.New(clipWord(strings.TrimPrefix(msg, "json: ")))
}

// jsonWant says in JSON's words what a Go type reads.
func jsonWant(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	}
	return t.String()
}

// clipWord cuts text longer than 200 bytes, saying how long it was.
func clipWord(s string) string {
	if len(s) <= 200 {
		return s
	}
	return recordstore.Quote(s)
}
