// query serve --fleet ROOT: the read API of every store of a tenant fleet,
// one lease per request, under /api/v1/tenants/{key}/.

package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/fleet/fleethttp"
	"github.com/fb46ecde/records/recordstore/ownermetrics"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
)

// fleetServeArgs are query serve's fleet flags.
type fleetServeArgs struct {
	root, mode, path, kinds string
	maxOpen                 int
	minResidency, idleClose time.Duration
	// lookaside keeps SQLite's default lookaside memory per connection.
	lookaside bool
	// maxExport is serve's --max-export-rows, for every tenant's rows.
	maxExport int
	// restoreMissing is --restore-missing (fleet.Options.RestoreMissing).
	restoreMissing bool
}

// fleetServeFlags are the names of the flags that only --fleet takes.
var fleetServeFlags = []string{"mode", "path", "kinds", "max-open", "min-residency", "idle-close", "sqlite-lookaside", "restore-missing"}

// addFlags adds the fleet flags to serve.
func (p *fleetServeArgs) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&p.root, "fleet", "", "serve every store of the fleet under this root (never created) instead of --store")
	f.StringVar(&p.mode, "mode", "tenant", "with --fleet: tenant or slot")
	f.StringVar(&p.path, "path", "", "with --fleet: the path template (default by mode)")
	f.StringVar(&p.kinds, "kinds", "", "with --fleet: a kind file whose kinds every store gets when opened")
	f.IntVar(&p.maxOpen, "max-open", 256, "with --fleet: soft limit of stores kept open")
	f.DurationVar(&p.minResidency, "min-residency", 2*time.Second, "with --fleet: a store used this recently is never closed for --max-open")
	f.DurationVar(&p.idleClose, "idle-close", 5*time.Minute, "with --fleet: close a store unused this long")
	f.BoolVar(&p.restoreMissing, "restore-missing", false, "with --fleet: restore a store whose file is missing from its replica before its first open, under its lease (needs --replica and --lease s3); an empty replica leaves it missing (not_found)")
	f.BoolVar(&p.lookaside, "sqlite-lookaside", false, "with --fleet: keep SQLite's lookaside memory on each connection (about 45 KB more per open store; off by default)")
}

// wanted reports whether the command line asks for a fleet: --fleet, or a
// flag only --fleet takes (which serveFleet then refuses without it).
func (p *fleetServeArgs) wanted(cmd *cobra.Command) bool {
	if p.root != "" || cmd.Flags().Changed("fleet") {
		return true
	}
	for _, name := range fleetServeFlags {
		if cmd.Flags().Changed(name) {
			return true
		}
	}
	return false
}

// check refuses, as usage errors, a fleet command line that cannot work:
// no root, a fleet flag without --fleet, --fleet with an explicit --store
// or --read-only, a bad --mode or a negative duration.
func (p *fleetServeArgs) check(cmd *cobra.Command) (fleet.Mode, error) {
	if p.root == "" {
		for _, name := range fleetServeFlags {
			if cmd.Flags().Changed(name) {
				return "", usagef("--%s needs --fleet ROOT", name)
			}
		}
		return "", usagef("--fleet must not be empty")
	}
	if f := cmd.Flag("store"); f != nil && f.Changed {
		return "", usagef("--fleet serves the stores under its root: it does not take --store")
	}
	if f := cmd.Flag("read-only"); f != nil && f.Changed {
		return "", usagef("--fleet does not take --read-only: each store is opened through its owner election")
	}
	if cmd.Flags().Changed("allow-writes") {
		return "", usagef("--fleet serves no web console: it does not take --allow-writes")
	}
	mode, err := fleet.ParseMode(p.mode)
	if err != nil {
		return "", usagef("--mode %q: want tenant or slot", p.mode)
	}
	if p.maxOpen <= 0 {
		return "", usagef("--max-open %d: want at least 1", p.maxOpen)
	}
	if p.minResidency < 0 || p.idleClose <= 0 {
		return "", usagef("--min-residency and --idle-close: want a duration above 0 (--min-residency may be 0)")
	}
	return mode, nil
}

// serveFleet listens on addr, opens the fleet at p.root (creating
// nothing) and serves it until ctx ends; then it ends follow responses,
// lets requests finish and closes the fleet, which closes every open store
// (as owner, after its final drain).
func (a *app) serveFleet(ctx context.Context, cmd *cobra.Command, addr string, p *fleetServeArgs) error {
	mode, err := p.check(cmd)
	if err != nil {
		return err
	}
	if err := checkAddr(addr); err != nil {
		return err
	}
	var kinds []recordstore.Kind
	if p.kinds != "" {
		file, err := a.readKindFile(p.kinds)
		if err != nil {
			return err
		}
		kinds = file.Kinds
	}
	log := a.logger(slog.LevelInfo)
	if !p.lookaside {
		// Before any store opens: a process serving hundreds of stores
		// spares SQLite's per-connection lookaside (see docs/fleet.md).
		if err := sqlite.ConfigureLookaside(0, 0); err != nil {
			log.Debug("sqlite lookaside left as it is", "err", err)
		} else {
			log.Debug("sqlite lookaside off")
		}
	}
	storeLog := a.logger(slog.LevelWarn)
	so := fleet.StoreOptions{Logger: storeLog, Build: "query " + buildVersion().Version}
	fo, err := a.fleetReplica(&so, p.restoreMissing)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	defer ln.Close() // when the fleet could not be opened; Serve closes it otherwise
	warnIfExposed(log, addr, ln.Addr())
	minRes := p.minResidency
	if minRes == 0 {
		minRes = -1 // fleet.Options: negative is none, 0 the default
	}
	f, err := fleet.Open(p.root, fleet.Options{
		Mode: mode, Path: p.path, Kinds: kinds,
		// A read never creates a store, in a slot fleet either.
		CreateOnDemand: fleet.OnDemandRefuse,
		MaxOpen:        p.maxOpen, MinResidency: minRes, IdleClose: p.idleClose,
		Open:           fleet.DefaultOpener(so),
		Logger:         storeLog,
		RestoreMissing: fo.RestoreMissing, Replica: fo.Replica,
	})
	if err != nil {
		return err
	}
	log.Info("fleet", "root", f.Root(), "mode", string(f.Mode()), "path", f.Template().String())
	reg := prometheus.NewRegistry()
	hm, err := ownermetrics.NewHTTP(reg, ownermetrics.HTTPOptions{
		Routes: append(fleethttp.RoutePatterns(), ownermetrics.MetricsPath), Follow: fleethttp.RouteFollow,
	})
	if err != nil {
		_ = f.Close()
		return err
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		ownermetrics.NewFleetCollector(f), ownermetrics.NewFleetReplicaCollector(f))
	metrics := ownermetrics.Handler(reg, log)
	done := make(chan struct{})
	h := fleethttp.Handler(f, fleethttp.Options{Logger: log, Done: done, MaxExportRows: p.maxExport})
	err = runHTTP(ctx, ln, hm.Wrap(ownermetrics.Mount(h, metrics)), log, func() { close(done) })
	if cerr := f.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	log.Info("stopped") // every store is closed: as owner, after its final drain
	return nil
}
