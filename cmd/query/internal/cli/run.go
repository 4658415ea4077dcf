// The root command, its global flags, and Run, the entry point main calls.

package cli

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// DefaultStore is the store path used when neither --store nor
// $RECORDS_STORE is given.
const DefaultStore = "./data/records.sqlite"

// StoreEnv names the environment variable that overrides DefaultStore.
const StoreEnv = "RECORDS_STORE"

// Env is what a run of the command talks to: its standard streams and its
// environment.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// app holds the global flags and the environment of one run.
type app struct {
	env       Env
	storePath string
	readOnly  bool          // --read-only
	replica   string        // --replica
	lease     string        // --lease
	leaseTTL  time.Duration // --lease-ttl
	logLevel  enumValue
}

// Run executes the query command line args (without the program name) and
// returns the process exit code. ctx ends when the process is asked to stop;
// long-running commands (scan --follow, serve) then return cleanly.
func Run(ctx context.Context, args []string, env Env) int {
	a := &app{env: env}
	root := a.rootCmd()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil {
		return report(env.Stderr, cmd, err)
	}
	return ExitOK
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "query",
		Short: "Declare kinds, append, scan and serve the streams of a records store",
		Long: `query works on one records store, a SQLite file chosen with --store.

Success prints JSON on stdout and exits 0. A failure prints one line
"query: <code>: <message>" on stderr and exits 1; a malformed command
line exits 2.`,
		Args:          cobra.NoArgs,
		RunE:          needSubcommand,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetHelpCommand(helpCmd(root))
	root.SetIn(a.env.Stdin)
	root.SetOut(a.env.Stdout)
	root.SetErr(a.env.Stderr)

	store := a.env.Getenv(StoreEnv)
	if store == "" {
		store = DefaultStore
	}
	a.logLevel = newEnum("", "debug", "info", "warn", "error")
	pf := root.PersistentFlags()
	pf.StringVar(&a.storePath, "store", store, "path of the store; defaults to $"+StoreEnv+", else "+DefaultStore)
	pf.BoolVar(&a.readOnly, "read-only", false, "open the store read-only, without taking part in the owner election: nothing is created or written, writes fail with read_only")
	a.registerReplica(pf)
	pf.Var(&a.logLevel, "log-level", "log level on stderr: debug, info, warn or error (default info for serve, warn otherwise)")

	root.AddCommand(
		a.kindCmd(),
		a.appendCmd(),
		a.awaitCmd(),
		a.scanCmd(),
		a.exportCmd(),
		a.viewCmd(),
		a.metaCmd(),
		a.streamsCmd(),
		a.sealCmd(),
		a.reopenCmd(),
		a.deleteCmd(),
		a.expireCmd(),
		a.trimCmd(),
		a.spoolCmd(),
		a.drakkarCmd(),
		a.fleetCmd(),
		a.statusCmd(),
		a.restoreCmd(),
		a.replicaCmd(),
		a.serveCmd(),
		a.versionCmd(),
	)
	return root
}

// helpCmd is "query help [COMMAND...]": the help of the command named, like
// COMMAND --help. A name that is no command is a usage error (exit 2), as
// it is anywhere else on the command line.
func helpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(_ *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil || target == nil || len(rest) > 0 {
				return usagef("unknown help topic %q", strings.Join(args, " "))
			}
			target.InitDefaultHelpFlag() // listed as --help lists it
			return target.Help()
		},
	}
}

// needSubcommand is the body of a command that only groups others.
func needSubcommand(cmd *cobra.Command, _ []string) error {
	return usagef("%s needs a subcommand", cmd.CommandPath())
}

// logger returns the logger for a command, at the --log-level given or at
// fallback.
func (a *app) logger(fallback slog.Level) *slog.Logger {
	level := fallback
	if a.logLevel.value != "" {
		_ = level.UnmarshalText([]byte(a.logLevel.value))
	}
	return slog.New(slog.NewTextHandler(a.env.Stderr, &slog.HandlerOptions{Level: level}))
}
