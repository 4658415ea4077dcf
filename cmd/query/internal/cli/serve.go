// query serve: holding the store and serving its read API over HTTP.

package cli

import (
	"log/slog"

	"github.com/fb46ecde/records/cmd/query/internal/serve"
	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/spf13/cobra"
)

// DefaultAddr is where query serve listens unless --addr says otherwise.
const DefaultAddr = "127.0.0.1:7070"

func (a *app) serveCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:7070]",
		Short: "Hold the store and serve its read API over HTTP until SIGINT/SIGTERM",
		Long: `Hold the store and serve its read API over HTTP until SIGINT or SIGTERM:

  GET /healthz
  GET /api/v1/streams[?kind=K]
  GET /api/v1/streams/{stream}
  GET /api/v1/streams/{stream}/rows[?after=SEQ&limit=N]   (NDJSON)
  GET /                                                   (an HTML page)

Port 0 picks a free port; the address actually bound is logged as
"msg=listening addr=HOST:PORT". Logs go to stderr (slog text).`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			log := a.logger(slog.LevelInfo)
			return a.withStore(ctx, sqlite.Options{Logger: log}, func(b recordstore.Backend) error {
				return serve.Run(ctx, addr, serve.NewHandler(b, log), log)
			})
		}),
	}
	cmd.Flags().StringVar(&addr, "addr", DefaultAddr, "host:port to listen on (port 0 picks a free one)")
	return cmd
}
