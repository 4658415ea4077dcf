// The memory a user sees: the peak resident size of a query append child
// process, as owner or through the spool, against its input's size.

package main_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/gomega/gexec"
)

// BenchmarkAppendRSS runs the query binary's append on a fresh store, the
// input on stdin — as the store's owner (role=owner), and through the
// spool while a query serve owns the store (role=spooled; the serve is
// started for each run and stopped after it) — and reports
// rss_per_input_byte: the
// child's peak resident size (rusage Maxrss, as GNU time reports it when
// /usr/bin/time is one) over the input's size. It is
// reported, not asserted: the resident size includes the runtime, SQLite's
// page cache and garbage the collector has not returned yet. With
// $QUERY_BENCH_BIN set it runs that binary instead of building this one
// (to compare with another build in the same session).
func BenchmarkAppendRSS(b *testing.B) {
	bin := os.Getenv("QUERY_BENCH_BIN")
	if bin == "" {
		var err error
		if bin, err = gexec.Build("github.com/fb46ecde/records/cmd/query"); err != nil {
			b.Fatal(err)
		}
		defer gexec.CleanupBuildArtifacts()
	}
	const four = `{"kinds":[{"name":"ev","columns":[{"name":"id","type":"integer"},{"name":"name","type":"string"},{"name":"score","type":"number"},{"name":"ok","type":"bool"}]}]}`
	const keyed = `{"kinds":[{"name":"ev","columns":[{"name":"id","type":"integer"},{"name":"name","type":"string"},{"name":"score","type":"number"},{"name":"ok","type":"bool"}],"key":["id"]}]}`
	batches := []string{"--batch-rows", "1000000"}
	cases := []rssCase{
		{name: "rows=1000000_tiny", kinds: `{"kinds":[{"name":"tiny","columns":[{"name":"i","type":"integer"}]}]}`, kind: "tiny", input: []byte(tinyRows(1_000_000))},
		{name: "rows=1_string=50MB", kinds: `{"kinds":[{"name":"big","columns":[{"name":"s","type":"string"}]}]}`, kind: "big",
			input: []byte(`{"s":"` + strings.Repeat("x", 50_000_000) + "\"}\n")},
		{name: "rows=1000000_four", kinds: four, kind: "ev", made: 1_000_000},
		// id the kind's key: every row's key is checked against the others'.
		{name: "rows=1000000_keyed", kinds: keyed, kind: "ev", made: 1_000_000},
		// One append carries at most 1 000 000 rows: 4 000 000 go in
		// batches of that many.
		{name: "rows=1000000_four_batch=1000000", kinds: four, kind: "ev", made: 1_000_000, args: batches},
		{name: "rows=4000000_four_batch=1000000", kinds: four, kind: "ev", made: 4_000_000, args: batches},
		{name: "rows=4000000_keyed_batch=1000000", kinds: keyed, kind: "ev", made: 4_000_000, args: batches},
	}
	// The rusage of a child the test process starts counts the test
	// process's own resident size at the fork (Go starts children with
	// vfork, so the child's peak starts at the parent's), which holds the
	// inputs: through GNU time, which forks the command from its own small
	// process, the figure is the command's alone.
	gnuTime := exec.Command("/usr/bin/time", "-f", "%M", "true").Run() == nil
	for _, role := range []string{"owner", "spooled"} {
		for _, c := range cases {
			b.Run("role="+role+"/"+c.name, func(b *testing.B) {
				appendRSS(b, bin, role == "spooled", c, gnuTime)
			})
		}
	}
}

// rssCase is one input of BenchmarkAppendRSS: rows of kind, declared by
// the kind file kinds, held (input) or made as they are read (made rows of
// fourRow), appended with args besides the usual ones.
type rssCase struct {
	name, kinds, kind string
	input             []byte
	made              int
	args              []string
}

// appendRSS is one case of BenchmarkAppendRSS: b.N appends of c by bin,
// each into a fresh store, owned by a query serve when spooled.
func appendRSS(b *testing.B, bin string, spooled bool, c rssCase, gnuTime bool) {
	var peak, size int64
	for i := 0; i < b.N; i++ {
		rss, n := appendRSSOnce(b, bin, spooled, c, gnuTime)
		peak, size = max(peak, rss), n
	}
	b.ReportMetric(float64(peak)/float64(size), "rss_per_input_byte")
	b.ReportMetric(float64(peak)/(1<<20), "peak_rss_MiB")
}

// appendRSSOnce is one run of appendRSS; it returns the append's peak
// resident size and the input's size, in bytes.
func appendRSSOnce(b *testing.B, bin string, spooled bool, c rssCase, gnuTime bool) (int64, int64) {
	dir := b.TempDir()
	schema := filepath.Join(dir, "kinds.json")
	if err := os.WriteFile(schema, []byte(c.kinds), 0o600); err != nil {
		b.Fatal(err)
	}
	store := filepath.Join(dir, "records.sqlite")
	if spooled {
		stop := startOwner(b, bin, store)
		defer stop()
	}
	args := []string{bin, "--store", store, "append", "--stream", "s1", "--kind", c.kind, "--schema", schema}
	args = append(args, c.args...)
	timed := filepath.Join(dir, "time.out")
	if gnuTime {
		args = append([]string{"/usr/bin/time", "-f", "%M", "-o", timed}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = withoutStoreEnv()
	in := &madeRows{n: c.made}
	if c.made > 0 {
		cmd.Stdin = in
	} else {
		cmd.Stdin = bytes.NewReader(c.input)
		in.size = int64(len(c.input))
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("append: %v: %s", err, errb.String())
	}
	want := `"role":"owner"`
	if spooled {
		want = `"role":"spooled"`
	}
	if !strings.Contains(out.String(), want) {
		b.Fatalf("append printed %s, want %s", out.String(), want)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if gnuTime {
		out, err := os.ReadFile(timed)
		if err == nil {
			rss, err = strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		}
		if err != nil {
			b.Fatalf("read the peak RSS /usr/bin/time wrote: %v", err)
		}
	}
	return rss * 1024, in.size
}

// startOwner starts query serve on store and returns once it owns the
// store; stop ends it.
func startOwner(b *testing.B, bin, store string) (stop func()) {
	cmd := exec.Command(bin, "--store", store, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = withoutStoreEnv()
	errs, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	owns := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(errs)
		found := false
		for sc.Scan() {
			if !found && strings.Contains(sc.Text(), "msg=role role=owner") {
				found = true
				owns <- true
			}
		}
		if !found {
			owns <- false
		}
	}()
	select {
	case ok := <-owns:
		if !ok {
			stop()
			b.Fatal("query serve ended before it owned the store")
		}
	case <-time.After(time.Minute):
		stop()
		b.Fatal("query serve did not own the store within a minute")
	}
	return stop
}

// madeRows reads as n rows of fourRows, made as they are read (not held:
// 4 000 000 of them take 214 MiB); size counts the bytes read.
type madeRows struct {
	n, next int
	buf     []byte
	size    int64
}

// Read hands out the next rows.
func (m *madeRows) Read(p []byte) (int, error) {
	for len(m.buf) < len(p) && m.next < m.n {
		m.next++
		i := m.next
		m.buf = fmt.Appendf(m.buf, "{\"id\":%d,\"name\":\"user-%d\",\"score\":%d.5,\"ok\":%t}\n", i, i%1000, i%100, i%2 == 1)
	}
	if len(m.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, m.buf)
	m.buf = m.buf[:copy(m.buf, m.buf[n:])]
	m.size += int64(n)
	return n, nil
}

// fourRows is n rows {"id":N,"name":"user-K","score":X.5,"ok":B}, as
// scripts/bench-cli.sh writes them.
func fourRows(n int) []byte {
	var b []byte
	for i := 1; i <= n; i++ {
		b = fmt.Appendf(b, "{\"id\":%d,\"name\":\"user-%d\",\"score\":%d.5,\"ok\":%t}\n", i, i%1000, i%100, i%2 == 1)
	}
	return b
}
