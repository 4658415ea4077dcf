// Command query is the command-line face of a records store: declare kinds,
// append NDJSON rows, scan and follow streams, manage their lifecycle, and
// serve the read API over HTTP. See docs/cli.md for the exact contract.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/fb46ecde/records/cmd/query/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.Env{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.Getenv,
	})
	stop()
	os.Exit(code)
}
