// Test-only access to unexported parts of package spool.

package spool

import (
	"context"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// WithFS returns opts with h as the durable-file helper, whose FS the test
// makes fail.
func WithFS(opts Options, h *fsutil.Helper) Options {
	opts.fs = h
	return opts
}

// ScanLine parses one NDJSON line of kind with the schema-aware scanner.
func ScanLine(kind *recordstore.Kind, line []byte) (recordstore.Values, error) {
	return newRowScanner(kind).scan(line)
}

// WaitPrepared waits for the preparation of the next batch folder, if one
// is being made.
func (d *Dir) WaitPrepared() { d.prep.wg.Wait() }

// EncodeSequential encodes rows with codec's own Encoder, one row after
// the other: what a publish's parallel encoding must reproduce.
func EncodeSequential(codec Codec, kind *recordstore.Kind, rows []recordstore.Values) ([]byte, error) {
	var out []byte
	_, _, err := encodeEntry(context.Background(), sequentialOnly{codec}, kind, rows, 0, func(p []byte) error {
		out = append(out, p...)
		return nil
	})
	return out, err
}

// EncodeEntry is a publish's encoding of one entry's rows, returned whole
// with its size and SHA-256.
func EncodeEntry(ctx context.Context, codec Codec, kind *recordstore.Kind, rows []recordstore.Values) ([]byte, int64, string, error) {
	var out []byte
	n, sum, err := encodeEntry(ctx, codec, kind, rows, 0, func(p []byte) error {
		out = append(out, p...)
		return nil
	})
	return out, n, sum, err
}

// HashEntry is a publish's encoding of one entry's rows with nothing kept:
// only their size and SHA-256 are returned.
func HashEntry(ctx context.Context, codec Codec, kind *recordstore.Kind, rows []recordstore.Values) (int64, string, error) {
	return encodeEntry(ctx, codec, kind, rows, 0, func([]byte) error { return nil })
}

// sequentialOnly hides a codec's lineStream.
type sequentialOnly struct{ Codec }

// AppendValue is the encoder's JSON form of one stored value.
func AppendValue(t recordstore.ColumnType, v any) ([]byte, error) { return appendValue(nil, t, v) }

// ParseShortFloat is the decoder's allocation-free float parser.
func ParseShortFloat(lit string) (float64, bool) { return parseShortFloat([]byte(lit)) }
