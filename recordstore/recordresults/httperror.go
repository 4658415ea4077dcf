// Error responses: {"error":{"code":..., "message":...}} with a status
// chosen by the code.

package recordresults

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"syscall"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/internal/httpx"
)

// HTTPStatus returns the HTTP status for an error code: 400 for bad input,
// 404 for a missing stream or kind, 409 for a state conflict, 503 when the
// serving process cannot read the store (catalog_version: its owner runs
// another catalog version; another server, or this one restarted with the
// owner's build, can answer), 507 when the store's disk is full
// (disk_full), 500 otherwise.
func HTTPStatus(code string) int {
	switch code {
	case "disk_full":
		return http.StatusInsufficientStorage
	case "invalid", "unsupported":
		return http.StatusBadRequest
	case "not_found":
		return http.StatusNotFound
	case "sealed", "schema_conflict", "capacity":
		return http.StatusConflict
	case "catalog_version":
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeError answers with err's code and message, with the status
// HTTPStatus chooses for its code (see WriteError).
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	WriteError(w, r, log, HTTPStatus(recordstore.Code(err)), err)
}

// WriteError answers err as the read API answers its failures, with
// status: the JSON body {"error":{"code":...,"message":...}} of
// recordstore.Code and recordstore.Message. A handler that serves beside
// the read API (fleethttp's) answers its own failures with it, choosing
// the status by its own codes and HTTPStatus for the others. An internal
// error (status 500) is also logged, since the client sees only its
// text: as an error, but at debug level when the client hung up (a
// broken pipe, or the request's context canceled), which is no fault of
// the server's.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, status int, err error) {
	code := recordstore.Code(err)
	if status == http.StatusInternalServerError {
		level := slog.LevelError
		if clientGone(r, err) {
			level = slog.LevelDebug
		}
		log.Log(r.Context(), level, "request failed", "method", r.Method, "path", r.URL.Path, "client_gone", level == slog.LevelDebug, "err", err)
	}
	httpx.WriteError(w, status, code, recordstore.Message(err))
}

// clientGone reports whether err comes from the client hanging up rather
// than from the server: a write to its connection met a broken pipe or a
// reset, or the request's context was canceled (net/http cancels it when
// the connection closes) and err is that cancellation.
func clientGone(r *http.Request, err error) bool {
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	return errors.Is(err, context.Canceled) && r.Context().Err() != nil
}

// writeJSON answers with v as a JSON document.
func writeJSON(w http.ResponseWriter, status int, v any) { httpx.WriteJSON(w, status, v) }
