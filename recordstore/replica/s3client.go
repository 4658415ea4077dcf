package replica

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3Target is an s3:// address resolved to a client, a bucket and a key
// prefix.
type S3Target struct {
	Client *s3.Client
	Bucket string
	// Prefix is "" or a key prefix ending in "/".
	Prefix string
}

// NewS3Target resolves an s3:// address (see NewClient for its form) to an
// S3 client for plain objects: the lake export's files, the lease's lock
// object. The region is the address's region, else AWS_REGION, else
// us-east-1; an endpoint in the address means path-style addressing
// unless forcePathStyle=false. Credentials come from the SDK's usual chain.
// It touches no network.
func NewS3Target(ctx context.Context, raw string) (*S3Target, error) {
	u, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "s3" {
		return nil, fmt.Errorf("%w %s: want an s3:// address", ErrBadURL, Redact(raw))
	}
	return newS3Target(ctx, u)
}

func newS3Target(ctx context.Context, u *url.URL) (*S3Target, error) {
	q := u.Query()
	region := q.Get("region")
	if region == "" {
		region = os.Getenv("AWS_REGION")
	}
	if region == "" {
		region = "us-east-1"
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(region))
	if err != nil {
		return nil, fmt.Errorf("s3 address %s: credentials: %w", Redact(u.String()), err)
	}
	endpoint := q.Get("endpoint")
	pathStyle := endpoint != "" && q.Get("forcePathStyle") != "false" || q.Get("forcePathStyle") == "true"
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.UsePathStyle = pathStyle
	})
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &S3Target{Client: client, Bucket: u.Host, Prefix: prefix}, nil
}

// String names the target without secrets: "s3://BUCKET/PREFIX".
func (t *S3Target) String() string { return "s3://" + t.Bucket + "/" + t.Prefix }
