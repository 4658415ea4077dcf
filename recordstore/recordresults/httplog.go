// Request logging: one slog line per request with its status and duration.

package recordresults

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/fb46ecde/records/recordstore/internal/httpx"
)

// logRequests logs every request handled by next, an aborted one (a
// panic: http.ErrAbortHandler) with aborted=true before the panic goes on
// to the server, which cuts the connection.
func logRequests(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := httpx.NewStatusWriter(w)
		defer func() {
			p := recover()
			args := []any{"method", r.Method, "path", r.URL.Path, "status", sw.Status(),
				"duration", time.Since(start).Round(time.Microsecond)}
			if p != nil {
				args = append(args, "aborted", true)
			}
			log.Info("request", args...)
			if p != nil {
				panic(p)
			}
		}()
		next.ServeHTTP(sw, r)
	})
}
