// Fuzz targets of the SQLite backend: the declare path, from the JSON of a
// kind file to a table that takes a row.

package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// fuzzStore is the one store a fuzzing process declares its kinds in
// (opening a store per input would make the fuzzer a hundred times
// slower); each valid kind gets a name of its own there.
var fuzzStore struct {
	once sync.Once
	b    *sqlite.Backend
	err  error
	n    int
}

func openFuzzStore(dir string) (*sqlite.Backend, error) {
	fuzzStore.once.Do(func() {
		fuzzStore.b, fuzzStore.err = sqlite.Open(context.Background(), filepath.Join(dir, "data", "records.sqlite"),
			sqlite.Options{SweepInterval: -1})
	})
	return fuzzStore.b, fuzzStore.err
}

// fuzzValue is a value of column type t that Normalize accepts.
func fuzzValue(t recordstore.ColumnType) any {
	switch t {
	case recordstore.TypeInteger:
		return int64(7)
	case recordstore.TypeNumber:
		return 1.5
	case recordstore.TypeBool:
		return true
	case recordstore.TypeDatetime:
		return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	case recordstore.TypeJSON:
		return map[string]any{"x": 1}
	}
	return "v"
}

// FuzzDeclare declares the kinds of a kind file's JSON. Each must either be
// refused with ErrInvalid — by Validate and by DeclareKind alike — or
// declare in a real SQLite store, directly and through a batch's declare
// entry, and take a row with every column set. Nothing may fail as
// internal, nor panic.
func FuzzDeclare(f *testing.F) {
	f.Add([]byte(`{"kinds":[{"name":"jobs","columns":[{"name":"id","type":"string","required":true},{"name":"v","type":"integer"},{"name":"o","type":"string"}],"key":["id"],"onConflict":"lww","lww":{"version":"v","tiebreak":"o"}}]}`))
	f.Add([]byte(`{"kinds":[{"name":"k","columns":[{"name":"doc","type":"json"}],"key":["doc"]}]}`))
	f.Add([]byte(`{"kinds":[{"name":"k","columns":[{"name":"a","type":"string"}],"retention":{"mode":"stream","ttl":86400}}]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		var file recordstore.KindFile
		if err := json.Unmarshal(data, &file); err != nil {
			return
		}
		b, err := openFuzzStore(dir)
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		ctx := context.Background()
		for i, k := range file.Kinds {
			checkFuzzKind(ctx, t, b, i, k)
		}
	})
}

func checkFuzzKind(ctx context.Context, t *testing.T, b *sqlite.Backend, i int, k recordstore.Kind) {
	v := k.Clone()
	if err := v.Validate(); err != nil {
		if recordstore.Code(err) != "invalid" {
			t.Fatalf("kind %d: Validate: %v is not invalid", i, err)
		}
		_, err := b.DeclareKind(ctx, k)
		code := recordstore.Code(err)
		// A refused kind named like one this fuzzer declared (fuzz1, ...)
		// may meet that kind first: a conflict is then the right answer.
		collides := code == "schema_conflict" && strings.HasPrefix(strings.ToLower(k.Name), "fuzz")
		if code != "invalid" && !collides {
			t.Fatalf("kind %d: Validate refuses it, DeclareKind says %v", i, err)
		}
		return
	}
	if k.Table != nil {
		checkFuzzBound(ctx, t, b, i, k)
		return
	}
	fuzzStore.n++
	k.Name = fmt.Sprintf("fuzz%d", fuzzStore.n)
	if _, err := b.DeclareKind(ctx, k); err != nil {
		t.Fatalf("kind %d: valid, but DeclareKind: %v (code %s)", i, err, recordstore.Code(err))
	}
	row := recordstore.Row{}
	for _, c := range k.Columns {
		row[c.Name] = fuzzValue(c.Type)
	}
	stream := "s" + k.Name
	if _, err := b.Append(ctx, stream, k.Name, []recordstore.Row{row}); err != nil {
		t.Fatalf("kind %d: declared, but Append: %v (code %s)", i, err, recordstore.Code(err))
	}
	if _, err := b.Append(ctx, stream, k.Name, []recordstore.Row{row}); err != nil {
		t.Fatalf("kind %d: declared, but a second Append: %v (code %s)", i, err, recordstore.Code(err))
	}

	// The same kind under another name, declared by a batch.
	k.Name += "b"
	vals, err := k.Normalize(row)
	if err != nil {
		t.Fatalf("kind %d: Normalize: %v", i, err)
	}
	res, err := b.AppendBatch(ctx, recordstore.Batch{
		ID: "fuzz-" + k.Name, Producer: recordstore.Producer{Instance: "fuzz", Seq: int64(fuzzStore.n)},
		Schemas: []recordstore.Kind{k},
		Entries: []recordstore.BatchEntry{
			{Op: recordstore.OpDeclare, Kind: k.Name},
			{Op: recordstore.OpAppend, Stream: stream + "b", Kind: k.Name, Rows: []recordstore.Values{vals}},
		},
	})
	if err != nil {
		t.Fatalf("kind %d: AppendBatch: %v", i, err)
	}
	for j, e := range res[0].Entries {
		if err := e.Err(); err != nil {
			t.Fatalf("kind %d: batch entry %d: %v (code %s)", i, j, err, recordstore.Code(err))
		}
	}
}

// checkFuzzBound declares a valid bound kind: the store may refuse it
// (ErrInvalid: its table does not fit the kind, or an earlier input's
// kind holds the table) but never fail otherwise; a declared one takes a
// row or refuses it as invalid (the table's own constraints).
func checkFuzzBound(ctx context.Context, t *testing.T, b *sqlite.Backend, i int, k recordstore.Kind) {
	if _, err := b.DeclareKind(ctx, k); err != nil {
		if c := recordstore.Code(err); c != "invalid" && c != "schema_conflict" {
			t.Fatalf("bound kind %d: valid, but DeclareKind: %v (code %s)", i, err, c)
		}
		return
	}
	row := recordstore.Row{}
	for _, c := range k.Columns {
		row[c.Name] = fuzzValue(c.Type)
	}
	_, err := b.Append(ctx, "s"+k.Name, k.Name, []recordstore.Row{row})
	if c := recordstore.Code(err); c != "" && c != "invalid" {
		t.Fatalf("bound kind %d: declared, but Append: %v (code %s)", i, err, c)
	}
}
