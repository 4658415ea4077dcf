// The HTTP status of an error of a fleet request.

package fleethttp

import (
	"net/http"

	"github.com/fb46ecde/records/recordstore/recordresults"
)

// HTTPStatus returns the HTTP status of an error code of a fleet request:
// the fleet's own codes (fleet/errors.go) — 409 for a key that exists, a
// store in use or misplaced (its file records another key), 403 for a
// store path outside the root, 410 for a store being deleted, 503 when the
// fleet is closed (shutting down) — and the read API's for every other
// code (recordresults.HTTPStatus: 400 invalid, 404 not_found, 503
// catalog_version, 500 internal, ...).
func HTTPStatus(code string) int {
	switch code {
	case "exists", "in_use", "misplaced":
		return http.StatusConflict
	case "outside_root":
		return http.StatusForbidden
	case "deleting":
		return http.StatusGone
	case "closed":
		return http.StatusServiceUnavailable
	}
	return recordresults.HTTPStatus(code)
}
