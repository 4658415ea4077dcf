package debugapi

import (
	"net/http"
	"strconv"
	"strings"
)

// Limits of GET /api/v1/events.
const (
	DefaultEventsLimit = 200
	MaxEventsLimit     = 10000
)

// csvParam splits a comma-separated parameter; ok false (after 422) when
// an item is empty.
func csvParam(w http.ResponseWriter, r *http.Request, name string) ([]string, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return nil, true
	}
	items := strings.Split(v, ",")
	for i, it := range items {
		items[i] = strings.TrimSpace(it)
		if items[i] == "" {
			write422(w, name, "Invalid comma-separated list")
			return nil, false
		}
	}
	return items, true
}

// events serves GET /api/v1/events: the live file's rows, newest first.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	limit, ok := rangeParam(w, r, "limit", DefaultEventsLimit, 0, MaxEventsLimit)
	if !ok {
		return
	}
	after, ok := intParam(w, r, "after_id", false, 0)
	if !ok {
		return
	}
	parts, ok := csvParam(w, r, "partitions")
	if !ok {
		return
	}
	where, args := []string{"id > ?"}, []any{after}
	if len(parts) > 0 {
		ph := make([]string, len(parts))
		for i, p := range parts {
			n, err := strconv.ParseInt(p, 10, 64)
			if err != nil {
				write422(w, "partitions", "Invalid comma-separated list of integers")
				return
			}
			ph[i], args = "?", append(args, n)
		}
		where = append(where, `"partition" IN (`+strings.Join(ph, ",")+`)`)
	}
	types, ok := csvParam(w, r, "event_types")
	if !ok {
		return
	}
	if len(types) > 0 {
		ph := make([]string, len(types))
		for i, t := range types {
			ph[i], args = "?", append(args, t)
		}
		where = append(where, `event IN (`+strings.Join(ph, ",")+`)`)
	}
	if o := r.URL.Query().Get("origin"); o != "" {
		where, args = append(where, "origin = ?"), append(args, o)
	}
	out := []map[string]any{}
	db, err := s.liveDB()
	if err != nil {
		s.internal(w, "events", err)
		return
	}
	if db != nil {
		defer db.Close()
	}
	if db != nil && limit > 0 {
		rows, err := queryRows(r.Context(), db, "", `SELECT `+eventSelect+` FROM events WHERE `+
			strings.Join(where, " AND ")+` ORDER BY id DESC LIMIT `+strconv.FormatInt(limit, 10), args...)
		if err != nil {
			s.internal(w, "events", err)
			return
		}
		out = append(out, rows...)
	}
	writeJSON(w, http.StatusOK, out)
}
