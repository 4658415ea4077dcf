// api: the debug API the worker serves, drakkar/debugapi built from the
// worker's parts.

package worker

import (
	"net/http"

	"github.com/fb46ecde/records/drakkar/debugapi"
)

// DebugAPI is Options.API's default: drakkar/debugapi's handler (every
// route of the spec, auth by ui.auth_token, the peer cache exchange
// without it) over the worker's recorder, cache, registry and metrics. The
// recorder is left out in memory-only mode and the cache when cache.enabled
// is false, as debugapi expects.
func DebugAPI(d APIDeps) (http.Handler, error) {
	c := d.Config
	opts := debugapi.Options{
		Config: debugapi.Config{
			AuthToken: c.UI.AuthToken, MergeEnabled: c.UI.MergeEnabled,
			TraceHistoryMaxFiles: c.UI.TraceHistoryMaxFiles, TraceHistoryMaxSeconds: c.UI.TraceHistoryMaxTime,
			StorageDir: c.Recorder.StorageDir, SharedDir: c.Recorder.SharedDir,
			WorkerName: c.Recorder.WorkerName, ClusterName: c.Recorder.ClusterName, URL: d.URL,
		},
		Registry: d.Registry, Metrics: d.Metrics, Ready: d.Ready, Logger: d.Logger, Now: d.Now,
	}
	if c.Recorder.WritesFiles() {
		opts.Recorder = d.Recorder
	}
	if c.Cache.Enabled {
		opts.Cache = d.Cache
	}
	return debugapi.New(opts)
}
