// api: the debug API the worker serves. Until drakkar/debugapi is part of
// this tree, DebugAPI is the worker's own minimal set of routes.

package worker

import (
	"encoding/json"
	"net/http"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DebugAPI is Options.API's default: /healthz, /readyz, /metrics and the
// peer cache exchange (cache.ChangesPath), none behind ui.auth_token.
// The spec's debug routes (databases, download, merge, trace, workers...)
// are drakkar/debugapi's; this function is where the worker mounts it.
func DebugAPI(d APIDeps) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(rw http.ResponseWriter, _ *http.Request) {
		writeJSON(rw, http.StatusOK, map[string]any{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(rw http.ResponseWriter, _ *http.Request) {
		if reasons := d.Ready(); len(reasons) > 0 {
			writeJSON(rw, http.StatusServiceUnavailable, map[string]any{"status": "not_ready", "reasons": reasons})
			return
		}
		writeJSON(rw, http.StatusOK, map[string]any{"status": "ready"})
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.Metrics, promhttp.HandlerOpts{}))
	mux.Handle(cache.ChangesPath, d.Cache.ExchangeHandler())
	return mux, nil
}

func writeJSON(rw http.ResponseWriter, status int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_ = json.NewEncoder(rw).Encode(v)
}
