// query serve: owning the store (or standing by to own it) and serving its
// read API over HTTP.

package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/ownermetrics"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/recordresults/console"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
)

// DefaultAddr is where query serve listens unless --addr says otherwise.
const DefaultAddr = "127.0.0.1:7070"

func (a *app) serveCmd() *cobra.Command {
	var addr string
	var allowWrites bool
	var rf readFlags
	var fa fleetServeArgs
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:7070]",
		Short: "Own the store (or stand by to) and serve its read API over HTTP until SIGINT/SIGTERM",
		Long: `Open the store through owner election and serve its read API over HTTP
until SIGINT or SIGTERM. When no process owns the store, serve becomes the
owner: it writes the live file, ingests what other processes spool, and
runs the retention sweeper. Otherwise it serves reads as a non-owner and
promotes itself to owner the moment the owner goes away. When the owner
runs a build of another catalog version, serve is detached: it cannot read
the store, so the stream routes answer 503 with code catalog_version, and
it never takes the store over. Each role is logged as
"msg=role role=owner|non-owner|detached|closed" (detached as a warning).

  GET /healthz
  GET /metrics                                            (Prometheus text format)
  GET /api/v1/status                                      (the owner's status)
  GET /api/v1/batches/{batch}[?wait=D]                    (a spooled batch's outcome)
  GET /api/v1/streams[?kind=K]
  GET /api/v1/streams/{stream}
  GET /api/v1/streams/{stream}/rows[?after=SEQ&limit=N]   (NDJSON)
  GET /api/v1/streams/{stream}/follow[?after=SEQ&limit=N] (NDJSON, live)
  GET /                                                   (an HTML page)
  GET /console/                                           (the web console; docs/console.md)

--views FILE serves the views of a views file (GET /api/v1/views, and
/api/v1/views/{view}); --search KIND=COL,... names the columns q searches
in KIND's streams; --max-export-rows caps one rows or view response (default
1000000; 0: no cap): a larger export is refused (400, invalid) when that
is known before its first byte, else cut off without a clean end. A view that does not compile, or a search column
the kind lacks, fails serve before it serves. See docs/reading.md for the
query parameters of the rows, page and follow routes.

The console only reads unless --allow-writes is given: then its spool page
can move a failed batch back to incoming/ (as query spool retry does);
without it that request is refused with 403 (code read_only).

Port 0 picks a free port; the address actually bound is logged as
"msg=listening addr=HOST:PORT". The API has no authentication: an --addr
that is not loopback (0.0.0.0, ":PORT", "[::]", a public address) is
logged as a warning naming it. Logs go to stderr (slog text). On SIGINT
or SIGTERM it stops accepting connections, ends follow responses, answers
batch waits with 202 (still pending), lets other requests finish, and as
owner drains the spool before it exits 0. An --addr that is no HOST:PORT
is a usage error; an address in use fails before the store is opened.

With --fleet ROOT (and --mode, --path, --kinds as query fleet takes them)
serve serves every store of that fleet instead of --store, which it then
refuses: GET /api/v1/tenants lists them, and /api/v1/tenants/{key}/...
is the read API above of KEY's store (docs/fleet.md, "Serving a fleet").`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if fa.wanted(cmd) {
				if rf.views != "" || len(rf.search) > 0 {
					return usagef("--views and --search name one store's kinds: they do not go with --fleet")
				}
				if err := rf.check(); err != nil {
					return err
				}
				fa.maxExport = rf.maxExport
				return a.serveFleet(cmd.Context(), cmd, addr, &fa)
			}
			if err := checkAddr(addr); err != nil {
				return err
			}
			if err := rf.check(); err != nil {
				return err
			}
			return a.serve(cmd.Context(), addr, allowWrites, &rf)
		}),
	}
	cmd.Flags().StringVar(&addr, "addr", DefaultAddr, "host:port to listen on (port 0 picks a free one)")
	cmd.Flags().BoolVar(&allowWrites, "allow-writes", false, "let the web console retry failed spool batches (default: the console only reads)")
	rf.add(cmd)
	fa.addFlags(cmd)
	return cmd
}

// checkAddr refuses, as a usage error, an --addr that is not HOST:PORT
// with a port number (or service name) TCP knows.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return usagef("--addr %q: want HOST:PORT, like 127.0.0.1:7070 (port 0 picks a free one): %v", addr, err)
	}
	return nil
}

// serve listens on addr first, so that an address in use fails before the
// store is opened (and perhaps taken over), then serves the store.
func (a *app) serve(ctx context.Context, addr string, allowWrites bool, rf *readFlags) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	defer ln.Close() // when the store could not be opened; Serve closes it otherwise
	log := a.logger(slog.LevelInfo)
	warnIfExposed(log, addr, ln.Addr())
	reg := prometheus.NewRegistry()
	om, err := ownermetrics.New(reg)
	if err != nil {
		return err
	}
	hm, err := ownermetrics.NewHTTP(reg, ownermetrics.HTTPOptions{Routes: serveRoutes(), Follow: recordresults.RouteFollow})
	if err != nil {
		return err
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opts := records.Options{Owner: records.OwnerOptions{
		// The store's own lines (owner, sqlite) only from warnings up,
		// unless --log-level asks for more: serve reports its role itself.
		Logger:  a.logger(slog.LevelWarn),
		Events:  owner.Events{Role: func(r owner.Role) { logRole(log, r) }},
		Metrics: om.Hooks(),
	}}
	err = a.withOwned(ctx, opts, func(st *records.Store) error {
		rd, maxExport, err := rf.options(ctx, st.Backend())
		if err != nil {
			return err
		}
		done := make(chan struct{})
		hopts := recordresults.HandlerOptions{Logger: log, Status: st.Status, Batches: st, Done: done, Reader: rd, MaxExportRows: maxExport}
		if a.readOnly {
			hopts.Batches = nil // a read-only store has no spool to look batches up in
		}
		copts := console.Options{Backend: st.Backend(), Status: st.Status, Spool: st.Spool(), AllowWrites: allowWrites, Logger: log}
		if a.readOnly {
			copts.Spool = nil // a read-only store has no spool
		}
		h := withConsole(recordresults.Handler(st.Backend(), hopts), console.Handler(copts))
		if err := reg.Register(ownermetrics.NewStoreCollector(ownermetrics.ViewOf(st))); err != nil {
			return err
		}
		reg.MustRegister(ownermetrics.NewReplicaCollector(st.Status))
		h = ownermetrics.Mount(h, ownermetrics.Handler(reg, log))
		return runHTTP(ctx, ln, hm.Wrap(h), log, func() { close(done) })
	})
	if err != nil {
		return err
	}
	log.Info("stopped") // the store is closed: as owner, after its final drain
	return nil
}

// serveRoutes are the route labels of serve's request metrics: the read
// API's, the console's and /metrics.
func serveRoutes() []string {
	routes := append(recordresults.RoutePatterns(), console.RoutePatterns()...)
	return append(routes, ownermetrics.MetricsPath)
}

// withConsole routes the paths under console.Prefix to the console and
// everything else to the read API.
func withConsole(api, c http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(console.Prefix, c)
	mux.Handle("/", api)
	return mux
}

// warnIfExposed logs a warning naming the address when serve listens
// anywhere but on a loopback address: the API has no authentication, so
// whoever reaches the address reads every stream. The bound address
// decides (so a host name is judged by what it resolved to); a wildcard
// (":7070", "0.0.0.0:7070", "[::]:7070") is not loopback.
func warnIfExposed(log *slog.Logger, addr string, bound net.Addr) {
	if isLoopback(bound) {
		return
	}
	log.Warn("listening on a non-loopback address: the API has no authentication, anyone who can reach it reads every stream",
		"addr", addr, "bound", bound.String())
}

// isLoopback reports whether a is a TCP address on a loopback IP.
func isLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// logRole logs the role serve took. Detached is a warning: a detached
// serve answers every read with catalog_version for as long as it runs.
func logRole(log *slog.Logger, r owner.Role) {
	if r == owner.RoleDetached {
		log.Warn("role", "role", string(r),
			"reason", "the store's owner runs another catalog version: reads fail with catalog_version (HTTP 503), writes go through the spool, and this process never takes the store over")
		return
	}
	log.Info("role", "role", string(r))
}
