// An example of a Go program that embeds a worker.

package worker_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/drakkar/worker"
)

// A program embeds a worker: it loads the configuration, opens the
// worker, records events and uses the cache, and closes it on its way out
// (a real program calls worker.Run with a context that ends on SIGTERM).
func Example() {
	dir, _ := os.MkdirTemp("", "worker-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	cfg, err := worker.Load(worker.LoadOptions{Sets: []string{
		"worker.name=w1", "cluster.name=search", "storage.dir=" + dir, "ui.addr=127.0.0.1:0", "cache.enabled=true",
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := worker.Open(ctx, cfg, worker.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	w.Record(recorder.NewEvent(recorder.KindTaskStarted, time.Now()))
	_ = w.Cache().Set(ctx, "greeting", `"hello"`, cache.ScopeCluster, time.Hour)
	e, found, _ := w.Cache().Get(ctx, "greeting")
	fmt.Println(found, e.Value)
	fmt.Println(w.Close(ctx))
	// Output:
	// true "hello"
	// <nil>
}
