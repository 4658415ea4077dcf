// Package serve is the HTTP read API of `query serve` over one
// recordstore.Backend:
//
//	GET /healthz                                    {"status":"ok"}
//	GET /api/v1/streams[?kind=K]                    {"streams":[<meta>...]}
//	GET /api/v1/streams/{stream}                    <meta>
//	GET /api/v1/streams/{stream}/rows?after=&limit= NDJSON, one row per line
//	GET /                                           a small HTML page of streams
//
// Failures are JSON {"error":{"code":"not_found","message":"..."}} with a
// status chosen by the code (see Status). The handler only reads: it never
// writes to the store. It is safe for concurrent requests as far as the
// backend is (every recordstore.Backend is).
package serve
