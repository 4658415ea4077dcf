// FuzzFleetRequest: any path under /api/v1/tenants/ over an empty fleet.

package fleethttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/fleet/fleethttp"
)

// FuzzFleetRequest sends any path under /api/v1/tenants/ to the fleet
// handler over an empty tenant fleet: it must answer a JSON error of 400
// (a refused key) or 404 (no store, no route), never panic, never fail
// internally, and never create anything under the root.
func FuzzFleetRequest(f *testing.F) {
	for _, seed := range []string{
		"acme/streams", "tenant:acme/streams/s1/rows", "Acme/streams", "slot:1/streams",
		"a%2F..%2Fb/streams", "..%2F..%2Fetc/healthz", "con/streams", "tenant:/x", "%00/streams",
	} {
		f.Add(seed)
	}
	root := filepath.Join(f.TempDir(), "fleet")
	if err := os.Mkdir(root, 0o700); err != nil {
		f.Fatal(err)
	}
	fl, err := fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, SweepInterval: -1, CreateOnDemand: fleet.OnDemandRefuse})
	if err != nil {
		f.Fatal(err)
	}
	defer fl.Close()
	h := fleethttp.Handler(fl, fleethttp.Options{Logger: discardLog()})
	f.Fuzz(func(t *testing.T, rest string) {
		u, err := url.Parse("http://fleet" + fleethttp.TenantsPrefix + rest)
		if err != nil {
			return
		}
		req := httptest.NewRequest(http.MethodGet, "http://fleet/", nil)
		req.URL = u
		req.RequestURI = u.RequestURI()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusBadRequest, http.StatusNotFound:
		case http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
			return // the mux cleans paths with . or .. segments by a redirect
		default:
			t.Fatalf("GET %s: status %d: %s", u, rec.Code, rec.Body)
		}
		var body struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code == "" {
			t.Fatalf("GET %s: not a JSON error: %q", u, rec.Body)
		}
		if entries, err := os.ReadDir(root); err != nil || len(entries) > 0 {
			t.Fatalf("GET %s: the root changed: %v %v", u, entries, err)
		}
	})
}
