// Benchmarks of the codec against a baseline measured in the same run:
// the same rows encoded with encoding/json from map[string]any, one line
// per row, and decoded back into map[string]any (vs_raw = baseline time /
// codec time, so 1.0 means "as fast as encoding/json").

package parquet_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	pq "github.com/fb46ecde/records/recordstore/spool/parquet"
	"github.com/fb46ecde/records/recordstoretest/benchdata"
)

const benchRowCount = 10_000

func benchEncode(b *testing.B, kind *recordstore.Kind, vals []recordstore.Values) []byte {
	var buf bytes.Buffer
	enc, err := pq.Codec{}.NewEncoder(&buf, kind)
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range vals {
		if err := enc.Write(v); err != nil {
			b.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func benchDecode(b *testing.B, kind *recordstore.Kind, data []byte) int {
	dec, err := pq.Codec{}.NewDecoder(bytes.NewReader(data), int64(len(data)), kind, spool.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for {
		_, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := dec.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}

func jsonEncode(b *testing.B, rows []recordstore.Row) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, r := range rows {
		if err := enc.Encode(map[string]any(r)); err != nil {
			b.Fatal(err)
		}
	}
	return buf.Bytes()
}

func jsonDecode(b *testing.B, data []byte) int {
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

func report(b *testing.B, rows int, ours, raw time.Duration) {
	b.ReportMetric(float64(rows)/ours.Seconds(), "rows/s")
	b.ReportMetric(raw.Seconds()/ours.Seconds(), "vs_raw")
}

// BenchmarkCodec encodes and decodes 10,000 rows of a 10-column kind. The
// codec encodes rows already normalized (normalization is the same for
// every codec); the baseline alternates with it inside each iteration.
func BenchmarkCodec(b *testing.B) {
	k := benchdata.Kind()
	kind := &k
	rows := benchdata.Rows(benchRowCount)
	vals := make([]recordstore.Values, len(rows))
	for i, r := range rows {
		v, err := kind.Normalize(r)
		if err != nil {
			b.Fatal(err)
		}
		vals[i] = v
	}
	b.Run("format=parquet/op=encode", func(b *testing.B) {
		var ours, raw time.Duration
		var size int
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			size = len(benchEncode(b, kind, vals))
			t1 := time.Now()
			jsonEncode(b, rows)
			ours, raw = ours+t1.Sub(t0), raw+time.Since(t1)
		}
		b.ReportMetric(float64(size)/benchRowCount, "bytes/row")
		report(b, benchRowCount*b.N, ours, raw)
	})
	b.Run("format=parquet/op=decode", func(b *testing.B) {
		data := benchEncode(b, kind, vals)
		lines := jsonEncode(b, rows)
		var ours, raw time.Duration
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			if n := benchDecode(b, kind, data); n != benchRowCount {
				b.Fatalf("decoded %d rows", n)
			}
			t1 := time.Now()
			if n := jsonDecode(b, lines); n != benchRowCount {
				b.Fatalf("json decoded %d rows", n)
			}
			ours, raw = ours+t1.Sub(t0), raw+time.Since(t1)
		}
		report(b, benchRowCount*b.N, ours, raw)
	})
}
