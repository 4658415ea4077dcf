// Typed result types: a kind declared from a Go struct's tags, appended
// and scanned as values of that struct.

package recordresults

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
)

// TagName is the struct tag a result type is declared with.
//
// A field's tag is `records:"COLUMN[,OPTION...]"` (COLUMN "" keeps the field
// name; "-" leaves the field out). Options: type=string|integer|number|
// bool|datetime|json (default from the Go type), key (a key column, in
// field order), required, time (the kind's time column), search (a search
// column of q), index (a one-column index: sortable), version and
// tiebreak (the lww columns). A blank field `_ struct{}` carries the kind's
// own options: kind=NAME (required), onConflict=skip|replace|lww,
// retention=rows/DURATION or stream/DURATION.
//
// Go types map to column types: string → string; signed integers and
// uint8-uint32 → integer; float32/float64 → number; bool → bool;
// time.Time → datetime; json.RawMessage, maps, slices and structs → json
// (encoded with encoding/json). A pointer to any of these is a nullable
// column (nil is null); a null read into a non-pointer field leaves its
// zero value.
const TagName = "records"

// ResultType is a kind declared from the struct type T, with typed
// appends and scans. Build it with RegisterResultType. It is safe for
// concurrent use.
type ResultType[T any] struct {
	st     *records.Store
	rd     *Reader
	kind   recordstore.Kind
	search []string
	fields []typedField // by kind column
}

// typedField is a struct field bound to a kind column.
type typedField struct {
	index  []int // reflect field index
	col    recordstore.Column
	ptr    bool // the field is a pointer (nullable)
	asJSON bool // encoded with encoding/json (json columns that are not RawMessage)
}

// RegisterResultType checks T's tags, declares its kind on st (through the
// owner or the spool, as every write), and gives its search columns to rd
// (nil: a new Reader over st's backend). A tag that does not describe a
// valid kind is ErrInvalid and nothing is declared; a kind that conflicts
// with the stored declaration is the store's error (schema_conflict).
func RegisterResultType[T any](ctx context.Context, st *records.Store, rd *Reader) (*ResultType[T], error) {
	k, search, fields, err := resultKind[T]()
	if err != nil {
		return nil, err
	}
	if _, err := st.DeclareKinds(ctx, []recordstore.Kind{k}, owner.WriteOptions{}); err != nil {
		return nil, fmt.Errorf("register result type %s: %w", k.Name, err)
	}
	if rd == nil {
		rd = NewReader(st.Backend())
	}
	if len(search) > 0 {
		if err := rd.SetSearchColumns(ctx, k.Name, search...); err != nil {
			return nil, fmt.Errorf("register result type %s: %w", k.Name, err)
		}
	}
	return &ResultType[T]{st: st, rd: rd, kind: k, search: search, fields: fields}, nil
}

// ResultKind returns the kind T's tags declare (and its search columns),
// checked as RegisterResultType checks it, without a store.
func ResultKind[T any]() (recordstore.Kind, []string, error) {
	k, search, _, err := resultKind[T]()
	return k, search, err
}

// Kind returns the declared kind.
func (t *ResultType[T]) Kind() recordstore.Kind { return t.kind.Clone() }

// Reader returns the Reader the type's search columns were given to.
func (t *ResultType[T]) Reader() *Reader { return t.rd }

// Append appends rows to stream in one all-or-nothing append through the
// store (the owner applies it, any other process spools it and waits; see
// owner.Store.Append). A value that does not fit its column is ErrInvalid
// and nothing is written.
func (t *ResultType[T]) Append(ctx context.Context, stream string, rows []T) (owner.Appended, error) {
	out := make([]recordstore.Row, len(rows))
	for i := range rows {
		r, err := t.Row(&rows[i])
		if err != nil {
			return owner.Appended{}, fmt.Errorf("append to %s: row %d: %w", stream, i+1, err)
		}
		out[i] = r
	}
	return t.st.Append(ctx, stream, t.kind.Name, out, owner.AppendOptions{})
}

// Scan returns the rows of q decoded as T (see Reader.Rows); a stream of
// another kind is ErrInvalid.
func (t *ResultType[T]) Scan(ctx context.Context, q Query) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		if m, err := t.rd.b.Meta(ctx, q.Stream); err == nil && m.Kind != t.kind.Name {
			yield(zero, recordstore.Invalidf("stream %s is of kind %s, not %s", q.Stream, m.Kind, t.kind.Name))
			return
		}
		for rec, err := range t.rd.Rows(ctx, q) {
			if err != nil {
				yield(zero, err)
				return
			}
			v, err := t.Decode(rec)
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}

// resultKind builds the kind of T from its tags.
func resultKind[T any]() (recordstore.Kind, []string, []typedField, error) {
	rt := reflect.TypeFor[T]()
	if rt.Kind() != reflect.Struct {
		return recordstore.Kind{}, nil, nil, recordstore.Invalidf("result type %s: want a struct", rt)
	}
	var (
		k       recordstore.Kind
		search  []string
		fields  []typedField
		lww     recordstore.LWW
		sawKind bool
	)
	for i := range rt.NumField() {
		sf := rt.Field(i)
		tag, tagged := sf.Tag.Lookup(TagName)
		if sf.Name == "_" {
			if tagged {
				if err := kindOptions(&k, tag); err != nil {
					return k, nil, nil, recordstore.Invalidf("result type %s: %s", rt, recordstore.Message(err))
				}
				sawKind = true
			}
			continue
		}
		if !sf.IsExported() || tag == "-" {
			continue
		}
		f, opts, err := fieldColumn(sf, tag)
		if err != nil {
			return k, nil, nil, recordstore.Invalidf("result type %s: field %s: %s", rt, sf.Name, recordstore.Message(err))
		}
		name := f.col.Name
		for _, o := range opts {
			switch o {
			case "key":
				k.Key = append(k.Key, name)
			case "time":
				if k.TimeColumn != "" {
					return k, nil, nil, recordstore.Invalidf("result type %s: two time columns, %s and %s", rt, k.TimeColumn, name)
				}
				k.TimeColumn = name
			case "search":
				search = append(search, name)
			case "index":
				k.Indexes = append(k.Indexes, []string{name})
			case "version":
				lww.Version = name
			case "tiebreak":
				lww.Tiebreak = name
			}
		}
		if slices.ContainsFunc(fields, func(o typedField) bool { return strings.EqualFold(o.col.Name, name) }) {
			return k, nil, nil, recordstore.Invalidf("result type %s: column %s is declared twice", rt, name)
		}
		fields = append(fields, f)
		k.Columns = append(k.Columns, f.col)
	}
	if !sawKind || k.Name == "" {
		return k, nil, nil, recordstore.Invalidf("result type %s: no kind name: add a field `_ struct{} `records:\"kind=NAME\"``", rt)
	}
	if lww != (recordstore.LWW{}) {
		k.LWW = &lww
	}
	if err := k.Validate(); err != nil {
		return k, nil, nil, recordstore.Invalidf("result type %s: %s", rt, recordstore.Message(err))
	}
	return k, search, fields, nil
}

// kindOptions reads the tag of the blank field: kind=, onConflict=,
// retention=.
func kindOptions(k *recordstore.Kind, tag string) error {
	for _, opt := range strings.Split(tag, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(opt), "=")
		switch name {
		case "kind":
			k.Name = val
		case "onConflict":
			k.OnConflict = recordstore.OnConflict(val)
		case "retention":
			mode, ttl, ok := strings.Cut(val, "/")
			d, err := time.ParseDuration(ttl)
			if !ok || err != nil {
				return recordstore.Invalidf("retention=%s: want rows/DURATION or stream/DURATION, e.g. rows/24h", val)
			}
			k.Retention = &recordstore.Retention{Mode: recordstore.RetentionMode(mode), TTL: recordstore.Duration(d)}
		default:
			return recordstore.Invalidf("unknown kind option %s (want kind=, onConflict=, retention=)", recordstore.Quote(opt))
		}
	}
	return nil
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// fieldColumn reads one field's tag: its column and its column options.
func fieldColumn(sf reflect.StructField, tag string) (typedField, []string, error) {
	parts := strings.Split(tag, ",")
	f := typedField{index: sf.Index, col: recordstore.Column{Name: parts[0]}}
	if f.col.Name == "" {
		f.col.Name = sf.Name
	}
	ft := sf.Type
	if ft.Kind() == reflect.Pointer {
		f.ptr, ft = true, ft.Elem()
	}
	natural, err := columnType(ft)
	var opts []string
	for _, o := range parts[1:] {
		o = strings.TrimSpace(o)
		switch {
		case strings.HasPrefix(o, "type="):
			f.col.Type = recordstore.ColumnType(strings.TrimPrefix(o, "type="))
		case o == "required":
			f.col.Required = true
		case o == "key", o == "time", o == "search", o == "index", o == "version", o == "tiebreak":
			opts = append(opts, o)
		default:
			return f, nil, recordstore.Invalidf("unknown option %s (want type=, key, required, time, search, index, version, tiebreak)", recordstore.Quote(o))
		}
	}
	switch {
	case f.col.Type == "" && err != nil:
		return f, nil, err
	case f.col.Type == "":
		f.col.Type = natural
	case f.col.Type == recordstore.TypeJSON:
	case err != nil || f.col.Type != natural:
		return f, nil, recordstore.Invalidf("type=%s does not fit Go type %s", f.col.Type, sf.Type)
	}
	f.asJSON = f.col.Type == recordstore.TypeJSON && ft != rawType
	return f, opts, nil
}

// columnType is the column type of a Go type (see TagName).
func columnType(t reflect.Type) (recordstore.ColumnType, error) {
	switch {
	case t == timeType:
		return recordstore.TypeDatetime, nil
	case t == rawType:
		return recordstore.TypeJSON, nil
	}
	switch t.Kind() {
	case reflect.String:
		return recordstore.TypeString, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return recordstore.TypeInteger, nil
	case reflect.Float32, reflect.Float64:
		return recordstore.TypeNumber, nil
	case reflect.Bool:
		return recordstore.TypeBool, nil
	case reflect.Map, reflect.Slice, reflect.Struct, reflect.Array:
		return recordstore.TypeJSON, nil
	}
	return "", recordstore.Invalidf("Go type %s has no column type (uint, uint64, chan, func... do not fit)", t)
}
