// The routes of the read API and their handlers.

package serve

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/fb46ecde/records/recordstore"
)

// handler serves the read API of one backend.
type handler struct {
	b   recordstore.Backend
	log *slog.Logger
}

// NewHandler returns the read API over b, logging each request on log.
func NewHandler(b recordstore.Backend, log *slog.Logger) http.Handler {
	h := &handler{b: b, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", h.healthz)
	mux.HandleFunc("GET /api/v1/streams", h.streams)
	mux.HandleFunc("GET /api/v1/streams/{stream}", h.meta)
	mux.HandleFunc("GET /api/v1/streams/{stream}/rows", h.rows)
	mux.HandleFunc("GET /{$}", h.index)
	mux.HandleFunc("/", h.noRoute)
	return logRequests(log, mux)
}

func (h *handler) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// streamList is the body of GET /api/v1/streams.
type streamList struct {
	Streams []recordstore.Meta `json:"streams"`
}

func (h *handler) streams(w http.ResponseWriter, r *http.Request) {
	kind := r.URL.Query().Get("kind")
	if kind != "" {
		if err := recordstore.ValidateKindName(kind); err != nil {
			writeError(w, r, h.log, err)
			return
		}
	}
	metas, err := h.b.Streams(r.Context(), kind)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if metas == nil {
		metas = []recordstore.Meta{}
	}
	writeJSON(w, http.StatusOK, streamList{Streams: metas})
}

func (h *handler) meta(w http.ResponseWriter, r *http.Request) {
	stream := r.PathValue("stream")
	m, err := h.b.Meta(r.Context(), stream)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

func (h *handler) noRoute(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, h.log, fmt.Errorf("%w: no route for %s %s", recordstore.ErrNotFound, r.Method, r.URL.Path))
}

// intParam reads an optional non-negative integer query parameter.
func intParam(r *http.Request, name string) (int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, recordstore.Invalidf("query parameter %s=%q: want a non-negative integer", name, s)
	}
	return n, nil
}
