// Benchmarks with a baseline measured in the same run, interleaved with
// the measured code: vs_raw = baseline time / our time (above 1 = faster
// than the baseline).
//
//	BenchmarkCodec: the ndjson codecs against encoding/json on the same
//	rows (decode: one json.Unmarshal into map[string]any per line of the
//	uncompressed text; encode: one json.Marshal of the row's
//	map[string]any per line).
//	BenchmarkPublish: a whole Publish against a bare write + fsync +
//	rename + fsync of the same bytes. Also reported: encode_ms, the time
//	of encoding and hashing the rows alone (what the baseline does not
//	do, no I/O), and ceiling, the baseline's time over it: the vs_raw a
//	publish would reach if its own I/O cost nothing.
//	BenchmarkList: List of an incoming/ holding 64 batches (as many as
//	the owner lets wait there) against os.ReadDir of the same folder.

package spool_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstoretest/benchdata"
)

const benchRows = 10_000

// rawLines is the baseline's text: one json.Marshal of each row's map.
func rawLines(rows []recordstore.Row) [][]byte {
	out := make([][]byte, len(rows))
	for i, r := range rows {
		m := map[string]any(r)
		b, err := json.Marshal(m)
		if err != nil {
			panic(err)
		}
		out[i] = b
	}
	return out
}

func BenchmarkCodec(b *testing.B) {
	k := benchdata.Kind()
	kind := &k
	rows := benchdata.Rows(benchRows)
	vals := normalizeAll(kind, rows)
	lines := rawLines(rows)
	for _, format := range []string{spool.FormatNDJSON, spool.FormatNDJSONGz} {
		codec, err := spool.Lookup(format)
		if err != nil {
			b.Fatal(err)
		}
		data, err := encodeAll(codec, kind, vals)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("format="+format+"/op=encode", func(b *testing.B) {
			measure(b, func() {
				if _, err := encodeAll(codec, kind, vals); err != nil {
					b.Fatal(err)
				}
			}, func() { rawEncode(b, rows) })
		})
		b.Run("format="+format+"/op=decode", func(b *testing.B) {
			measure(b, func() {
				got, err := decodeAll(codec, kind, data, spool.Limits{})
				if err != nil || len(got) != benchRows {
					b.Fatal(len(got), err)
				}
			}, func() { rawDecode(b, lines) })
		})
	}
}

// measure runs ours and raw alternately b.N times and reports rows/s of
// ours and vs_raw = raw time / our time.
func measure(b *testing.B, ours, raw func()) {
	var tOurs, tRaw time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		ours()
		t1 := time.Now()
		b.StopTimer() // ns/op is ours alone
		raw()
		tRaw += time.Since(t1)
		b.StartTimer()
		tOurs += t1.Sub(t0)
	}
	b.ReportMetric(float64(benchRows*b.N)/tOurs.Seconds(), "rows/s")
	b.ReportMetric(tRaw.Seconds()/tOurs.Seconds(), "vs_raw")
}

func rawEncode(b *testing.B, rows []recordstore.Row) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	for _, r := range rows {
		line, err := json.Marshal(map[string]any(r))
		if err != nil {
			b.Fatal(err)
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	w.Flush()
}

func rawDecode(b *testing.B, lines [][]byte) {
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPublish publishes batches of 1, 1,000 and 10,000 rows from one
// Dir opened as owner.Store opens its own (Options.Prepare: the folder of
// the next publish is prepared after each one), and once more without
// Prepare (rows=1/unprepared), against the baseline rawPublish of the same
// bytes. fsync_ms is the disk's bare fsync time (benchdata.FsyncMs) in the
// same folder, measured after the runs.
func BenchmarkPublish(b *testing.B) {
	k := benchdata.Kind()
	kind := &k
	type variant struct {
		name    string
		rows    int
		prepare bool
	}
	var variants []variant
	for _, n := range []int{1, 1000, benchRows} {
		variants = append(variants, variant{fmt.Sprintf("rows=%d", n), n, true})
	}
	variants = append(variants, variant{"rows=1/unprepared", 1, false})
	for _, v := range variants {
		vals := normalizeAll(kind, benchdata.Rows(v.rows))
		b.Run(v.name, func(b *testing.B) {
			ctx := context.Background()
			root := b.TempDir()
			d, err := spool.OpenRoot(ctx, filepath.Join(root, "spool"), spool.Options{Prepare: v.prepare})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			id := spool.NewIdentity("bench")
			delivery := func() *recordstore.Batch {
				return &recordstore.Batch{ID: spool.NewID(), Producer: id.Producer(id.Next()), Created: time.Now(),
					Schemas: []recordstore.Kind{*kind},
					Entries: []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "s", Kind: kind.Name, Rows: vals}}}
			}
			payload := publishedBytes(b, d, delivery())
			rawDir := filepath.Join(root, "raw")
			if err := os.Mkdir(rawDir, 0o700); err != nil {
				b.Fatal(err)
			}
			codec, err := spool.Lookup(spool.FormatNDJSON)
			if err != nil {
				b.Fatal(err)
			}
			var tOurs, tRaw, tEncode time.Duration
			b.ResetTimer()
			ours := func() time.Duration {
				del := delivery()
				b.StartTimer()
				t0 := time.Now()
				if _, err := d.Publish(ctx, del, spool.FormatNDJSON); err != nil {
					b.Fatal(err)
				}
				took := time.Since(t0)
				b.StopTimer()
				if v.prepare {
					// The next folder is prepared in the background, off
					// the publish's path: let it finish, untimed, rather
					// than let it slow the baseline down.
					waitPrepared(b, d)
				}
				return took
			}
			raw := func(i int) time.Duration {
				t0 := time.Now()
				rawPublish(b, rawDir, i, payload)
				return time.Since(t0)
			}
			b.StopTimer() // ns/op is ours alone; ours and the baseline alternate in order
			for i := range b.N {
				if i%2 == 0 {
					tOurs += ours()
					tRaw += raw(i)
				} else {
					tRaw += raw(i)
					tOurs += ours()
				}
				t0 := time.Now()
				if _, _, err := spool.HashEntry(ctx, codec, kind, vals); err != nil {
					b.Fatal(err)
				}
				tEncode += time.Since(t0)
			}
			b.ReportMetric(float64(tOurs.Microseconds())/1000/float64(b.N), "ms/op")
			b.ReportMetric(float64(tEncode.Microseconds())/1000/float64(b.N), "encode_ms")
			// The vs_raw a publish would reach if its own I/O cost nothing.
			b.ReportMetric(tRaw.Seconds()/tEncode.Seconds(), "ceiling")

			b.ReportMetric(tRaw.Seconds()/tOurs.Seconds(), "vs_raw")
			// Both sides wait on fsyncs: the disk's own time, beside them.
			benchdata.ReportFsync(b, root)
		})
	}
}

// waitPrepared waits until the next batch folder is prepared (and made
// durable, as the preparation does, off the publish's path).
func waitPrepared(b *testing.B, d *spool.Dir) {
	d.WaitPrepared()
	dirs, err := os.ReadDir(d.Path(spool.StateTmp, ""))
	if err != nil {
		b.Fatal(err)
	}
	if len(dirs) != 1 {
		b.Fatalf("%d folders in tmp/, want the prepared one", len(dirs))
	}
}

// publishedBytes publishes del once and returns the bytes of its files.
func publishedBytes(b *testing.B, d *spool.Dir, del *recordstore.Batch) []byte {
	name, err := d.Publish(context.Background(), del, spool.FormatNDJSON)
	if err != nil {
		b.Fatal(err)
	}
	dir := d.Path(spool.StateIncoming, name.String())
	ents, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var all []byte
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, data...)
	}
	return all
}

// rawPublish is the baseline: write a temp file, fsync, rename, fsync dir.
func rawPublish(b *testing.B, dir string, i int, data []byte) {
	tmp := filepath.Join(dir, fmt.Sprintf(".tmp-%d", i))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("batch-%d", i))); err != nil {
		b.Fatal(err)
	}
	df, err := os.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := df.Sync(); err != nil {
		b.Fatal(err)
	}
	df.Close()
}

// BenchmarkList lists an incoming/ of 64 one-row batches, as the owner
// does at every drain, against a bare os.ReadDir of the same folder (which
// neither parses nor checks the names). Reported: us/op (ours) and vs_raw.
func BenchmarkList(b *testing.B) {
	ctx := context.Background()
	k := benchdata.Kind()
	vals := normalizeAll(&k, benchdata.Rows(1))
	d, err := spool.OpenRoot(ctx, filepath.Join(b.TempDir(), "spool"), spool.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	id := spool.NewIdentity("bench")
	for range 64 {
		if _, err := d.Publish(ctx, &recordstore.Batch{ID: spool.NewID(), Producer: id.Producer(id.Next()), Created: time.Now(),
			Schemas: []recordstore.Kind{k},
			Entries: []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: "s", Kind: k.Name, Rows: vals}}},
			spool.FormatNDJSON); err != nil {
			b.Fatal(err)
		}
	}
	folder := d.Path(spool.StateIncoming, "")
	var tOurs, tRaw time.Duration
	for i := 0; b.Loop(); i++ {
		ours := func() {
			t0 := time.Now()
			names, err := d.List(ctx, spool.StateIncoming)
			tOurs += time.Since(t0)
			if err != nil || len(names) != 64 {
				b.Fatalf("listed %d batches (%v), want 64", len(names), err)
			}
		}
		raw := func() {
			t0 := time.Now()
			ents, err := os.ReadDir(folder)
			tRaw += time.Since(t0)
			if err != nil || len(ents) != 64 {
				b.Fatalf("read %d entries (%v), want 64", len(ents), err)
			}
		}
		if i%2 == 0 {
			ours()
			raw()
		} else {
			raw()
			ours()
		}
	}
	b.ReportMetric(float64(tOurs.Nanoseconds())/1e3/float64(b.N), "us/op")
	b.ReportMetric(tRaw.Seconds()/tOurs.Seconds(), "vs_raw")
}
