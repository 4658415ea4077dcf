package replica

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/benbjohnson/litestream"
	_ "github.com/benbjohnson/litestream/file" // registers file://
	_ "github.com/benbjohnson/litestream/s3"   // registers s3://

	"github.com/fb46ecde/records/recordstore"
)

// ErrBadURL is returned for a replica address this package does not take:
// an unknown scheme, a missing bucket or folder, or credentials written
// into the address (they would show in ps and in logs). It wraps
// recordstore.ErrInvalid.
var ErrBadURL = fmt.Errorf("%w: replica address", recordstore.ErrInvalid)

// Schemes are the address schemes NewClient accepts.
var Schemes = []string{"s3", "file"}

// NewClient returns the Litestream replica client for a replica address:
//
//	s3://BUCKET/PREFIX?endpoint=http://127.0.0.1:9000&region=R&forcePathStyle=true
//	file:///absolute/folder
//
// S3 credentials come from the usual environment variables and files
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ...), never from
// the address: an address with user information is refused with
// ErrBadURL. NewClient touches no network and no file.
func NewClient(raw string) (litestream.ReplicaClient, error) {
	u, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	c, err := litestream.NewReplicaClientFromURL(u.String())
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrBadURL, Redact(raw), err)
	}
	return c, nil
}

// Parse checks a replica address and returns it parsed; see NewClient for
// what it accepts. The error names the address with any user information
// removed.
func Parse(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w %s: not an address", ErrBadURL, Redact(raw))
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w %s: credentials belong in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), not in the address", ErrBadURL, Redact(raw))
	}
	switch u.Scheme {
	case "s3":
		if u.Host == "" {
			return nil, fmt.Errorf("%w %s: no bucket (s3://BUCKET/PREFIX)", ErrBadURL, Redact(raw))
		}
	case "file":
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") || u.Path == "/" {
			return nil, fmt.Errorf("%w %s: a file address names an absolute folder (file:///path)", ErrBadURL, Redact(raw))
		}
	default:
		return nil, fmt.Errorf("%w %s: scheme must be one of %s", ErrBadURL, Redact(raw), strings.Join(Schemes, ", "))
	}
	return u, nil
}

// Join returns the address of a sub-prefix of a replica address (for
// example a fleet's "tenant/<id>" under its root prefix), keeping the
// query. sub is cleaned and may not climb out of the prefix.
func Join(raw, sub string) (string, error) {
	u, err := Parse(raw)
	if err != nil {
		return "", err
	}
	clean := path.Clean("/" + sub)
	if clean == "/" || strings.Contains(sub, "..") {
		return "", fmt.Errorf("%w: sub-prefix %q", ErrBadURL, sub)
	}
	u.Path = path.Join("/", u.Path, clean)
	return u.String(), nil
}

// Redact returns the address with any user information and query values
// that could carry secrets removed, for errors and logs.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable address)"
	}
	u.User = nil
	return u.Redacted()
}
