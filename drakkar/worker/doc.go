// Package worker wires the Drakkar components into one runnable worker:
// the flight recorder (drakkar/recorder) with its archive pass
// (drakkar/archive) after each rotation, the LWW cache and its exchange pull
// (drakkar/cache), the registry card (drakkar/registry), one Prometheus
// registry for all their metrics and the HTTP server of the debug API.
//
// Load builds a Config from a YAML file, DRAKKAR_* environment variables
// and flags (in that order of precedence, the last wins). Open starts a
// worker; Close drains it: the HTTP server stops, the cache flushes, the
// recorder flushes, seals its live file and moves it into the history
// folder while executor.drain_timeout_seconds has time left, and the
// registry card is marked stopped. Run does Open, waits for its context and
// Closes. `query drakkar worker` is Run behind a signal handler.
//
// A Worker is safe for concurrent use: Record, Cache and the accessors may
// be called from any goroutine until Close. What survives a crash is what
// the components keep: the recorder's flushed events (its next start moves
// the left live file as a leftover), the cache's flushed rows, and a card
// that turns offline once it is older than
// fleet.registry.offline_after_seconds.
package worker
