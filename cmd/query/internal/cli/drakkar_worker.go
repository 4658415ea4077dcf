// query drakkar worker: run one Drakkar worker (recorder, archive pass,
// cache and exchange, registry card, debug API) until SIGINT/SIGTERM.

package cli

import (
	"log/slog"

	"github.com/fb46ecde/records/drakkar/worker"
	"github.com/spf13/cobra"
)

func (a *app) drakkarWorkerCmd() *cobra.Command {
	var file, name, cluster, storage, shared, addr string
	var set []string
	var insecure bool
	cmd := &cobra.Command{
		Use:   "worker [--config FILE] [--name W] [--cluster C] [--storage DIR] [--shared DIR] [--addr HOST:PORT] [--insecure-listen] [--set key=value]...",
		Short: "Run one Drakkar worker and its debug API until SIGINT/SIGTERM",
		Long: `Run one Drakkar worker until SIGINT or SIGTERM: the flight recorder
(rotating its live file in --storage, sealing and moving each into
<shared>/history/<cluster>/, with the archive pass after each rotation when
history.archive.enabled), the LWW cache and its exchange pull, the registry
card in <shared>/fleet/workers/ and the debug API (docs/drakkar.md, "Running a
fleet on one host"). Events reach it through 'query drakkar record' with the
same --storage and --name (the spool), or from a Go program that embeds
drakkar/worker.

The configuration is the YAML file of --config (the keys of docs/drakkar.md),
then the DRAKKAR_* environment variables (the key in upper case, each '.'
written as '__': DRAKKAR_UI__RECORDER__MAX_BUFFER), then the flags: --set
key=value (repeatable), then --name (worker.name), --cluster (cluster.name),
--storage (storage.dir), --shared (shared.dir), --addr (ui.addr, default
127.0.0.1:8780; port 0 picks a free one), --insecure-listen
(ui.insecure_listen=true). An address off the loopback (0.0.0.0, a LAN
address) without ui.auth_token fails with code invalid before anything is
created, unless --insecure-listen says it is meant. An unknown key inside ui.recorder
is ignored with a warning (config_key_ignored); any other unknown key, a
moved key or a bad value fails with code invalid, naming the key, before
anything is created.

The bound address is logged as "msg=listening addr=HOST:PORT". On SIGINT or
SIGTERM the worker drains within executor.drain_timeout_seconds: requests in
flight finish, the cache flushes, the recorder flushes and seals its live
file and moves it into the history folder while time remains, and the
registry card is marked stopped; then the command exits 0.

With --replica URL (and --lease s3) the recorder replicates under
URL/<name>/recorder and the cache under URL/<name>/cache while this process
owns them; a replicated recorder does not rotate (its live file is sealed
on exit). See docs/drakkar.md, "Replicating a worker's stores".`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			sets := append([]string(nil), set...)
			for _, f := range []struct{ flag, key string }{{"name", "worker.name"}, {"cluster", "cluster.name"},
				{"storage", "storage.dir"}, {"shared", "shared.dir"}, {"addr", "ui.addr"}} {
				if cmd.Flags().Changed(f.flag) {
					v, _ := cmd.Flags().GetString(f.flag)
					sets = append(sets, f.key+"="+v)
				}
			}
			if insecure {
				sets = append(sets, "ui.insecure_listen=true")
			}
			log := a.logger(slog.LevelInfo)
			cfg, err := worker.Load(worker.LoadOptions{File: file, Getenv: a.env.Getenv, Sets: sets, Logger: log})
			if err != nil {
				return err
			}
			rep, err := a.workerReplica(cfg.Recorder.WorkerName)
			if err != nil {
				return err
			}
			return worker.Run(cmd.Context(), cfg, worker.Options{Logger: log, Replica: rep})
		}),
	}
	f := cmd.Flags()
	f.StringVar(&file, "config", "", "the worker's YAML configuration file")
	f.StringVar(&name, "name", "", "worker.name")
	f.StringVar(&cluster, "cluster", "", "cluster.name")
	f.StringVar(&storage, "storage", "", "storage.dir: the worker's own files ('' = memory-only)")
	f.StringVar(&shared, "shared", "", "shared.dir: history, archives, merge results, registry cards ('' = storage.dir)")
	f.StringVar(&addr, "addr", "", "ui.addr: where the debug API listens (default "+worker.DefaultAddr+")")
	f.BoolVar(&insecure, "insecure-listen", false, "ui.insecure_listen: serve the debug API off the loopback without ui.auth_token")
	f.StringArrayVar(&set, "set", nil, "a configuration key=value (repeatable)")
	return cmd
}
