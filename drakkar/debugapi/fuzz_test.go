// FuzzDownloadPath: any path after /api/v1/debug/download/ (and any name
// after /api/v1/debug/archives/) answers 200 with the one real file's
// bytes, 400 {error} for a quote, semicolon or control character, or 404,
// and never serves a byte of a file outside shared.dir (a symlink to one is
// planted in shared.dir).
//
// FuzzQuery: any query of the routes with validated parameters answers 200
// in the route's shape or 422 in the validation envelope, never 500.

package debugapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/debugapi"
)

func FuzzDownloadPath(f *testing.F) {
	for _, s := range []string{"history/c/w-2026-01-01__00_00_00.db", "history/c/../../outside/secret.db",
		"history/c/link.db", "history%2Fc%2Fw.db", "merged/x.db", "history/c/%2e%2e/x.db", `history\c\x.db`, "", "/",
		`history/c/x".db`, "history/c/x;y.db", "history/c/x%01.db", "c-2026-01-01_00-00__2026-01-02_00-00.db.gz"} {
		f.Add(s)
	}
	root := f.TempDir()
	shared := filepath.Join(root, "shared")
	hist := filepath.Join(shared, "history", "c")
	if err := os.MkdirAll(hist, 0o700); err != nil {
		f.Fatal(err)
	}
	real := []byte("the one real sealed file")
	if err := os.WriteFile(filepath.Join(hist, "w-2026-01-01__00_00_00.db"), real, 0o600); err != nil {
		f.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "outside"), 0o700); err != nil {
		f.Fatal(err)
	}
	outside := filepath.Join(root, "outside", "secret.db")
	if err := os.WriteFile(outside, []byte(secret), 0o600); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(hist, "link.db")); err != nil {
		f.Fatal(err)
	}
	// A hard link with a good name to the file outside.
	if err := os.Link(outside, filepath.Join(hist, "w-2026-01-02__00_00_00.db")); err != nil {
		f.Fatal(err)
	}
	c := debugapi.DefaultConfig()
	c.StorageDir, c.SharedDir = root, shared
	h, err := debugapi.New(debugapi.Options{Config: c, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	arch := "c-2026-01-01_00-00__2026-01-02_00-00.db.gz"
	if err := os.WriteFile(filepath.Join(hist, arch), real, 0o600); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		for _, prefix := range []string{"/api/v1/debug/download/", "/api/v1/debug/archives/"} {
			req, err := http.NewRequest(http.MethodGet, "http://worker"+prefix+p, nil)
			if err != nil {
				return // not a request a client can send
			}
			rr := httptest.NewRecorder()
			h.ServeHTTP(rr, req)
			body, _ := io.ReadAll(rr.Result().Body)
			if bytes.Contains(body, []byte(secret)) {
				t.Fatalf("%q served a file outside shared.dir", prefix+p)
			}
			switch rr.Code {
			case http.StatusOK:
				if !bytes.Equal(body, real) {
					t.Fatalf("%q: 200 with %q", prefix+p, body)
				}
			case http.StatusBadRequest:
				if prefix != "/api/v1/debug/download/" || string(body) != `{"error":"Invalid filename"}` {
					t.Fatalf("%q: 400 with %q", prefix+p, body)
				}
			case http.StatusNotFound:
				if string(body) != `{"error":"File not found"}` && string(body) != `{"detail":"Not Found"}` {
					t.Fatalf("%q: 404 with %q", prefix+p, body)
				}
			default:
				t.Fatalf("%q: status %d", prefix+p, rr.Code)
			}
		}
	})
}

func FuzzQuery(f *testing.F) {
	for _, s := range []string{"", "limit=0", "limit=1001&offset=-1", "partition=2147483648&offset=1", "partition=1&offset=2&history=maybe",
		"key=&value=", "key=a&value=b", "expired_only=yes&scope=local&search=k", "limit=1.5", "partitions=1,,2&event_types=a", "offset=99999999999999999999"} {
		f.Add(s)
	}
	root := f.TempDir()
	cfg := cache.DefaultConfig()
	cfg.Enabled, cfg.StorageDir, cfg.WorkerName, cfg.ClusterName = true, root, "w1", "c"
	c, err := cache.Open(context.Background(), cfg, cache.Options{NoLoops: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = c.Close(context.Background()) })
	if err := c.Set(context.Background(), "k", `1`, cache.ScopeLocal, 0); err != nil {
		f.Fatal(err)
	}
	if err := c.Flush(context.Background()); err != nil {
		f.Fatal(err)
	}
	dc := debugapi.DefaultConfig()
	dc.WorkerName = "w1"
	h, err := debugapi.New(debugapi.Options{Config: dc, Cache: c, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, route := range []string{"/api/v1/debug/trace", "/api/v1/debug/trace-by-label", "/api/v1/events", "/api/v1/debug/cache/entries"} {
			req, err := http.NewRequest(http.MethodGet, "http://worker"+route+"?"+q, nil)
			if err != nil {
				return
			}
			rr := httptest.NewRecorder()
			h.ServeHTTP(rr, req)
			var body any
			if err := json.Unmarshal(rr.Body.Bytes(), &body); err != nil {
				t.Fatalf("%s?%s: %d not JSON: %q", route, q, rr.Code, rr.Body.Bytes())
			}
			switch rr.Code {
			case http.StatusOK:
				if route == "/api/v1/debug/cache/entries" {
					page, ok := body.(map[string]any)
					if !ok || len(page) != 4 {
						t.Fatalf("%s?%s: 200 with %q", route, q, rr.Body.Bytes())
					}
					limit, _ := page["limit"].(float64)
					total, _ := page["total"].(float64)
					entries, _ := page["entries"].([]any)
					if limit < 0 || limit > 1000 || float64(len(entries)) > limit || total > 1 || float64(len(entries)) > total {
						t.Fatalf("%s?%s: 200 with %q", route, q, rr.Body.Bytes())
					}
				} else if _, ok := body.([]any); !ok {
					t.Fatalf("%s?%s: 200 with %q", route, q, rr.Body.Bytes())
				}
			case http.StatusUnprocessableEntity:
				d, ok := body.(map[string]any)["detail"].([]any)
				if !ok || len(d) != 1 {
					t.Fatalf("%s?%s: 422 with %q", route, q, rr.Body.Bytes())
				}
			default:
				t.Fatalf("%s?%s: status %d %q", route, q, rr.Code, rr.Body.Bytes())
			}
		}
	})
}

// FuzzCacheEntryKey: every key the cache stores is reachable by the entry
// route with each byte percent-encoded, and the route never answers
// another key.
func FuzzCacheEntryKey(f *testing.F) {
	for _, s := range []string{".", "..", `a\b`, "a//b", "a/../b", "/", "%", "k", "é", "a b", "?#"} {
		f.Add(s)
	}
	root := f.TempDir()
	cfg := cache.DefaultConfig()
	cfg.Enabled, cfg.StorageDir, cfg.WorkerName, cfg.ClusterName = true, root, "w1", "c"
	c, err := cache.Open(context.Background(), cfg, cache.Options{NoLoops: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = c.Close(context.Background()) })
	dc := debugapi.DefaultConfig()
	dc.WorkerName = "w1"
	h, err := debugapi.New(debugapi.Options{Config: dc, Cache: c, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if c.Set(context.Background(), key, `1`, cache.ScopeLocal, 0) != nil {
			return // not a key the cache takes
		}
		var enc strings.Builder
		for i := 0; i < len(key); i++ {
			fmt.Fprintf(&enc, "%%%02X", key[i])
		}
		req := httptest.NewRequest(http.MethodGet, "http://worker/api/v1/debug/cache/entry/"+enc.String(), nil)
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, req)
		var body struct {
			Key string `json:"key"`
		}
		if rr.Code != http.StatusOK || json.Unmarshal(rr.Body.Bytes(), &body) != nil || body.Key != key {
			t.Fatalf("key %q: %d %q", key, rr.Code, rr.Body.Bytes())
		}
	})
}
