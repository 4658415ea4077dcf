// Package fleethttp serves a tenant fleet (recordstore/fleet) over HTTP:
// the list of its stores, and each store's read API (recordresults.Handler)
// under /api/v1/tenants/{key}/, the store leased for the length of each
// request. It is the fleet's counterpart of recordresults.Handler, and what
// query serve --fleet mounts; a Go service mounts it the same way:
//
//	f, err := fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, CreateOnDemand: fleet.OnDemandRefuse})
//	h := fleethttp.Handler(f, fleethttp.Options{Logger: log, Done: done})
//	srv := &http.Server{Handler: h}
//
// Request metrics label tenant requests by RoutePatterns (ownermetrics.NewHTTP
// with Follow: RouteFollow), and ownermetrics.NewFleetCollector reports the
// fleet's open stores and evictions.
//
// The handler only reads: it never writes to a store, and never creates
// one (open the fleet with fleet.OnDemandRefuse, as query serve does, so
// that a read of a missing tenant is not_found rather than a new store).
// It is safe for concurrent requests; each leases its own store (a
// follow for as long as it streams), and the fleet's MaxOpen and IdleClose
// close the stores no request holds.
//
// Failures are the read API's JSON error bodies
// ({"error":{"code":...,"message":...}}), with a status by code: the
// fleet's codes as HTTPStatus maps them, the others as
// recordresults.HTTPStatus does.
package fleethttp
