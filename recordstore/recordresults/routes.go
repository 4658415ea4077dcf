// The route patterns of the read API, for whoever labels requests by route
// (ownermetrics' request metrics) or serves the API under a prefix
// (fleethttp).

package recordresults

// RouteFollow is the pattern of the follow route, whose responses stay
// open while rows arrive.
const RouteFollow = "/api/v1/streams/{stream}/follow"

// RoutePatterns returns the patterns (http.ServeMux syntax, without a
// method) of every route Handler answers, the optional ones
// (HandlerOptions.Status, Batches) included: a bounded set, for labelling
// requests by route. Each call returns a new slice.
func RoutePatterns() []string {
	return []string{
		"/healthz", "/{$}",
		"/api/v1/status", "/api/v1/batches/{batch}",
		"/api/v1/streams", "/api/v1/streams/{stream}",
		"/api/v1/streams/{stream}/rows", "/api/v1/streams/{stream}/page", RouteFollow,
		"/api/v1/kinds", "/api/v1/kinds/{kind}", "/api/v1/views", "/api/v1/views/{view}",
	}
}
