package httpx_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fb46ecde/records/recordstore/internal/httpx"
)

// TestStatusWriterRemembersTheFirstStatus: WriteHeader's first code, 200
// for a body or a flush with no header, 200 for nothing at all.
func TestStatusWriterRemembersTheFirstStatus(t *testing.T) {
	for _, c := range []struct {
		name  string
		serve func(w http.ResponseWriter)
		want  int
	}{
		{"a header", func(w http.ResponseWriter) { w.WriteHeader(http.StatusTeapot); w.WriteHeader(http.StatusOK) }, http.StatusTeapot},
		{"a body", func(w http.ResponseWriter) { _, _ = io.WriteString(w, "x"); w.WriteHeader(http.StatusNotFound) }, http.StatusOK},
		{"a flush", func(w http.ResponseWriter) {
			_ = http.NewResponseController(w).Flush()
			w.WriteHeader(http.StatusNotFound)
		}, http.StatusOK},
		{"nothing", func(http.ResponseWriter) {}, http.StatusOK},
	} {
		rec := httptest.NewRecorder()
		sw := httpx.NewStatusWriter(rec)
		c.serve(sw)
		if got := sw.Status(); got != c.want {
			t.Errorf("%s: Status() = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestStatusWriterStreams: a flush through the StatusWriter reaches the
// client before the handler returns, as follow needs.
func TestStatusWriterStreams(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		sw := httpx.NewStatusWriter(w)
		_, _ = io.WriteString(sw, "first\n")
		if err := http.NewResponseController(sw).Flush(); err != nil {
			t.Errorf("flush: %v", err)
		}
		<-release
	}))
	defer srv.Close()
	defer close(release)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "first\n" {
		t.Fatalf("first line %q, %v: want it before the handler returns", line, err)
	}
}

// TestWriteError: the library's error body, HTML characters unescaped.
func TestWriteError(t *testing.T) {
	rec := httptest.NewRecorder()
	httpx.WriteError(rec, http.StatusBadRequest, "invalid", `stream "<a&b>"`)
	if rec.Code != http.StatusBadRequest || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	want := `{"error":{"code":"invalid","message":"stream \"<a&b>\""}}`
	if got := strings.TrimSpace(rec.Body.String()); got != want {
		t.Fatalf("body %s, want %s", got, want)
	}
}
