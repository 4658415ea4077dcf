package lake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/fb46ecde/records/recordstore/replica"
)

// s3Sink writes objects under a bucket prefix. Credentials come from the
// SDK's usual chain (environment variables, shared files, instance
// roles); the manifest is replaced with conditional PUTs (If-Match /
// If-None-Match), so two exporters never both win.
type s3Sink struct {
	client *s3.Client
	bucket string
	prefix string // "" or "a/b/" (with the trailing slash)
	name   string
}

func newS3Sink(ctx context.Context, u *url.URL) (*s3Sink, error) {
	t, err := replica.NewS3Target(ctx, u.String())
	if err != nil {
		return nil, err
	}
	return &s3Sink{client: t.Client, bucket: t.Bucket, prefix: t.Prefix, name: t.String()}, nil
}

func (s *s3Sink) String() string { return s.name }

func (s *s3Sink) Get(ctx context.Context, key string) ([]byte, string, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.prefix + key)})
	if err != nil {
		if status(err) == http.StatusNotFound {
			return nil, "", notFound(s, key)
		}
		return nil, "", fmt.Errorf("%s: get %s: %w", s, key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, "", fmt.Errorf("%s: get %s: %w", s, key, err)
	}
	return data, aws.ToString(out.ETag), nil
}

func (s *s3Sink) PutFile(ctx context.Context, key, local string) error {
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: aws.String(s.prefix + key), Body: f}); err != nil {
		return fmt.Errorf("%s: put %s: %w", s, key, err)
	}
	return nil
}

func (s *s3Sink) PutIf(ctx context.Context, key string, data []byte, tag string) error {
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: aws.String(s.prefix + key), Body: strings.NewReader(string(data)),
		ContentType: aws.String("application/json")}
	if tag == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(tag)
	}
	if _, err := s.client.PutObject(ctx, in); err != nil {
		if c := status(err); c == http.StatusPreconditionFailed || c == http.StatusConflict {
			return busy(s, key+" changed since it was read")
		}
		return fmt.Errorf("%s: put %s: %w", s, key, err)
	}
	return nil
}

func (s *s3Sink) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	err := s.each(ctx, prefix, func(rest string) {
		if !strings.Contains(rest, "/") {
			keys = append(keys, prefix+rest)
		}
	})
	return keys, err
}

// ListDirs lists every key under prefix and keeps the first folder of
// each deeper one (no delimiter: the keys of one stream's generation).
func (s *s3Sink) ListDirs(ctx context.Context, prefix string) ([]string, error) {
	var dirs []string
	seen := map[string]bool{}
	err := s.each(ctx, prefix, func(rest string) {
		if sub, _, ok := strings.Cut(rest, "/"); ok && !seen[sub] {
			seen[sub] = true
			dirs = append(dirs, prefix+sub+"/")
		}
	})
	return dirs, err
}

// each calls fn with every key under prefix, prefix cut off, page by page.
func (s *s3Sink) each(ctx context.Context, prefix string, fn func(rest string)) error {
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(s.prefix + prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("%s: list %s: %w", s, prefix, err)
		}
		for _, o := range page.Contents {
			fn(strings.TrimPrefix(strings.TrimPrefix(aws.ToString(o.Key), s.prefix), prefix))
		}
	}
	return nil
}

func (s *s3Sink) Delete(ctx context.Context, key string) error {
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: aws.String(s.prefix + key)}); err != nil && status(err) != http.StatusNotFound {
		return fmt.Errorf("%s: delete %s: %w", s, key, err)
	}
	return nil
}

// Lock is a no-op: the manifest's conditional PUT is the S3 lock.
func (s *s3Sink) Lock(context.Context, string) (func(), error) { return func() {}, nil }

// status is the HTTP status of an S3 error, 0 when it has none.
func status(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound") {
		return http.StatusNotFound
	}
	return 0
}
