// The memory a user sees: the peak resident size of a query append child
// process, as owner or through the spool, against its input's size.

package main_test

import (
	"bufio"
	"bytes"
	"fmt"
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
	cases := []struct {
		name, kinds, kind string
		input             []byte
	}{
		{"rows=1000000_tiny", `{"kinds":[{"name":"tiny","columns":[{"name":"i","type":"integer"}]}]}`, "tiny", []byte(tinyRows(1_000_000))},
		{"rows=1_string=50MB", `{"kinds":[{"name":"big","columns":[{"name":"s","type":"string"}]}]}`, "big",
			[]byte(`{"s":"` + strings.Repeat("x", 50_000_000) + "\"}\n")},
		{"rows=1000000_four", `{"kinds":[{"name":"ev","columns":[{"name":"id","type":"integer"},{"name":"name","type":"string"},{"name":"score","type":"number"},{"name":"ok","type":"bool"}]}]}`, "ev",
			fourRows(1_000_000)},
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
				appendRSS(b, bin, role == "spooled", c.kinds, c.kind, c.input, gnuTime)
			})
		}
	}
}

// appendRSS is one case of BenchmarkAppendRSS: b.N appends of input (rows
// of kind, declared by the kind file kinds) by bin, each into a fresh
// store, owned by a query serve when spooled.
func appendRSS(b *testing.B, bin string, spooled bool, kinds, kind string, input []byte, gnuTime bool) {
	var peak int64
	for i := 0; i < b.N; i++ {
		peak = max(peak, appendRSSOnce(b, bin, spooled, kinds, kind, input, gnuTime))
	}
	b.ReportMetric(float64(peak)/float64(len(input)), "rss_per_input_byte")
	b.ReportMetric(float64(peak)/(1<<20), "peak_rss_MiB")
}

// appendRSSOnce is one run of appendRSS; it returns the append's peak
// resident size in bytes.
func appendRSSOnce(b *testing.B, bin string, spooled bool, kinds, kind string, input []byte, gnuTime bool) int64 {
	dir := b.TempDir()
	schema := filepath.Join(dir, "kinds.json")
	if err := os.WriteFile(schema, []byte(kinds), 0o600); err != nil {
		b.Fatal(err)
	}
	store := filepath.Join(dir, "records.sqlite")
	if spooled {
		stop := startOwner(b, bin, store)
		defer stop()
	}
	args := []string{bin, "--store", store, "append", "--stream", "s1", "--kind", kind, "--schema", schema}
	timed := filepath.Join(dir, "time.out")
	if gnuTime {
		args = append([]string{"/usr/bin/time", "-f", "%M", "-o", timed}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = withoutStoreEnv()
	cmd.Stdin = bytes.NewReader(input)
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
	return rss * 1024
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

// fourRows is n rows {"id":N,"name":"user-K","score":X.5,"ok":B}, as
// scripts/bench-cli.sh writes them.
func fourRows(n int) []byte {
	var b []byte
	for i := 1; i <= n; i++ {
		b = fmt.Appendf(b, "{\"id\":%d,\"name\":\"user-%d\",\"score\":%d.5,\"ok\":%t}\n", i, i%1000, i%100, i%2 == 1)
	}
	return b
}
