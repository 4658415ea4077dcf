// Error responses: {"error":{"code":..., "message":...}} with a status
// chosen by the code.

package recordresults

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/fb46ecde/records/recordstore"
)

// HTTPStatus returns the HTTP status for an error code: 400 for bad input,
// 404 for a missing stream or kind, 409 for a state conflict, 503 when the
// serving process cannot read the store (catalog_version: its owner runs
// another catalog version; another server, or this one restarted with the
// owner's build, can answer), 500 otherwise.
func HTTPStatus(code string) int {
	switch code {
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
// logged, since the client sees only their text.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var body errorBody
	body.Error.Code = recordstore.Code(err)
	body.Error.Message = recordstore.Message(err)
	status := HTTPStatus(body.Error.Code)
	if status == http.StatusInternalServerError {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, status, body)
}

// writeJSON answers with v as a JSON document.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
