// FuzzDownloadPath: any path after /api/v1/debug/download/ answers 200
// with the one real file's bytes or 404, and never serves a byte of a file
// outside shared.dir (a symlink to one is planted in shared.dir).

package debugapi_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/fb46ecde/records/drakkar/debugapi"
)

func FuzzDownloadPath(f *testing.F) {
	for _, s := range []string{"history/c/w-2026-01-01__00_00_00.db", "history/c/../../outside/secret.db",
		"history/c/link.db", "history%2Fc%2Fw.db", "merged/x.db", "history/c/%2e%2e/x.db", `history\c\x.db`, "", "/"} {
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
	c := debugapi.DefaultConfig()
	c.StorageDir, c.SharedDir = root, shared
	h, err := debugapi.New(debugapi.Options{Config: c, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		req, err := http.NewRequest(http.MethodGet, "http://worker/api/v1/debug/download/"+p, nil)
		if err != nil {
			return // not a request a client can send
		}
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, req)
		body, _ := io.ReadAll(rr.Result().Body)
		if bytes.Contains(body, []byte(secret)) {
			t.Fatalf("%q served a file outside shared.dir", p)
		}
		switch rr.Code {
		case http.StatusOK:
			if !bytes.Equal(body, real) {
				t.Fatalf("%q: 200 with %q", p, body)
			}
		case http.StatusNotFound:
			if string(body) != `{"error":"File not found"}` && string(body) != `{"detail":"Not Found"}` {
				t.Fatalf("%q: 404 with %q", p, body)
			}
		default:
			t.Fatalf("%q: status %d", p, rr.Code)
		}
	})
}
