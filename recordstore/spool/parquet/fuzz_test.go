// Fuzz target of the decoder (listed in FUZZ_TARGETS). Its seed corpus is
// in testdata/fuzz/FuzzParquetDecode/: small valid files of every page
// layout the codec reads.

package parquet_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	pq "github.com/fb46ecde/records/recordstore/spool/parquet"
)

// fuzzKind is allTypes, built without gomega.
func fuzzKind() *recordstore.Kind {
	k := &recordstore.Kind{
		Name: "events",
		Columns: []recordstore.Column{
			{Name: "id", Type: recordstore.TypeString},
			{Name: "s", Type: recordstore.TypeString},
			{Name: "i", Type: recordstore.TypeInteger},
			{Name: "n", Type: recordstore.TypeNumber},
			{Name: "b", Type: recordstore.TypeBool},
			{Name: "d", Type: recordstore.TypeDatetime},
			{Name: "j", Type: recordstore.TypeJSON},
			{Name: "r", Type: recordstore.TypeInteger, Required: true},
		},
		Key: []string{"id"},
	}
	if err := k.Validate(); err != nil {
		panic(err)
	}
	return k
}

// writeAll encodes rows, without gomega.
func writeAll(kind *recordstore.Kind, rows []recordstore.Values) ([]byte, error) {
	var buf bytes.Buffer
	enc, err := pq.Codec{}.NewEncoder(&buf, kind)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if err := enc.Write(r); err != nil {
			return nil, err
		}
	}
	err = enc.Close()
	return buf.Bytes(), err
}

// checkStored returns an error unless vals is a well-formed stored row of
// kind: the right Go type per column, canonical datetime and JSON text.
func checkStored(kind *recordstore.Kind, vals recordstore.Values) error {
	if len(vals) != len(kind.Columns) {
		return fmt.Errorf("%d values for %d columns", len(vals), len(kind.Columns))
	}
	for i, c := range kind.Columns {
		v := vals[i]
		if v == nil {
			continue
		}
		var ok bool
		switch c.Type {
		case recordstore.TypeString:
			_, ok = v.(string)
		case recordstore.TypeInteger:
			_, ok = v.(int64)
		case recordstore.TypeNumber:
			_, ok = v.(float64)
		case recordstore.TypeBool:
			n, isInt := v.(int64)
			ok = isInt && (n == 0 || n == 1)
		case recordstore.TypeDatetime:
			s, isText := v.(string)
			_, err := time.Parse(recordstore.DatetimeLayout, s)
			ok = isText && err == nil && len(s) == len(recordstore.DatetimeLayout)
		case recordstore.TypeJSON:
			s, isText := v.(string)
			c, err := recordstore.CompactJSON([]byte(s))
			ok = isText && err == nil && c == s && json.Valid([]byte(s))
		}
		if !ok {
			return fmt.Errorf("column %s (%s): bad stored value %#v", c.Name, c.Type, v)
		}
	}
	return kind.CheckRequired(vals)
}

// FuzzParquetDecode feeds arbitrary bytes to the decoder. It must never
// panic, must answer with an ErrInvalid or ErrCapacity error or with rows
// that are well-formed stored values, and rows it accepts must survive a
// round trip through the encoder unchanged.
func FuzzParquetDecode(f *testing.F) {
	kind := fuzzKind()
	seed, err := writeAll(kind, []recordstore.Values{
		{"a", "x", int64(-1), 1.5, int64(1), "2024-01-02T03:04:05.123456Z", `{"k":[1,null]}`, int64(9)},
		{"b", nil, nil, nil, nil, nil, nil, int64(0)},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := spool.Limits{MaxRows: 10_000, MaxBytes: 8 << 20}
		rows, err := decodeAll(kind, data, lim)
		if err != nil {
			if !errors.Is(err, recordstore.ErrInvalid) && !errors.Is(err, recordstore.ErrCapacity) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		for i, r := range rows {
			if err := checkStored(kind, r); err != nil {
				t.Fatalf("row %d: %v", i, err)
			}
		}
		again, err := writeAll(kind, rows)
		if err != nil {
			t.Fatalf("re-encode accepted rows: %v", err)
		}
		back, err := decodeAll(kind, again, lim)
		if err != nil {
			t.Fatalf("decode re-encoded rows: %v", err)
		}
		if len(rows) > 0 && !reflect.DeepEqual(back, rows) {
			t.Fatalf("round trip changed the rows:\n%#v\n%#v", rows, back)
		}
	})
}
