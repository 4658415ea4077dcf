// Memory of a large one-call append: the peak heap of query append run as
// the store's owner, against the size of its input.

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore/spool"
)

// BenchmarkAppendMemory runs query append in this process, as the owner
// of a fresh store, and reports bytes_per_input_byte: the high-water mark
// of the heap's object bytes (sampled while the append runs, less what was
// in use before it) over the input's size. The input is read from stdin.
//
// The four-column cases are make bench-cli's rows, made as stdin is read
// instead of held (a held input would count in the collector's pace, and
// the headroom it allows would grow with the input). One append takes at
// most spool.DefaultLimits rows (1 000 000); the 4 000 000-row case raises
// that limit in this process for its run, to show that the peak does not
// grow with the rows. The keyed cases declare id the kind's key; the
// batch cases append with --batch-rows 1000000 (4 000 000 rows in four
// appends, without raising the limit).
func BenchmarkAppendMemory(b *testing.B) {
	const four = `{"kinds":[{"name":"ev","columns":[{"name":"id","type":"integer"},{"name":"name","type":"string"},{"name":"score","type":"number"},{"name":"ok","type":"bool"}]}]}`
	// keyed is four's kind with id its key: every row's key is checked
	// against the others' (recordstore.KeySet).
	const keyed = `{"kinds":[{"name":"ev","columns":[{"name":"id","type":"integer"},{"name":"name","type":"string"},{"name":"score","type":"number"},{"name":"ok","type":"bool"}],"key":["id"]}]}`
	batches := []string{"--batch-rows", "1000000"}
	cases := []struct {
		name, kind, schema string
		input              func() []byte
		made               int      // rows made as they are read instead of input; past spool.DefaultLimits.MaxRows, the limit is raised for the run (unless args cut batches)
		args               []string // more arguments of append
	}{
		{"rows=1000000_tiny", "t", `{"kinds":[{"name":"t","columns":[{"name":"i","type":"integer"}]}]}`, tinyRows, 0, nil},
		{"rows=1_string=50MB", "s", `{"kinds":[{"name":"s","columns":[{"name":"s","type":"string"}]}]}`, bigString, 0, nil},
		{"rows=1000000_four", "ev", four, nil, 1_000_000, nil},
		{"rows=4000000_four", "ev", four, nil, 4_000_000, nil},
		{"rows=1000000_keyed", "ev", keyed, nil, 1_000_000, nil},
		{"rows=4000000_keyed", "ev", keyed, nil, 4_000_000, nil},
		{"rows=1000000_four_batch=1000000", "ev", four, nil, 1_000_000, batches},
		{"rows=4000000_four_batch=1000000", "ev", four, nil, 4_000_000, batches},
		{"rows=4000000_keyed_batch=1000000", "ev", keyed, nil, 4_000_000, batches},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if lim := spool.DefaultLimits; int64(c.made) > lim.MaxRows && c.args == nil {
				spool.DefaultLimits = spool.Limits{MaxRows: int64(c.made), MaxBytes: 4 * lim.MaxBytes}
				defer func() { spool.DefaultLimits = lim }()
			}
			var in []byte
			if c.input != nil {
				in = c.input()
			}
			size := int64(len(in))
			var peak uint64
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				schema := filepath.Join(dir, "kinds.json")
				if err := writeTestFile(schema, c.schema); err != nil {
					b.Fatal(err)
				}
				args := []string{"--store", filepath.Join(dir, "records.sqlite"), "append", "--stream", "s1", "--kind", c.kind, "--schema", schema}
				args = append(args, c.args...)
				var out, errb bytes.Buffer
				var stdin io.Reader = bytes.NewReader(in)
				made := &madeRows{n: c.made, line: fourRow}
				if c.made > 0 {
					stdin = made
				}
				env := Env{Stdin: stdin, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
				got := heapPeak(func() {
					if code := Run(context.Background(), args, env); code != 0 {
						b.Fatalf("append exited %d: %s", code, errb.String())
					}
				})
				peak = max(peak, got)
				if c.made > 0 {
					size = made.size
				}
			}
			b.ReportMetric(float64(peak)/float64(size), "bytes_per_input_byte")
			b.ReportMetric(float64(peak)/(1<<20), "peak_heap_MiB")
			b.ReportMetric(float64(size)/(1<<20), "input_MiB")
		})
	}
}

// tinyRows is 1 000 000 rows of {"i":N}.
func tinyRows() []byte {
	var buf bytes.Buffer
	for i := 0; i < 1_000_000; i++ {
		fmt.Fprintf(&buf, "{\"i\":%d}\n", i)
	}
	return buf.Bytes()
}

// fourRow appends row i (from 0) of the rows scripts/bench-cli.sh writes,
// {"id":N,"name":"user-K","score":X.5,"ok":B} with N = i+1.
func fourRow(buf []byte, i int) []byte {
	n := i + 1
	return fmt.Appendf(buf, "{\"id\":%d,\"name\":\"user-%d\",\"score\":%d.5,\"ok\":%t}\n", n, n%1000, n%100, n%2 == 1)
}

// bigString is one row holding a 50 MB string.
func bigString() []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"s":"`)
	buf.WriteString(strings.Repeat("x", 50_000_000))
	buf.WriteString("\"}\n")
	return buf.Bytes()
}

// heapPeak runs fn and returns the most heap object bytes seen in use
// while it ran (sampled every 200µs, and once at its end) beyond those in
// use before it started.
func heapPeak(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	peak = max(peak, read())
	if peak < base {
		return 0
	}
	return peak - base
}

// writeTestFile writes content to path.
func writeTestFile(path, content string) error {
	return os.WriteFile(path, []byte(content), 0o600)
}
