// The memory of a spooled append: query append run while query serve
// owns the store streams its rows into the spool batch's data file, so
// that its peak resident size does not grow with its rows. Nor does that
// of an append of a kind with a key, whose keys are checked for repeats
// (past about 1 MiB in a scratch file), as owner or through the spool.

package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// spooledRSSBound is the peak resident size a spooled append of 1 000 000
// four-column rows (55 MB of NDJSON) must stay under: about twice what it
// takes streaming (some 50 MiB, most of it the runtime, the scratch
// file's buffers and the encoders' chunks); holding the rows in the batch
// took about 190 MiB.
const spooledRSSBound = 100 << 20

var _ = Describe("query append through the spool", Label("integration"), func() {
	It("appends 1 000 000 rows to a store query serve owns with a peak resident size under a bound that holding them would pass", func() {
		if runtime.GOOS != "linux" {
			Skip("reads the peak resident size from /proc")
		}
		s := newStore()
		schema := writeFile(s.dir, "ev.json", `{"kinds":[{"name":"ev","columns":[{"name":"id","type":"integer"},{"name":"name","type":"string"},{"name":"score","type":"number"},{"name":"ok","type":"bool"}]}]}`)
		input := filepath.Join(s.dir, "rows.ndjson")
		Expect(os.WriteFile(input, fourRows(1_000_000), 0o600)).To(Succeed())
		session, _ := startServe(s)
		Eventually(logOf(session)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))

		cmd := exec.Command(queryBin, "--store", s.path, "append", "--stream", "s1", "--kind", "ev", "--schema", schema, input)
		cmd.Env = withoutStoreEnv()
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		peak, err := runPeakRSS(cmd)
		Expect(err).NotTo(HaveOccurred(), errb.String())
		Expect(out.String()).To(Equal(`{"stream":"s1","kind":"ev","from":1,"to":1000000,"appended":1000000,"skipped":0,"replaced":0,"role":"spooled"}` + "\n"))
		GinkgoWriter.Printf("spooled append of 1 000 000 rows: peak RSS %.1f MiB\n", float64(peak)/(1<<20))
		Expect(peak).To(BeNumerically(">", 0), "VmHWM was read while the append ran")
		Expect(peak).To(BeNumerically("<", spooledRSSBound), "peak RSS %d MiB", peak>>20)
	})
})

// keyedRSSBound is the peak resident size an append of 1 000 000 rows of a
// kind with a key (the four columns, id the key) must stay under, as owner
// or through the spool: each row's key held in memory took about 90 MiB
// more than the rows' stream; with the keys past 1 MiB in a scratch file
// the append takes about what an append without a key does.
const keyedRSSBound = 100 << 20

var _ = Describe("query append of a kind with a key", Label("integration"), func() {
	DescribeTable("appends 1 000 000 rows with a peak resident size under a bound that holding their keys would pass, and refuses a key repeated at the end, writing nothing",
		func(spooled bool) {
			if runtime.GOOS != "linux" {
				Skip("reads the peak resident size from /proc")
			}
			s := newStore()
			schema := writeFile(s.dir, "evk.json", `{"kinds":[{"name":"evk","columns":[{"name":"id","type":"integer"},{"name":"name","type":"string"},{"name":"score","type":"number"},{"name":"ok","type":"bool"}],"key":["id"]}]}`)
			rows := fourRows(1_000_000)
			input := filepath.Join(s.dir, "rows.ndjson")
			Expect(os.WriteFile(input, rows, 0o600)).To(Succeed())
			role := "owner"
			if spooled {
				role = "spooled"
				session, _ := startServe(s)
				Eventually(logOf(session)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))
			}

			By("a key repeated by the last row: refused, nothing written")
			last := bytes.LastIndexByte(rows[:len(rows)-1], '\n') + 1
			repeated := filepath.Join(s.dir, "repeated.ndjson")
			Expect(os.WriteFile(repeated, append(rows[:last:last], []byte(`{"id":17,"name":"again"}`+"\n")...), 0o600)).To(Succeed())
			r := s.run("", "append", "--stream", "k1", "--kind", "evk", "--schema", schema, repeated)
			Expect(r.code).To(Equal(1), r.stderr)
			Expect(r.stderr).To(Equal("query: invalid: append to k1: kind evk: rows 17 and 1000000 have the same key\n"))
			Expect(s.run("", "meta", "--stream", "k1").stderr).To(ContainSubstring("not_found"))

			By("every key once: appended, under the bound")
			cmd := exec.Command(queryBin, "--store", s.path, "append", "--stream", "k1", "--kind", "evk", "--schema", schema, input)
			cmd.Env = withoutStoreEnv()
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			peak, err := runPeakRSS(cmd)
			Expect(err).NotTo(HaveOccurred(), errb.String())
			Expect(out.String()).To(Equal(`{"stream":"k1","kind":"evk","from":1,"to":1000000,"appended":1000000,"skipped":0,"replaced":0,"role":"` + role + `"}` + "\n"))
			GinkgoWriter.Printf("%s append of 1 000 000 keyed rows: peak RSS %.1f MiB\n", role, float64(peak)/(1<<20))
			Expect(peak).To(BeNumerically(">", 0), "VmHWM was read while the append ran")
			Expect(peak).To(BeNumerically("<", keyedRSSBound), "peak RSS %d MiB", peak>>20)
		},
		Entry("as the owner", false),
		Entry("through the spool, query serve owning the store", true),
	)
})

// runPeakRSS runs cmd and returns the highest VmHWM (the kernel's
// high-water mark of its resident size since it executed the binary)
// read from /proc while it ran. Unlike rusage's Maxrss, which counts the
// test process's size at the fork, it is the child's alone. It is read every few milliseconds; what the
// process adds in its last few milliseconds may be missed, which only
// lowers the figure near an exit that allocates nothing.
func runPeakRSS(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	status := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "status")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if hwm, ok := vmHWM(status); ok {
			peak = max(peak, hwm)
		}
		select {
		case err := <-done:
			return peak, err
		case <-tick.C:
		}
	}
}

// vmHWM reads the VmHWM line of a /proc status file, in bytes; false once
// the process is gone. (cmd.Start returns once the child has executed
// the binary, so the figure is never the test process's own.)
func vmHWM(status string) (int64, bool) {
	data, err := os.ReadFile(status)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}
