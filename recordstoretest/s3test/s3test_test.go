package s3test_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fb46ecde/records/recordstoretest/s3test"
)

// TestRoundTripAndConditionalPut puts an object over plain HTTP, reads it
// back, lists it, and checks the conditional write the lease relies on: a
// second If-None-Match: * PUT of the same key is refused with 412.
func TestRoundTripAndConditionalPut(t *testing.T) {
	s, err := s3test.Start("bkt")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func(key, body string, hdr map[string]string) int {
		req, err := http.NewRequest(http.MethodPut, s.Endpoint+"/bkt/"+key, bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := put("p/a", "hello", map[string]string{"If-None-Match": "*"}); code != http.StatusOK {
		t.Fatalf("first conditional put: %d", code)
	}
	if code := put("p/a", "again", map[string]string{"If-None-Match": "*"}); code != http.StatusPreconditionFailed {
		t.Fatalf("second conditional put: %d, want 412", code)
	}
	resp, err := http.Get(s.Endpoint + "/bkt/p/a")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if string(body) != "hello" {
		t.Fatalf("body %q", body)
	}
	keys, err := s.Keys("p/")
	if err != nil || len(keys) != 1 || keys[0] != "p/a" {
		t.Fatalf("keys %v %v", keys, err)
	}
	if u := s.URL("tenant/x"); !strings.HasPrefix(u, "s3://bkt/tenant/x?") || !strings.Contains(u, "forcePathStyle=true") {
		t.Fatalf("url %q", u)
	}
}
