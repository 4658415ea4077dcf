// The memory a user sees: the peak resident size of a query append child
// process, as owner, against its input's size.

package main_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/onsi/gomega/gexec"
)

// BenchmarkAppendRSS runs the query binary's append as the owner of a
// fresh store, the input on stdin, and reports rss_per_input_byte: the
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
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var peak int64
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				schema := filepath.Join(dir, "kinds.json")
				if err := os.WriteFile(schema, []byte(c.kinds), 0o600); err != nil {
					b.Fatal(err)
				}
				args := []string{bin, "--store", filepath.Join(dir, "records.sqlite"), "append", "--stream", "s1", "--kind", c.kind, "--schema", schema}
				timed := filepath.Join(dir, "time.out")
				if gnuTime {
					args = append([]string{"/usr/bin/time", "-f", "%M", "-o", timed}, args...)
				}
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Env = withoutStoreEnv()
				cmd.Stdin = bytes.NewReader(c.input)
				var errb bytes.Buffer
				cmd.Stderr = &errb
				if err := cmd.Run(); err != nil {
					b.Fatalf("append: %v: %s", err, errb.String())
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
				peak = max(peak, rss*1024)
			}
			b.ReportMetric(float64(peak)/float64(len(c.input)), "rss_per_input_byte")
			b.ReportMetric(float64(peak)/(1<<20), "peak_rss_MiB")
		})
	}
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
