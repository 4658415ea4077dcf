// Request logging: one slog line per request with its status and duration.

package recordresults

import (
	"log/slog"
	"net/http"
	"time"
)

// statusWriter remembers the status a handler sent.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer (to flush).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logRequests logs every request handled by next, an aborted one (a
// panic: http.ErrAbortHandler) with aborted=true before the panic goes on
// to the server, which cuts the connection.
func logRequests(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			p := recover()
			if sw.status == 0 {
				sw.status = http.StatusOK
			}
			args := []any{"method", r.Method, "path", r.URL.Path, "status", sw.status,
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
