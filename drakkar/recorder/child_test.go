package recorder_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/recorder"
)

// childEnv, when set, makes the test binary a recorder child process: its
// value names what the child does (see runChild), and childConfig holds
// the recorder configuration as JSON.
const (
	childEnv    = "RECORDER_TEST_CHILD"
	childConfig = "RECORDER_TEST_CONFIG"
	childCount  = "RECORDER_TEST_COUNT"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

// runChild is the body of a child process:
//   - "write-until-killed": open the recorder, print "live <file>", then
//     write batches of COUNT events (task ids k-<batch>-<i>), printing
//     "acked <batch>" after each, until it is killed;
//   - "panic": record COUNT events in a goroutine that defers LastBreath
//     and panics (the process dies of it);
//   - "spool-writer": open the recorder (another process owns the worker's
//     store), write COUNT batches of 10 events with task ids
//     child-<batch>-<i>, printing each acknowledged batch, then close.
func runChild(mode string) int {
	var cfg recorder.Config
	if err := json.Unmarshal([]byte(os.Getenv(childConfig)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "child config:", err)
		return 3
	}
	n, _ := strconv.Atoi(os.Getenv(childCount))
	ctx := context.Background()
	rec, err := recorder.Open(ctx, cfg, recorder.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 4
	}
	switch mode {
	case "write-until-killed":
		fmt.Println("live", rec.LiveFile())
		for b := 0; ; b++ {
			if _, err := rec.Write(ctx, taskEvents("k-"+strconv.Itoa(b), n)); err != nil {
				fmt.Fprintln(os.Stderr, "write:", err)
				return 5
			}
			fmt.Println("acked", b)
		}
	case "panic":
		fmt.Println("live", rec.LiveFile())
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer rec.LastBreath()
			for _, e := range taskEvents("p", n) {
				rec.Record(e)
			}
			panic("the worker's goroutine dies")
		}()
		<-done
		// done is closed while the panic unwinds, before it ends the
		// process: wait for it here rather than return (exit 0) first.
		select {}
	case "latency":
		ev := taskEvents("lat", 1)
		for i := 0; i < n; i++ {
			t0 := time.Now()
			if _, err := rec.Write(ctx, ev); err != nil {
				fmt.Fprintln(os.Stderr, "write:", err)
				return 5
			}
			fmt.Printf("%.3f\n", float64(time.Since(t0).Microseconds())/1e3)
		}
		_ = rec.Close(ctx)
	case "spool-writer":
		for b := 0; b < n; b++ {
			w, err := rec.Write(ctx, taskEvents("child-"+strconv.Itoa(b), 10))
			if err != nil {
				fmt.Fprintln(os.Stderr, "write:", err)
				return 5
			}
			fmt.Printf("acked %d %v\n", b, w.Spooled)
			time.Sleep(15 * time.Millisecond) // spread over several rotations
		}
		if err := rec.Close(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "close:", err)
			return 6
		}
	}
	return 0
}

// taskEvents returns n task_completed events with task ids prefix-0...
func taskEvents(prefix string, n int) []recorder.Event {
	out := make([]recorder.Event, n)
	for i := range out {
		e := recorder.NewEvent(recorder.KindAnnotation, time.Now())
		e.TaskID = recorder.Ptr(prefix + "-" + strconv.Itoa(i))
		out[i] = e
	}
	return out
}

// child is a running child process and its stdout lines.
type child struct {
	cmd   *exec.Cmd
	lines chan string
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func startChild(mode string, cfg recorder.Config, count int) *child {
	b, err := json.Marshal(cfg)
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childConfig+"="+string(b), childCount+"="+strconv.Itoa(count))
	out, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	cmd.Stderr = GinkgoWriter
	Expect(cmd.Start()).To(Succeed())
	c := &child{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c
}
