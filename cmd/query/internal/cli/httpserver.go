// runHTTP: listening, serving, and the graceful shutdown when ctx ends.

package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// shutdownTimeout bounds how long runHTTP waits for requests in flight once
// it is told to stop.
const shutdownTimeout = 10 * time.Second

// runHTTP logs the address ln is bound to as msg=listening
// addr=HOST:PORT and serves h on ln until ctx ends; it
// then calls onShutdown (which ends the long-lived responses), stops
// accepting connections, lets requests in flight finish (up to
// shutdownTimeout) and returns nil.
func runHTTP(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger, onShutdown func()) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(onShutdown)
	log.Info("listening", "addr", ln.Addr().String())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		return fmt.Errorf("serve http on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down http server: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve http on %s: %w", ln.Addr(), err)
	}
	return nil
}
