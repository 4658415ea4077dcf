// Shared fixtures of the spool tests: a kind with every column type and
// rows that exercise their edges.

package spool_test

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// allTypes returns a valid kind with one column of every type.
func allTypes() *recordstore.Kind {
	k := &recordstore.Kind{Name: "all", Columns: []recordstore.Column{
		{Name: "s", Type: recordstore.TypeString},
		{Name: "i", Type: recordstore.TypeInteger},
		{Name: "n", Type: recordstore.TypeNumber},
		{Name: "b", Type: recordstore.TypeBool},
		{Name: "d", Type: recordstore.TypeDatetime},
		{Name: "j", Type: recordstore.TypeJSON},
	}}
	if err := k.Validate(); err != nil {
		panic(err)
	}
	return k
}

// keyed returns a valid kind with a required key column.
func keyed() *recordstore.Kind {
	k := &recordstore.Kind{Name: "kv", Key: []string{"k"}, Columns: []recordstore.Column{
		{Name: "k", Type: recordstore.TypeString},
		{Name: "v", Type: recordstore.TypeInteger},
	}}
	if err := k.Validate(); err != nil {
		panic(err)
	}
	return k
}

// edgeRows returns caller rows that cover the edges of every type.
func edgeRows() []recordstore.Row {
	return []recordstore.Row{
		{"s": "plain", "i": int64(math.MaxInt64), "n": 1.5, "b": true,
			"d": time.Date(2024, 2, 29, 23, 59, 59, 123456789, time.UTC), "j": map[string]any{"a": []any{1, "x", nil}}},
		{"s": "ünïcødé 😀 \"quoted\" \\ \n\t\r \u0001 \u2028", "i": int64(math.MinInt64), "n": math.Copysign(0, -1), "b": false,
			"d": "1999-12-31T23:59:59+05:30", "j": json.RawMessage(`{"z":1, "a":{"b":[true,false,null]}, "u":"\ud83d\ude00"}`)},
		{"s": "", "i": 0, "n": math.MaxFloat64, "j": json.RawMessage(`null`)},
		{"n": math.SmallestNonzeroFloat64, "j": json.RawMessage(`"just a string"`)},
		{"i": int64(1) << 53, "n": 1e21, "j": json.RawMessage(`[1e400, -0, 0.1]`)},
		{},
	}
}

// normalizeAll normalizes rows with kind, panicking on error.
func normalizeAll(kind *recordstore.Kind, rows []recordstore.Row) []recordstore.Values {
	out := make([]recordstore.Values, len(rows))
	for i, r := range rows {
		v, err := kind.Normalize(r)
		if err != nil {
			panic(err)
		}
		out[i] = v
	}
	return out
}

// newDir opens a spool beside a store path in a fresh temp folder.
func newDir(opts spool.Options) *spool.Dir {
	GinkgoHelper()
	d, err := spool.Open(context.Background(), filepath.Join(GinkgoT().TempDir(), "records.sqlite"), opts)
	Expect(err).NotTo(HaveOccurred())
	return d
}

// sampleBatch returns a batch of one producer with an append of
// rows of allTypes, a zero-row append and a seal.
func sampleBatch(id *spool.Identity, rows []recordstore.Values) *recordstore.Batch {
	return &recordstore.Batch{
		ID: spool.NewID(), Producer: id.Producer(id.Next()), Created: time.Now().UTC(),
		Schemas: []recordstore.Kind{*allTypes()},
		Entries: []recordstore.BatchEntry{
			{Op: recordstore.OpAppend, Stream: "s1", Kind: "all", Rows: rows},
			{Op: recordstore.OpAppend, Stream: "s2", Kind: "all"},
			{Op: recordstore.OpSeal, Stream: "s1"},
		},
	}
}
