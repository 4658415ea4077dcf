package lake

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/replica"
)

// ErrBusy is returned when another export of the same stream to the same
// destination is running (or finished between this run's read of the
// manifest and its write). Nothing this run wrote is named by the
// manifest; run it again. Its code is "busy".
var ErrBusy = recordstore.NewCodedSentinel("busy", "busy")

// Sink is where an export writes: a folder or a bucket prefix. Keys are
// slash-separated paths relative to the destination's root.
type Sink interface {
	// Get returns a whole object and a version tag for Put's condition;
	// an absent key is an error wrapping recordstore.ErrNotFound.
	Get(ctx context.Context, key string) (data []byte, tag string, err error)
	// PutFile stores the file at local under key, replacing any object
	// there; on error the key holds the old object or nothing.
	PutFile(ctx context.Context, key, local string) error
	// PutIf stores data under key only if the key's version is still tag
	// ("" = the key must not exist), else fails with ErrBusy.
	PutIf(ctx context.Context, key string, data []byte, tag string) error
	// List returns the keys under prefix (a folder ending in "/").
	List(ctx context.Context, prefix string) ([]string, error)
	// ListDirs returns the folders directly under prefix (a folder ending
	// in "/"), each as a prefix ending in "/": what List does not
	// descend into.
	ListDirs(ctx context.Context, prefix string) ([]string, error)
	// Delete removes key; an absent key is not an error.
	Delete(ctx context.Context, key string) error
	// Lock takes the destination's per-stream lock where the sink needs
	// one (a folder); it fails with ErrBusy when another export holds it.
	Lock(ctx context.Context, streamDir string) (unlock func(), err error)
	// String names the destination for messages, without secrets.
	String() string
}

// OpenSink returns the sink of a destination: "s3://BUCKET/PREFIX?…" (the
// address rules of replica.Parse: endpoint, region and forcePathStyle in
// the query, credentials from the environment), "file:///folder" or a
// plain folder path (made, 0700, when missing). It touches no network.
func OpenSink(ctx context.Context, dest string) (Sink, error) {
	switch {
	case strings.HasPrefix(dest, "s3://"):
		u, err := replica.Parse(dest)
		if err != nil {
			return nil, err
		}
		return newS3Sink(ctx, u)
	case strings.HasPrefix(dest, "file://"):
		u, err := replica.Parse(dest)
		if err != nil {
			return nil, err
		}
		return newDirSink(u.Path)
	case strings.Contains(dest, "://"):
		u, _ := url.Parse(dest)
		scheme := ""
		if u != nil {
			scheme = u.Scheme
		}
		return nil, recordstore.Invalidf("export destination %s: scheme %s: want s3://, file:// or a folder", recordstore.Quote(replica.Redact(dest)), recordstore.Quote(scheme))
	case dest == "":
		return nil, recordstore.Invalidf("export destination: empty")
	}
	abs, err := filepath.Abs(dest)
	if err != nil {
		return nil, recordstore.Invalidf("export destination %s: %v", recordstore.Quote(dest), err)
	}
	return newDirSink(abs)
}

// notFound reports an absent key.
func notFound(s Sink, key string) error {
	return recordstore.Errorf(recordstore.ErrNotFound, "%s: %s", s, key)
}

// isNotFound tells an absent key.
func isNotFound(err error) bool { return errors.Is(err, recordstore.ErrNotFound) }

// busy reports a lost race for a stream's manifest or lock.
func busy(s Sink, what string) error {
	return fmt.Errorf("%w: %s: %s", ErrBusy, s, what)
}
