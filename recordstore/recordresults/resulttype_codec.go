// Typed result types: a struct value to a row, and a record back to a
// struct value.

package recordresults

import (
	"encoding/json"
	"reflect"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// Row returns v as a row of the type's kind: nil pointers, maps and
// slices as nulls, json
// columns encoded with encoding/json. The row is checked when appended.
func (t *ResultType[T]) Row(v *T) (recordstore.Row, error) {
	rv := reflect.ValueOf(v).Elem()
	row := make(recordstore.Row, len(t.fields))
	for _, f := range t.fields {
		fv := rv.FieldByIndex(f.index)
		if f.ptr {
			if fv.IsNil() {
				row[f.col.Name] = nil
				continue
			}
			fv = fv.Elem()
		}
		if (fv.Kind() == reflect.Map || fv.Kind() == reflect.Slice) && fv.IsNil() {
			row[f.col.Name] = nil // a nil map, slice or json.RawMessage is null
			continue
		}
		val, err := f.encode(fv)
		if err != nil {
			return nil, recordstore.Invalidf("column %s: %s", f.col.Name, err)
		}
		row[f.col.Name] = val
	}
	return row, nil
}

// encode turns a (non-pointer) field value into the value a row holds.
func (f *typedField) encode(fv reflect.Value) (any, error) {
	if f.asJSON {
		b, err := json.Marshal(fv.Interface())
		if err != nil {
			return nil, err
		}
		return json.RawMessage(b), nil
	}
	switch fv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fv.Int(), nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return int64(fv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return fv.Float(), nil
	case reflect.String:
		return fv.String(), nil
	case reflect.Bool:
		return fv.Bool(), nil
	}
	return fv.Interface(), nil // time.Time, json.RawMessage
}

// Decode returns a record of the type's kind as a T. A value that does
// not fit its field (an integer out of an int8's range, json that does not
// decode into the field) is ErrInvalid.
func (t *ResultType[T]) Decode(rec recordstore.Record) (T, error) {
	var out T
	rv := reflect.ValueOf(&out).Elem()
	for _, f := range t.fields {
		v := rec.Values[f.col.Name]
		if v == nil {
			continue
		}
		fv := rv.FieldByIndex(f.index)
		if f.ptr {
			p := reflect.New(fv.Type().Elem())
			fv.Set(p)
			fv = p.Elem()
		}
		if err := f.decode(fv, v); err != nil {
			return out, recordstore.Invalidf("row %d column %s: %s", rec.Seq, f.col.Name, err)
		}
	}
	return out, nil
}

// decode sets a (non-pointer) field from a record's reader-form value.
func (f *typedField) decode(fv reflect.Value, v any) error {
	if f.asJSON {
		raw, _ := v.(json.RawMessage)
		return json.Unmarshal(raw, fv.Addr().Interface())
	}
	switch x := v.(type) {
	case int64:
		switch fv.Kind() {
		case reflect.Uint8, reflect.Uint16, reflect.Uint32:
			if x < 0 || fv.OverflowUint(uint64(x)) {
				return recordstore.Invalidf("%d does not fit %s", x, fv.Type())
			}
			fv.SetUint(uint64(x))
			return nil
		}
		if fv.OverflowInt(x) {
			return recordstore.Invalidf("%d does not fit %s", x, fv.Type())
		}
		fv.SetInt(x)
	case float64:
		fv.SetFloat(x)
	case bool:
		fv.SetBool(x)
	case string:
		fv.SetString(x)
	case time.Time:
		fv.Set(reflect.ValueOf(x))
	case json.RawMessage:
		fv.SetBytes(append([]byte(nil), x...))
	default:
		return recordstore.Invalidf("unexpected stored value %T", v)
	}
	return nil
}
