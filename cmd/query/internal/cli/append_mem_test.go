// The memory of one large append does not grow with its input.

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("query append's memory", func() {
	// peakOf runs query append of n rows {"i":N} as the owner of a fresh
	// store, in this process, and returns the most heap it held. The rows
	// are made as they are read, so that the input itself is not on the
	// heap (it would set the collector's pace).
	peakOf := func(n int) uint64 {
		dir := GinkgoT().TempDir()
		schema := filepath.Join(dir, "kinds.json")
		Expect(writeTestFile(schema, `{"kinds":[{"name":"t","columns":[{"name":"i","type":"integer"}]}]}`)).To(Succeed())
		args := []string{"--store", filepath.Join(dir, "records.sqlite"), "append", "--stream", "s1", "--kind", "t", "--schema", schema}
		var out, errb bytes.Buffer
		env := Env{Stdin: &madeRows{n: n}, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		peak := heapPeak(func() {
			Expect(Run(context.Background(), args, env)).To(Equal(0), errb.String())
		})
		Expect(out.String()).To(ContainSubstring(fmt.Sprintf(`"appended":%d`, n)))
		return peak
	}

	It("holds about as much heap for four times the rows", func() {
		small, large := peakOf(200_000), peakOf(800_000)
		GinkgoWriter.Printf("peak heap: %.1f MiB for 200 000 rows, %.1f MiB for 800 000\n", float64(small)/(1<<20), float64(large)/(1<<20))
		// Rows held until the append would take 7 MiB more (4 bytes or
		// more a row, and a slot of the insert's feed); the collector's
		// headroom moves a peak by a few MiB either way.
		Expect(large).To(BeNumerically("<", small+6<<20), "peak heap %d MiB for 200 000 rows, %d MiB for 800 000", small>>20, large>>20)
	})
})

// madeRows reads as n NDJSON rows, made as they are read: line appends
// row i (from 0) with its newline; {"i":i} when line is nil. size counts
// the bytes read.
type madeRows struct {
	n, next int
	line    func(buf []byte, i int) []byte
	buf     []byte
	size    int64
}

func (r *madeRows) Read(p []byte) (int, error) {
	for len(r.buf) < len(p) && r.next < r.n {
		if r.line == nil {
			r.buf = fmt.Appendf(r.buf, "{\"i\":%d}\n", r.next)
		} else {
			r.buf = r.line(r.buf, r.next)
		}
		r.next++
	}
	if len(r.buf) == 0 {
		return 0, io.EOF
	}
	k := copy(p, r.buf)
	r.buf = r.buf[:copy(r.buf, r.buf[k:])]
	r.size += int64(k)
	return k, nil
}
