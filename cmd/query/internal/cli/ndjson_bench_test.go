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

// BenchmarkDecodeNDJSON measures the row input decoder against the
// plainest possible baseline, measured in the same run: json.Unmarshal of
// each line into map[string]any. vs_raw is decoder time / baseline time.
func BenchmarkDecodeNDJSON(b *testing.B) {
	const rows = 10000
	in := benchInput(rows)
	raw := baselineDecode(b, in)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, n := newRowReader(bytes.NewReader(in), "bench"), 0
		for {
			_, _, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != rows {
			b.Fatalf("decoded %d rows, want %d", n, rows)
		}
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(rows)/per.Seconds(), "rows/s")
	b.ReportMetric(float64(per)/float64(raw), "vs_raw")
}

// baselineDecode returns the time of one json.Unmarshal pass over in.
func baselineDecode(b *testing.B, in []byte) time.Duration {
	best := time.Duration(1<<63 - 1)
	for run := 0; run < 3; run++ {
		start := time.Now()
		sc := bufio.NewScanner(bytes.NewReader(in))
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				b.Fatal(err)
			}
		}
		best = min(best, time.Since(start))
	}
	return best
}
