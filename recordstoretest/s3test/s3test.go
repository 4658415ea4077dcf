// Package s3test starts an S3-compatible object store on 127.0.0.1 for
// tests: a real HTTP server speaking the S3 protocol (path-style
// addressing, conditional writes with If-None-Match and If-Match), backed
// by memory, so replication, restore, leases and lake exports are tested
// against the protocol they use in production rather than a stub.
//
// The server lives in the test's own process; child processes reach it
// over loopback like any other S3 endpoint.
package s3test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Fixed credentials the server accepts; any non-empty pair works, these are
// what Env hands to clients and child processes.
const (
	AccessKey = "records-test-access"
	SecretKey = "records-test-secret"
	Region    = "us-east-1"
)

// Server is one running S3-compatible server with one bucket.
type Server struct {
	// Endpoint is the server's base address, "http://127.0.0.1:PORT".
	Endpoint string
	// Bucket is the bucket created at start.
	Bucket string

	srv     *http.Server
	ln      net.Listener
	backend *s3mem.Backend
	paused  atomic.Bool
	delay   atomic.Int64 // nanoseconds each request waits before it is served
}

// Start listens on a free loopback port, creates bucket and serves until
// Close. It fails only when no loopback port can be bound or the bucket
// cannot be made; nothing is left listening then.
func Start(bucket string) (*Server, error) { return StartAt("127.0.0.1:0", bucket) }

// StartAt is Start on a given address ("127.0.0.1:9000"); a port of 0
// picks a free one.
func StartAt(addr, bucket string) (*Server, error) {
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		return nil, fmt.Errorf("s3test: create bucket %q: %w", bucket, err)
	}
	faker := gofakes3.New(backend, gofakes3.WithTimeSkewLimit(0))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("s3test: listen: %w", err)
	}
	s := &Server{
		Endpoint: "http://" + ln.Addr().String(),
		Bucket:   bucket,
		ln:       ln,
		backend:  backend,
	}
	h := faker.Server()
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.paused.Load() {
			http.Error(w, "paused by the test", http.StatusServiceUnavailable)
			return
		}
		if d := time.Duration(s.delay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL returns an s3:// replica address for prefix inside the bucket, with
// the endpoint, region and path-style addressing in its query, as the
// --replica and --to flags take it.
func (s *Server) URL(prefix string) string {
	q := url.Values{}
	q.Set("endpoint", s.Endpoint)
	q.Set("region", Region)
	q.Set("forcePathStyle", "true")
	u := url.URL{Scheme: "s3", Host: s.Bucket, Path: "/" + prefix, RawQuery: q.Encode()}
	return u.String()
}

// Env returns the environment variables an S3 client reads its
// credentials from, for child processes (append them to cmd.Env). It
// empties AWS_CA_BUNDLE: the server speaks plain HTTP, and Litestream's S3
// client fails to load any configuration while that variable names a
// bundle (it cannot add root certificates to its own HTTP client).
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_REGION=" + Region,
		"AWS_CA_BUNDLE=",
	}
}

// SetEnv sets the credential variables in this process, for clients the
// test builds in-process. It returns a function that restores them.
func (s *Server) SetEnv() (restore func()) {
	var undo []func()
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		old, had := os.LookupEnv(k)
		_ = os.Setenv(k, v)
		undo = append(undo, func() {
			if had {
				_ = os.Setenv(k, old)
			} else {
				_ = os.Unsetenv(k)
			}
		})
	}
	return func() {
		for _, f := range undo {
			f()
		}
	}
}

// Keys lists the object keys under prefix, for specs that check what was
// written.
func (s *Server) Keys(prefix string) ([]string, error) {
	list, err := s.backend.ListBucket(s.Bucket,
		&gofakes3.Prefix{Prefix: prefix, HasPrefix: true}, gofakes3.ListBucketPage{})
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(list.Contents))
	for _, c := range list.Contents {
		keys = append(keys, c.Key)
	}
	return keys, nil
}

// Pause makes the server answer every request with 503 Service
// Unavailable (on) or serve again (off): an object store cut off from a
// client, without the client's connections hanging.
func (s *Server) Pause(on bool) { s.paused.Store(on) }

// Delay makes every request wait d before it is served (0: none): a slow
// object store, so that a spec can act while a request is in flight. A
// request whose client gives up meanwhile gets no answer.
func (s *Server) Delay(d time.Duration) { s.delay.Store(int64(d)) }

// Overwrite replaces the object at key directly in the server's memory,
// without any condition: another writer breaking in.
func (s *Server) Overwrite(key string, data []byte) error {
	_, err := s.backend.PutObject(s.Bucket, key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil)
	return err
}

// Close stops the server; the bucket's contents are gone with it.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// Kill stops the server at once: the listener and every connection,
// also one in the middle of a request, are closed; the bucket's contents
// are gone with it. It is how a spec makes the replica unreachable.
func (s *Server) Kill() error {
	return s.srv.Close()
}
