// Error responses: {"error":{"code":..., "message":...}} with a status
// chosen by the code.

package recordresults

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"syscall"

	"github.com/fb46ecde/records/recordstore"
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

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// writeError answers with err's code and message. Internal errors are also
// logged, since the client sees only their text: as errors, but at debug
// level when the client hung up (clientGone), which is no fault of ours.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var body errorBody
	body.Error.Code = recordstore.Code(err)
	body.Error.Message = recordstore.Message(err)
	status := HTTPStatus(body.Error.Code)
	if status == http.StatusInternalServerError {
		level := slog.LevelError
		if clientGone(r, err) {
			level = slog.LevelDebug
		}
		log.Log(r.Context(), level, "request failed", "method", r.Method, "path", r.URL.Path, "client_gone", level == slog.LevelDebug, "err", err)
	}
	writeJSON(w, status, body)
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
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
