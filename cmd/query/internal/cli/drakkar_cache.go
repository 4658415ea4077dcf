// query drakkar cache set|get|del|ls and query drakkar peers: a worker's
// LWW cache through its owner (directly when no worker runs), and the
// fleet registry's cards with their online state.

package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/drakkar/registry"
	"github.com/fb46ecde/records/drakkar/worker"
	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
)

// drakkarCacheCmds are the cache and peers commands of query drakkar.
func (a *app) drakkarCacheCmds() []*cobra.Command {
	return []*cobra.Command{a.drakkarCacheCmd(), a.drakkarPeersCmd()}
}

// cacheArgs are the flags every cache command takes.
type cacheArgs struct{ storage, name string }

// needFile fails with code not_found, creating nothing, when worker W has
// no cache file in --storage: a read of a mistyped path must not make a
// storage folder and an empty cache there.
func (p *cacheArgs) needFile() error {
	if err := recorder.CheckWorkerName(p.name); err != nil {
		return err
	}
	path := filepath.Join(p.storage, dbfiles.CacheFileName(p.name))
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return recordstore.Errorf(recordstore.ErrNotFound, "no cache of worker %s: %s does not exist", recordstore.Quote(p.name), path)
	} else if err != nil {
		return fmt.Errorf("look for the cache of %s: %w", p.name, err)
	}
	return nil
}

func (p *cacheArgs) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&p.storage, "storage", "", "the worker's storage.dir (required)")
	cmd.Flags().StringVar(&p.name, "name", "", "the worker name (required)")
	_ = cmd.MarkFlagRequired("storage")
	_ = cmd.MarkFlagRequired("name")
}

func (a *app) drakkarCacheCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Read and write a Drakkar worker's LWW cache (<storage>/<name>-cache.db)",
		Long: `Read and write worker W's LWW cache. When no process runs W's cache, the
command owns it for its length (writes are flushed on exit); when a worker
W runs, writes go through its spool and the worker's LWW rule, and reads
use a read-only connection to the file.`,
		Args: cobra.NoArgs,
		RunE: needSubcommand,
	}
	cmd.AddCommand(a.cacheSetCmd(), a.cacheGetCmd(), a.cacheDelCmd(), a.cacheLsCmd())
	return cmd
}

// withCache opens W's cache (loops off), runs fn and closes it, flushing
// what fn wrote.
func (a *app) withCache(ctx context.Context, p cacheArgs, fn func(*cache.Cache) error) error {
	if err := recorder.CheckWorkerName(p.name); err != nil {
		return err
	}
	cfg := cache.DefaultConfig()
	cfg.Enabled, cfg.StorageDir, cfg.WorkerName = true, p.storage, p.name
	rep, err := a.workerReplica(p.name)
	if err != nil {
		return err
	}
	copts := cache.Options{Logger: a.logger(slog.LevelWarn), NoLoops: true}
	if rep != nil {
		copts.Replica = func() (owner.Replicator, owner.Fence, error) { return rep(worker.StoreCache) }
	}
	c, err := cache.Open(ctx, cfg, copts)
	if err != nil {
		return err
	}
	ferr := fn(c)
	cerr := c.Close(context.WithoutCancel(ctx))
	return errors.Join(ferr, cerr)
}

func (a *app) cacheSetCmd() *cobra.Command {
	var (
		p     cacheArgs
		scope string
		ttl   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "set --storage DIR --name W [--scope local|cluster|global] [--ttl D] KEY VALUE",
		Short: "Set KEY to VALUE (JSON text, stored as given)",
		Long: `Set KEY to VALUE, JSON text stored as given (size_bytes = its UTF-8
length), with --scope (default local) and --ttl (0: never expires). Bad
input (an empty key, a value that is not JSON, an unknown scope, a
negative ttl) fails with code invalid and writes nothing. Prints
{"key","spooled"}: spooled is true when a running worker applied it.`,
		Args: cobra.ExactArgs(2),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			return a.withCache(cmd.Context(), p, func(c *cache.Cache) error {
				if err := c.Set(cmd.Context(), args[0], args[1], cache.Scope(scope), ttl); err != nil {
					return err
				}
				return a.printOne(map[string]any{"key": args[0], "spooled": !c.Owner()})
			})
		}),
	}
	p.flags(cmd)
	cmd.Flags().StringVar(&scope, "scope", "local", "local, cluster or global")
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "time to live (0: never expires)")
	return cmd
}

func (a *app) cacheGetCmd() *cobra.Command {
	var p cacheArgs
	cmd := &cobra.Command{
		Use:   "get --storage DIR --name W KEY",
		Short: "Print KEY's entry (code not_found when it is absent or expired)",
		Long: `Print KEY's entry as one JSON object: key, scope, value (the stored JSON
text, as a string), size_bytes, created_at_ms, updated_at_ms,
expires_at_ms (or null) and origin_worker_id. An absent or expired key
fails with code not_found, as does a worker without a cache file in DIR
(nothing is created).`,
		Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if err := p.needFile(); err != nil {
				return err
			}
			return a.withCache(cmd.Context(), p, func(c *cache.Cache) error {
				e, ok, err := c.Get(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if !ok {
					return recordstore.Errorf(recordstore.ErrNotFound, "cache key %q", args[0])
				}
				return a.printOne(e)
			})
		}),
	}
	p.flags(cmd)
	return cmd
}

func (a *app) cacheDelCmd() *cobra.Command {
	var p cacheArgs
	cmd := &cobra.Command{
		Use:   "del --storage DIR --name W KEY",
		Short: "Delete KEY (it expires now; the cleanup removes its row)",
		Long: `Delete KEY: the entry is written again, already expired, through the
same LWW rule, so it is not found from now on and the cleanup removes
its row. A delete does not propagate to peers (the cache has no
tombstones): their copies live until they expire. Prints {"key"}.`,
		Args: cobra.ExactArgs(1),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			return a.withCache(cmd.Context(), p, func(c *cache.Cache) error {
				if err := c.Delete(cmd.Context(), args[0]); err != nil {
					return err
				}
				return a.printOne(map[string]any{"key": args[0]})
			})
		}),
	}
	p.flags(cmd)
	return cmd
}

func (a *app) cacheLsCmd() *cobra.Command {
	var p cacheArgs
	cmd := &cobra.Command{
		Use:   "ls --storage DIR --name W",
		Short: "Print the cache's entries that are not expired, one JSON line each, in key order",
		Long: `Print the cache's entries that are not expired, one JSON line each, in
key order. A worker without a cache file in DIR fails with code not_found
(nothing is created).`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if err := p.needFile(); err != nil {
				return err
			}
			return a.withCache(cmd.Context(), p, func(c *cache.Cache) error {
				rows, err := c.List(cmd.Context())
				if err != nil {
					return err
				}
				now := time.Now().UnixMilli()
				out := newPrinter(a.env.Stdout)
				for _, e := range rows {
					if e.Expired(now) {
						continue
					}
					if err := out.line(e); err != nil {
						return err
					}
				}
				return out.flush()
			})
		}),
	}
	p.flags(cmd)
	return cmd
}

// peerLine is one line of drakkar peers.
type peerLine struct {
	Worker     string `json:"worker"`
	Instance   string `json:"instance"`
	Cluster    string `json:"cluster"`
	URL        string `json:"url"`
	State      string `json:"state"`
	Online     bool   `json:"online"`
	LastSeen   string `json:"last_seen"`
	AgeSeconds int64  `json:"age_seconds"`
	Cache      any    `json:"cache"`
}

// needRegistryDir fails with code not_found, touching nothing, when the
// registry folder dir does not exist (no worker ever started there, or a
// mistyped --shared).
func needRegistryDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return recordstore.Errorf(recordstore.ErrNotFound, "no registry folder %s: no worker has started with this shared folder", dir)
	case err != nil:
		return fmt.Errorf("look for the registry folder: %w", err)
	case !fi.IsDir():
		return recordstore.Invalidf("registry folder %s is not a folder", dir)
	}
	return nil
}

func (a *app) drakkarPeersCmd() *cobra.Command {
	var (
		shared, storage string
		offline         time.Duration
	)
	cmd := &cobra.Command{
		Use:   "peers --shared DIR [--storage DIR] [--offline-after D]",
		Short: "Print the fleet registry's cards with their online state",
		Long: `Print every card of <shared>/fleet/workers (<storage>/fleet/workers when
--shared is empty), one JSON line each, sorted by worker: worker,
instance, cluster, url, state, online, last_seen (the card's modification
time), age_seconds (on the file server's clock, measured through a
.clock.<instance> marker this command touches and removes) and cache (the
card's marks, null when the worker does not serve the exchange). Online:
state running and an age of at most --offline-after (30s). A registry
folder that does not exist fails with code not_found.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if shared == "" && storage == "" {
				return usagef("peers needs --shared or --storage")
			}
			dir := registry.Dir(shared, storage)
			if err := needRegistryDir(dir); err != nil {
				return err
			}
			inst := dbfiles.NewHex16()
			peers, err := registry.ReadPeers(cmd.Context(), dir, inst, offline, a.logger(slog.LevelWarn))
			_ = registry.RemoveClock(dir, inst)
			if err != nil {
				return err
			}
			out := newPrinter(a.env.Stdout)
			for _, p := range peers {
				l := peerLine{Worker: p.Worker, Instance: p.Instance, Cluster: p.Cluster, URL: p.URL, State: p.State,
					Online: p.Online, LastSeen: dbfiles.FormatTime(p.LastSeen), AgeSeconds: int64(p.Age.Seconds())}
				if p.Features.Cache != nil {
					l.Cache = p.Features.Cache
				}
				if err := out.line(l); err != nil {
					return err
				}
			}
			return out.flush()
		}),
	}
	cmd.Flags().StringVar(&shared, "shared", "", "the fleet's shared.dir")
	cmd.Flags().StringVar(&storage, "storage", "", "storage.dir, when the fleet's shared.dir is empty")
	cmd.Flags().DurationVar(&offline, "offline-after", registry.DefaultOfflineAfter, "fleet.registry.offline_after_seconds")
	return cmd
}
