// The test binary as a worker process: a cache, a registry card and the
// exchange route on a loopback port, writing random entries — so that
// the convergence specs run real processes, killed and restarted.

package cache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/registry"
)

// childEnv, when set, makes the test binary a child process; its value is
// a childSpec as JSON.
const childEnv = "DRAKKAR_CACHE_TEST_CHILD"

// childSpec says what a child does.
type childSpec struct {
	// Mode is "worker" (serve and write Writes random entries, then
	// serve until SIGTERM) or "set" (Set Key once as a second process of
	// the worker, print its role, exit).
	Mode    string
	Storage string
	Shared  string
	Worker  string
	Cluster string
	Seed    uint64
	Writes  int
	Key     string
	Value   string
	// AtMS, in mode "set", is the child's clock (0: the wall clock).
	AtMS int64
}

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		var s childSpec
		if err := json.Unmarshal([]byte(v), &s); err != nil {
			fmt.Fprintln(os.Stderr, "child spec:", err)
			os.Exit(3)
		}
		os.Exit(runChild(s))
	}
	os.Exit(m.Run())
}

// lazyPeers lists the peers of a registry set after it opened.
type lazyPeers struct {
	mu  sync.Mutex
	reg *registry.Registry
}

func (l *lazyPeers) Peers() []registry.Peer {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reg == nil {
		return nil
	}
	return l.reg.Peers()
}

// childConfig is a worker's cache with short intervals.
func childConfig(s childSpec) cache.Config {
	cfg := cache.DefaultConfig()
	cfg.Enabled, cfg.StorageDir, cfg.WorkerName, cfg.ClusterName = true, s.Storage, s.Worker, s.Cluster
	cfg.FlushInterval, cfg.CleanupInterval, cfg.ExchangeInterval = 100*time.Millisecond, 200*time.Millisecond, 300*time.Millisecond
	cfg.MaxMemoryEntries = 16
	return cfg
}

func runChild(s childSpec) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if s.Mode == "set" {
		opts := cache.Options{NoLoops: true}
		if s.AtMS != 0 {
			opts.Now = func() time.Time { return time.UnixMilli(s.AtMS) }
		}
		c, err := cache.Open(ctx, childConfig(s), opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, "open:", err)
			return 4
		}
		defer c.Close(context.Background())
		if err := c.Set(ctx, s.Key, s.Value, cache.ScopeGlobal, 0); err != nil {
			fmt.Fprintln(os.Stderr, "set:", err)
			return 5
		}
		fmt.Println("owner", c.Owner())
		return 0
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		return 4
	}
	url := "http://" + ln.Addr().String()
	peers := &lazyPeers{}
	// A coarse clock: writes of different workers often share one
	// updated_at_ms, so the tiebreak is exercised.
	now := func() time.Time { return time.Now().Truncate(50 * time.Millisecond) }
	c, err := cache.Open(ctx, childConfig(s), cache.Options{Now: now, Peers: peers})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 4
	}
	reg, err := registry.Open(ctx, registry.Options{Dir: registry.Dir(s.Shared, s.Storage), Worker: s.Worker,
		Cluster: s.Cluster, URL: url, Heartbeat: 200 * time.Millisecond, Refresh: 200 * time.Millisecond,
		OfflineAfter: 5 * time.Second, Features: c.CardFeatures})
	if err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		return 4
	}
	peers.mu.Lock()
	peers.reg = reg
	peers.mu.Unlock()
	var done atomic.Bool
	mux := http.NewServeMux()
	mux.Handle(cache.ChangesPath, c.ExchangeHandler())
	mux.HandleFunc("/dump", func(w http.ResponseWriter, r *http.Request) {
		rows, err := c.List(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"done": done.Load(), "rows": rows})
	})
	go func() { _ = http.Serve(ln, mux) }()
	fmt.Println("ready", url)

	rng := rand.New(rand.NewPCG(s.Seed, 1))
	for i := 0; i < s.Writes && ctx.Err() == nil; i++ {
		value := fmt.Sprintf(`{"by": %q, "i": %d}`, s.Worker, i)
		var err error
		switch n := rng.IntN(10); {
		case n < 4:
			err = c.Set(ctx, fmt.Sprintf("c-%d", rng.IntN(8)), value, cache.ScopeCluster, 0)
		case n < 8:
			err = c.Set(ctx, fmt.Sprintf("g-%d", rng.IntN(8)), value, cache.ScopeGlobal, 0)
		case n < 9:
			err = c.Set(ctx, fmt.Sprintf("l-%d", rng.IntN(4)), value, cache.ScopeLocal, 0)
		default: // deleted through expiry
			err = c.Set(ctx, fmt.Sprintf("e-%d", rng.IntN(4)), value, cache.ScopeGlobal, 300*time.Millisecond)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "set:", err)
			return 5
		}
		fmt.Println("wrote", i)
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
	}
	done.Store(true)
	fmt.Println("done")
	<-ctx.Done()
	_ = reg.Close(context.Background())
	if err := c.Close(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		return 6
	}
	return 0
}
