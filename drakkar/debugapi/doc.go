// Package debugapi is a Drakkar worker's HTTP API: health and readiness,
// Prometheus metrics, and the debug routes of spec
// drakkar-local-databases.md ("The Databases page", "Downloading archives",
// download-live, merge, trace) plus the identity card, the events list, the
// workers list (from the registry), the metric families as JSON, the cache
// browser, the cache exchange route and this API's own OpenAPI document
// (openapi.yaml, served at /api/v1/openapi.json). Outside the spec's
// shapes the routes follow the public Drakkar API contract v1; its routes
// of a Kafka pipeline are not served (404). Routes lists every route.
//
// New builds one http.Handler. With Config.AuthToken set, every route but
// /healthz, /readyz and the peer cache exchange needs `Authorization: Bearer
// <token>` or `?token=<token>` (compared in constant time); else 401
// {"detail":"Invalid or missing auth token"}.
//
// Error bodies: {"detail": ...} for 401, 404, 500 and 503; 422
// {"detail":[{"loc":[...],"msg":"..."}]} for bad query parameters; the
// legacy {"error": ...} for merge, download, download-live and archives
// (400 for a quote, semicolon or control character in a path or name).
//
// Files are served only from shared.dir and only in the shapes the spec
// lists; every path segment is checked, the file is opened with O_NOFOLLOW
// and its descriptor is checked to be a regular file inside shared.dir
// before a byte is sent. Nothing on disk changes through this package except
// merge results in merged/ and download-live's temporary snapshot (removed
// before the answer starts).
package debugapi
