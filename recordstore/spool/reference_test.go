// The reference decoder the scanner is checked against: the store's JSON
// rules as the reference of package jsonxref checks them (no bytes that
// are not UTF-8, no lone surrogate escape, no name twice in one object),
// then encoding/json (UseNumber, json columns as RawMessage) followed by
// recordstore.NormalizeValue, with trailing data refused.

package spool_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/internal/jsonx/jsonxref"
)

// referenceDecode decodes one line the slow, obviously correct way.
func referenceDecode(kind *recordstore.Kind, line []byte) (recordstore.Values, error) {
	if !jsonxref.Rules(line) {
		return nil, errors.New("not one JSON value by the store's rules")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	vals := make(recordstore.Values, len(kind.Columns))
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := tok.(string)
		if seen[name] {
			return nil, errors.New("duplicate key")
		}
		seen[name] = true
		idx := kind.ColumnIndex(name)
		if idx < 0 {
			return nil, errors.New("unknown column")
		}
		col := kind.Columns[idx]
		if col.Type == recordstore.TypeJSON {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, err
			}
			v, err := recordstore.NormalizeValue(col, raw)
			if err != nil {
				return nil, err
			}
			vals[idx] = v
			continue
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if vals[idx], err = recordstore.NormalizeValue(col, v); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the object")
	}
	if err := kind.CheckRequired(vals); err != nil {
		return nil, err
	}
	return vals, nil
}
