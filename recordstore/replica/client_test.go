package replica_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/replica"
)

func TestParseRefusesWhatItMust(t *testing.T) {
	bad := map[string]string{
		"s3://key:secret@bucket/p":  "credentials",
		"s3:///p":                   "no bucket",
		"file://host/p":             "absolute folder",
		"file:///":                  "absolute folder",
		"http://127.0.0.1:9000/b/p": "scheme",
		"gs://b/p":                  "scheme",
	}
	for raw, want := range bad {
		_, err := replica.NewClient(raw)
		if !errors.Is(err, replica.ErrBadURL) || !errors.Is(err, recordstore.ErrInvalid) {
			t.Errorf("%s: %v, want ErrBadURL", raw, err)
			continue
		}
		if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: message %q", raw, err)
		}
	}
	for _, raw := range []string{"s3://bkt/pre/fix?endpoint=http://127.0.0.1:9000&region=us-east-1&forcePathStyle=true", "file:///tmp/replica"} {
		c, err := replica.NewClient(raw)
		if err != nil || c == nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

func TestJoin(t *testing.T) {
	got, err := replica.Join("s3://bkt/root?endpoint=http://127.0.0.1:1", "tenant/a b")
	if err != nil || got != "s3://bkt/root/tenant/a%20b?endpoint=http://127.0.0.1:1" {
		t.Fatalf("%q %v", got, err)
	}
	for _, sub := range []string{"", "/", "../x", "a/../../b"} {
		if _, err := replica.Join("file:///r", sub); !errors.Is(err, replica.ErrBadURL) {
			t.Errorf("%q: %v", sub, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"s3://b/p?endpoint=http://127.0.0.1:9000", "file:///x", "s3://u:p@b/", "%zz", "file://h/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := replica.Parse(raw)
		if err != nil {
			if !errors.Is(err, replica.ErrBadURL) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if u.User != nil || (u.Scheme != "s3" && u.Scheme != "file") {
			t.Fatalf("accepted %q", raw)
		}
	})
}
