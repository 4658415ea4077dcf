// The JSON columns' bytes: a Go value written as canonical JSON
// (dbfiles.CanonicalJSON) after the values only Go has are turned into
// JSON ones, and REAL ts read back to the microsecond it was written from.

package recorder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// canonicalJSON encodes v as canonical JSON (drakkar-notes §4: sorted keys,
// no spaces, raw UTF-8 including U+2028/U+2029, no HTML escaping, floats
// in Python's repr). Before dbfiles.CanonicalJSON writes it, the values
// only Go has are made JSON values: a time.Time becomes its canonical
// datetime text, a json.RawMessage the value it holds (its numbers kept as
// written), text that is not UTF-8 has U+FFFD for each bad byte, and any
// other value dbfiles does not take (a struct, a map of structs) goes
// through encoding/json first — so a float inside a struct is written as
// encoding/json writes it (100, not 100.0). NaN and infinities are
// refused.
func canonicalJSON(v any) ([]byte, error) {
	p, err := jsonValue(v)
	if err != nil {
		return nil, err
	}
	return dbfiles.CanonicalJSON(p)
}

// jsonValue returns v as a value dbfiles.CanonicalJSON takes.
func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, json.Number, float64, float32, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64:
		return x, nil
	case string:
		return strings.ToValidUTF8(x, "\uFFFD"), nil
	case time.Time:
		return dbfiles.FormatTime(x), nil
	case json.RawMessage:
		return decodeJSON(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			p, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[strings.ToValidUTF8(k, "\uFFFD")] = p
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			p, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = p
		}
		return out, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return decodeJSON(raw)
}

// decodeJSON decodes one JSON value, numbers kept as written.
func decodeJSON(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return jsonValue(v)
}

// timeOfTS turns REAL Unix seconds back into a time the way Python's
// datetime.fromtimestamp does: the fraction times 10⁶, rounded half to
// even. A ts written from a microsecond reading comes back to it.
func timeOfTS(ts float64) time.Time {
	sec := math.Floor(ts)
	us := math.RoundToEven((ts - sec) * 1e6)
	return time.Unix(int64(sec), int64(us)*1000).UTC()
}
