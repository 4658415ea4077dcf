// The route patterns of the console, for labelling requests by route.

package console

// RoutePatterns returns the patterns (http.ServeMux syntax, without a
// method) of every route Handler answers: a bounded set, for labelling
// requests by route (ownermetrics' request metrics). Each call returns a
// new slice.
func RoutePatterns() []string {
	return []string{
		"/console/{$}", "/console/decode.js", "/console/app.js", "/console/app.css",
		"/console/api/config", "/console/api/owner", "/console/api/kinds/{kind}",
		"/console/api/spool", "/console/api/spool/failed/{batch}/retry",
	}
}
