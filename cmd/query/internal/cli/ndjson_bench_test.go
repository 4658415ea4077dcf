package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// benchInput is n NDJSON rows of a typical shape: an integer key, text, a
// datetime, a number and a small json object.
func benchInput(n int) []byte {
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&buf, `{"id": %d, "state": "queued", "at": "2024-05-01T12:00:%02d.123456Z", "score": %d.5, "detail": {"queue": "fast", "tries": %d}}`+"\n",
			i, i%60, i, i%7)
	}
	return buf.Bytes()
}

// benchKind is the kind of benchInput's rows.
var benchKind = recordstore.Kind{Name: "jobs", Columns: []recordstore.Column{
	{Name: "id", Type: recordstore.TypeInteger},
	{Name: "state", Type: recordstore.TypeString},
	{Name: "at", Type: recordstore.TypeDatetime},
	{Name: "score", Type: recordstore.TypeNumber},
	{Name: "detail", Type: recordstore.TypeJSON},
}}

// BenchmarkDecodeNDJSON measures the row input decoder as append and
// spool publish use it (each line to the kind's normalized values, through
// rowReader.NextValues) against the plainest possible baseline, measured
// alternately in the same run: json.Unmarshal of each line into
// map[string]any. vs_raw is baseline time / decoder time (above 1: the
// decoder is faster).
func BenchmarkDecodeNDJSON(b *testing.B) {
	const rows = 10000
	in := benchInput(rows)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	var ours, raw time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, sc, n := newRowReader(bytes.NewReader(in), "bench"), newValueScanner(&benchKind), 0
		for {
			_, _, err := r.NextValues(sc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		ours += time.Since(start)
		if n != rows {
			b.Fatalf("decoded %d rows, want %d", n, rows)
		}
		b.StopTimer()
		raw += baselineDecode(b, in)
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)*float64(b.N)/ours.Seconds(), "rows/s")
	b.ReportMetric(raw.Seconds()/ours.Seconds(), "vs_raw")
}

// baselineDecode returns the time of one json.Unmarshal pass over in.
func baselineDecode(b *testing.B, in []byte) time.Duration {
	start := time.Now()
	sc := bufio.NewScanner(bytes.NewReader(in))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}
