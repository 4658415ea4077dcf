// query fleet: the stores of a tenant fleet under one root — list, provision,
// backup, import, delete, stats and append — as recordstore/fleet does them.

package cli

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/spf13/cobra"
)

// fleetArgs are the flags every fleet verb shares.
type fleetArgs struct {
	root, mode, path, kinds string
	// restoreMissing is --restore-missing (fleet.Options.RestoreMissing).
	restoreMissing bool
}

func (a *app) fleetCmd() *cobra.Command {
	var p fleetArgs
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "List, provision, back up, import, delete and append to the stores of a tenant fleet",
		Long: `fleet works on the stores of a fleet: one records store per tenant
(--mode tenant) or per routing slot (--mode slot) under --root, placed by
the path template --path (default {bucket}/{tenant}.db or
{bucket}/slot-{slot}.db). A key is written as list prints it: tenant:<id>
or slot:<nnnnn> (tenant/<id> and slot/<n> are also taken). A store's
path is printed relative to the root, with '/' separators, by every verb
(list, provision, import, delete).

No verb creates the root: each stops (code not_found) when it does not
exist. The store of --store must not lie inside the root. Each store has
its own owner election, so these verbs are safe while services use the
fleet: delete refuses (in_use) while another process owns the store.`,
		Args: cobra.NoArgs,
		RunE: needSubcommand,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&p.root, "root", "", "the fleet's root folder (required; never created)")
	pf.StringVar(&p.mode, "mode", "tenant", "tenant or slot")
	pf.StringVar(&p.path, "path", "", "the path template (default by mode)")
	pf.StringVar(&p.kinds, "kinds", "", "a kind file whose kinds every new or imported store gets")
	pf.BoolVar(&p.restoreMissing, "restore-missing", false, "restore a store whose file is missing from its replica before its first open, under its lease (needs --replica and --lease s3); an empty replica leaves it missing")
	cmd.AddCommand(
		a.fleetListCmd(&p), a.fleetProvisionCmd(&p), a.fleetBackupCmd(&p),
		a.fleetImportCmd(&p), a.fleetDeleteCmd(&p), a.fleetStatsCmd(&p),
		a.fleetAppendCmd(&p),
		a.fleetRestoreCmd(&p), a.fleetVerifyCmd(&p),
	)
	return cmd
}

// openFleet opens the fleet of the flags, with no sweeper (one command is
// one short run).
func (a *app) openFleet(p *fleetArgs) (*fleet.Fleet, error) {
	if p.root == "" {
		return nil, usagef("--root is required")
	}
	mode, err := fleet.ParseMode(p.mode)
	if err != nil {
		return nil, usagef("--mode %q: want tenant or slot", p.mode)
	}
	var kinds []recordstore.Kind
	if p.kinds != "" {
		file, err := a.readKindFile(p.kinds)
		if err != nil {
			return nil, err
		}
		kinds = file.Kinds
	}
	so := fleet.StoreOptions{Logger: a.logger(slog.LevelWarn)}
	fo, err := a.fleetReplica(&so, p.restoreMissing)
	if err != nil {
		return nil, err
	}
	return fleet.Open(p.root, fleet.Options{
		Mode: mode, Path: p.path, Kinds: kinds, SweepInterval: -1,
		Outside:        []string{a.storePath},
		Logger:         a.logger(slog.LevelWarn),
		Open:           fleet.DefaultOpener(so),
		RestoreMissing: fo.RestoreMissing, Replica: fo.Replica,
	})
}

// withFleet runs fn on the fleet of the flags and the key in args[0]
// (when key is set), closing the fleet after.
func (a *app) withFleet(p *fleetArgs, args []string, key bool, fn func(ctx context.Context, f *fleet.Fleet, k fleet.Key) error) func(*cobra.Command, []string) error {
	return runE(func(cmd *cobra.Command, _ []string) error {
		f, err := a.openFleet(p)
		if err != nil {
			return err
		}
		defer f.Close()
		var k fleet.Key
		if key {
			if k, err = f.ParseKey(args[0]); err != nil {
				return err
			}
		}
		return fn(cmd.Context(), f, k)
	})
}

func (a *app) fleetListCmd(p *fleetArgs) *cobra.Command {
	var (
		open  bool
		after string
		limit int
	)
	cmd := &cobra.Command{
		Use:   "list [--open | --after KEY --limit N]",
		Short: "Print one JSON line per store: key, path, size",
		Long: `Walk the root and print one JSON line per store, sorted by path:
{"key","path","size"}. Symlinks, SQLite's and the engine's sidecars, spool
and staging folders, stray files and misplaced stores (a file recording
another key than its path names) are skipped; each skipped file is told on
stderr. A store's identity (the key its file records) is read only from
a file the root's index (.fleet-index) does not know unchanged — same
device, inode, size, mtime and ctime as when it was last read — so a
list of an unchanged fleet opens no store; the index is then rewritten.
--open also checks each store read-only (quick_check), opening every
one, and, after printing them all (an unreadable one with "error"),
fails with code unreadable when one cannot be read. No store is written.

--limit N (1 to 10000) and --after KEY page through the stores sorted by
key instead, as GET /api/v1/tenants of serve --fleet does: at most N
stores after KEY (exclusive; default: from the first; --after alone
pages by 1000), reading only the page's identities (none the index
knows unchanged), then, when stores may
lie after the page, one last line {"next":KEY}: the --after of the next
page. Misplaced files are left out; they are not told on stderr.`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&open, "open", false, "check each store read-only; fail when one cannot be read")
	cmd.Flags().StringVar(&after, "after", "", "page: the stores whose key sorts after KEY")
	cmd.Flags().IntVar(&limit, "limit", 0, "page: at most N stores (1 to 10000), then {\"next\":KEY} when more may follow")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		paged := c.Flags().Changed("after") || c.Flags().Changed("limit")
		if paged && open {
			return usagef("--open checks every store: it does not page (--after, --limit)")
		}
		if paged && !c.Flags().Changed("limit") {
			limit = 1000
		}
		if paged {
			return a.withFleet(p, args, false, func(ctx context.Context, f *fleet.Fleet, _ fleet.Key) error {
				return a.listPage(ctx, f, after, limit)
			})(c, args)
		}
		return a.withFleet(p, args, false, func(ctx context.Context, f *fleet.Fleet, _ fleet.Key) error {
			l, err := f.List(ctx, fleet.ListOptions{Open: open})
			pr := newPrinter(a.env.Stdout)
			for _, e := range l.Stores {
				if perr := pr.line(e); perr != nil {
					return perr
				}
			}
			if perr := pr.flush(); perr != nil {
				return perr
			}
			for _, s := range l.Skipped {
				a.logger(slog.LevelWarn).Warn("skipped", "path", s.Path, "reason", s.Reason)
			}
			return err
		})(c, args)
	}
	return cmd
}

// listPage prints one page of the fleet's stores by key, then {"next"}
// when another page may follow.
func (a *app) listPage(ctx context.Context, f *fleet.Fleet, after string, limit int) error {
	page, err := f.ListPage(ctx, after, limit)
	if err != nil {
		return err
	}
	pr := newPrinter(a.env.Stdout)
	for _, e := range page.Stores {
		if err := pr.line(e); err != nil {
			return err
		}
	}
	if page.Next != "" {
		if err := pr.line(struct {
			Next string `json:"next"`
		}{page.Next}); err != nil {
			return err
		}
	}
	return pr.flush()
}

// fleetDone is the output of provision, import, delete and backup.
type fleetDone struct {
	Key string `json:"key"`
	// Path is the store's path relative to the root, '/' separators, as
	// list prints it (backup: the destination, absolute).
	Path string `json:"path"`
}

// storeDone is the output of a verb that made or removed the store of k.
func (a *app) storeDone(f *fleet.Fleet, k fleet.Key) error {
	rel, err := f.Template().Path(k)
	if err != nil {
		return err
	}
	return a.printOne(fleetDone{Key: k.String(), Path: rel})
}

func (a *app) fleetProvisionCmd(p *fleetArgs) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "provision KEY",
		Short: "Create the store of KEY (code exists when it has one)",
		Args:  cobra.ExactArgs(1),
	}
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return a.withFleet(p, args, true, func(ctx context.Context, f *fleet.Fleet, k fleet.Key) error {
			if err := f.Provision(ctx, k); err != nil {
				return err
			}
			return a.storeDone(f, k)
		})(c, args)
	}
	return cmd
}

func (a *app) fleetBackupCmd(p *fleetArgs) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backup KEY DEST",
		Short: "Write a consistent copy of KEY's store to the new file DEST (0600)",
		Long: `Write a consistent copy of KEY's store to DEST with VACUUM INTO, also
while another process writes the store, and print {"key","path"} (path:
DEST, absolute). DEST is checked first: it must not be empty (code
invalid) or exist (code exists; it is never replaced or followed), its
folder must exist (code not_found; none is created) and lie outside the
root (code invalid: a backup there would be a stray), and it and every
folder above it must belong to root or to you and not be writable by
others unless sticky (code unsafe_dest).`,
		Args: cobra.ExactArgs(2),
	}
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return a.withFleet(p, args, true, func(ctx context.Context, f *fleet.Fleet, k fleet.Key) error {
			if err := f.Backup(ctx, k, args[1]); err != nil {
				return err
			}
			dest, err := filepath.Abs(args[1])
			if err != nil {
				return err
			}
			return a.printOne(fleetDone{Key: k.String(), Path: dest})
		})(c, args)
	}
	return cmd
}

func (a *app) fleetImportCmd(p *fleetArgs) *cobra.Command {
	var adopt bool
	cmd := &cobra.Command{
		Use:   "import KEY SRC [--adopt]",
		Short: "Bring the backup SRC of KEY's store back into the fleet",
		Long: `Copy SRC (left unchanged) into a staging folder, check it (integrity_check;
it must record KEY; the fleet's kinds are added) and publish it as KEY's
store without replacing anything. A source that fails a check is code
invalid_source; a key that has a store, code exists.

--adopt also takes a store that records no fleet key — a single store
not made by a fleet, given by its live file (<dir>/v1/<name> of
query --store <dir>/<name>) — and records KEY in the copy. A source
recording another key is still invalid_source.`,
		Args: cobra.ExactArgs(2),
	}
	cmd.Flags().BoolVar(&adopt, "adopt", false, "give a store that records no fleet key the identity of KEY (in the copy)")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return a.withFleet(p, args, true, func(ctx context.Context, f *fleet.Fleet, k fleet.Key) error {
			imp := f.Import
			if adopt {
				imp = f.Adopt
			}
			if err := imp(ctx, k, args[1]); err != nil {
				return err
			}
			return a.storeDone(f, k)
		})(c, args)
	}
	return cmd
}

func (a *app) fleetDeleteCmd(p *fleetArgs) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "delete KEY --force",
		Short: "Remove KEY's store, its sidecars and its spool for good",
		Long: `Remove KEY's store: the file, SQLite's sidecars, the owner's files, the
spool, and the bucket folders that become empty (never the root). It
destroys data, so --force is required. While another process owns the
store it fails with code in_use and removes nothing.`,
		Args: cobra.ExactArgs(1),
	}
	cmd.Flags().BoolVar(&force, "force", false, "confirm that the store's data is to be destroyed")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if !force {
			return usagef("delete destroys data: add --force")
		}
		return a.withFleet(p, args, true, func(ctx context.Context, f *fleet.Fleet, k fleet.Key) error {
			if err := f.Delete(ctx, k); err != nil {
				return err
			}
			return a.storeDone(f, k)
		})(c, args)
	}
	return cmd
}

func (a *app) fleetStatsCmd(p *fleetArgs) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Print the number of stores, their bytes and buckets (found as list finds them)",
		Args:  cobra.NoArgs,
	}
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return a.withFleet(p, args, false, func(ctx context.Context, f *fleet.Fleet, _ fleet.Key) error {
			s, err := f.DiskStats(ctx)
			if err != nil {
				return err
			}
			return a.printOne(s)
		})(c, args)
	}
	return cmd
}
