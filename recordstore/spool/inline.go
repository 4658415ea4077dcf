// Inline batches: a batch as one byte string rather than a folder, for a
// producer that hands it to the owner over its control socket. It carries
// exactly what a folder would — the manifest (format 1) and each append
// entry's data — and is checked as strictly when decoded.

package spool

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/fb46ecde/records/recordstore"
)

// inlineMagic opens every inline batch: the layout's name and version.
const inlineMagic = "RSIB1\n"

// MaxInlineBytes is the largest inline batch EncodeInline makes and
// DecodeInline reads: a batch whose encoding is larger travels as a spool
// folder.
const MaxInlineBytes = 256 << 10

// ErrInlineTooLarge is EncodeInline's error for a batch whose encoding
// exceeds MaxInlineBytes (it wraps recordstore.ErrCapacity): publish it as
// a folder instead.
var ErrInlineTooLarge = recordstore.Errorf(recordstore.ErrCapacity, "inline batch too large")

// EncodeInline encodes batch as an inline batch: "RSIB1\n", the length of
// the manifest as an unsigned varint, the manifest (format 1, the document
// Publish writes but without indentation, each append entry with rows
// naming its data file e00001.ndjson and so on), then each such entry's
// NDJSON data in entry order. The batch must have its ID, Producer and
// Created set. It refuses what Publish refuses (a row that does not fit its
// kind, a repeated key, more rows than lim.MaxRows, an entry over
// lim.MaxBytes) with the same errors, and a batch whose encoding exceeds
// MaxInlineBytes with ErrInlineTooLarge. It writes nothing anywhere.
func EncodeInline(ctx context.Context, batch *recordstore.Batch, lim Limits) ([]byte, error) {
	for i := range batch.Entries {
		if batch.Entries[i].Source != nil {
			// Rows streamed from a source are read once, into a spool
			// file: a streamed batch is a large one by construction.
			return nil, fmt.Errorf("inline batch %s: entry %d streams its rows: %w", batch.ID, i, ErrInlineTooLarge)
		}
	}
	m, err := buildManifest(batch)
	if err != nil {
		return nil, err
	}
	if max := lim.MaxRows; max > 0 && batch.Rows() > max {
		return nil, fmt.Errorf("inline batch %s: %w: %d rows, the limit is %d", m.ID, ErrTooManyRows, batch.Rows(), max)
	}
	if err := checkRows(batch, m); err != nil {
		return nil, err
	}
	codec, err := Lookup(FormatNDJSON)
	if err != nil {
		return nil, err
	}
	var data []byte
	for i := range batch.Entries {
		e := &batch.Entries[i]
		if e.Op != recordstore.OpAppend || len(e.Rows) == 0 {
			continue
		}
		n, sum, err := encodeEntry(ctx, codec, m.Schema(e.Kind), e.Rows, lim.MaxBytes, func(p []byte) error {
			if len(data)+len(p) > MaxInlineBytes {
				return ErrInlineTooLarge
			}
			data = append(data, p...)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("inline batch %s: entry %d: %w", m.ID, i, err)
		}
		me := &m.Entries[i]
		me.File, me.Format, me.Rows, me.Bytes, me.SHA256 = dataFileName(i, codec.Extension()), codec.Name(), int64(len(e.Rows)), n, sum
	}
	man, err := m.encodeCompact()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(inlineMagic)+binary.MaxVarintLen64+len(man)+len(data))
	out = append(out, inlineMagic...)
	out = binary.AppendUvarint(out, uint64(len(man)))
	out = append(out, man...)
	out = append(out, data...)
	if len(out) > MaxInlineBytes {
		return nil, fmt.Errorf("inline batch %s: %w: %d bytes, the limit is %d", m.ID, ErrInlineTooLarge, len(out), MaxInlineBytes)
	}
	return out, nil
}

// DecodeInline reads an inline batch (see EncodeInline) and returns it with
// every append entry's rows in Rows, checked as Folder.ReadAll checks a
// folder: the manifest is decoded and validated (DecodeManifest), each data
// part must have its manifest size and SHA-256 (ErrChecksum) and hold
// exactly its rows (ErrRowCount), each row must fit its schema
// (recordstore.ErrInvalid), and lim bounds the rows and bytes
// (ErrTooManyRows, ErrTooLarge). Bytes after the last data part, a missing
// or unknown header, and input larger than MaxInlineBytes are
// ErrBadManifest. Nothing is returned unless the whole batch is valid.
func DecodeInline(ctx context.Context, data []byte, lim Limits) (*recordstore.Batch, error) {
	if len(data) > MaxInlineBytes {
		return nil, recordstore.Errorf(ErrBadManifest, "inline batch of %d bytes, the limit is %d", len(data), MaxInlineBytes)
	}
	if !bytes.HasPrefix(data, []byte(inlineMagic)) {
		return nil, recordstore.Errorf(ErrBadManifest, "not an inline batch (no %q header)", inlineMagic[:len(inlineMagic)-1])
	}
	rest := data[len(inlineMagic):]
	size, n := binary.Uvarint(rest)
	if n <= 0 || size > uint64(len(rest)-n) {
		return nil, recordstore.Errorf(ErrBadManifest, "inline batch: bad manifest length")
	}
	rest = rest[n:]
	m, err := DecodeManifest(rest[:size])
	if err != nil {
		return nil, err
	}
	rest = rest[size:]
	batch := (&Folder{Manifest: m}).Batch()
	var rows int64
	for i, e := range m.Entries {
		rows += e.Rows
		if lim.MaxRows > 0 && rows > lim.MaxRows {
			return nil, recordstore.Errorf(ErrTooManyRows, "inline batch %s declares more than %d rows", m.ID, lim.MaxRows)
		}
		if e.File == "" {
			continue
		}
		if e.Bytes < 0 || e.Bytes > int64(len(rest)) {
			return nil, fmt.Errorf("inline batch %s: entry %d: %w: %d bytes of data left, the manifest says %d", m.ID, i, ErrChecksum, len(rest), e.Bytes)
		}
		part := rest[:e.Bytes]
		rest = rest[e.Bytes:]
		if sum := sha256.Sum256(part); hex.EncodeToString(sum[:]) != e.SHA256 {
			return nil, fmt.Errorf("inline batch %s: entry %d: %w: SHA-256 %x, the manifest says %s", m.ID, i, ErrChecksum, sum, e.SHA256)
		}
		vals, err := decodeInlineEntry(ctx, e, m.Schema(e.Kind), part, lim)
		if err != nil {
			return nil, fmt.Errorf("inline batch %s: entry %d: %w", m.ID, i, err)
		}
		batch.Entries[i].Rows = vals
	}
	if len(rest) > 0 {
		return nil, recordstore.Errorf(ErrBadManifest, "inline batch %s: %d bytes after the last data part", m.ID, len(rest))
	}
	return batch, nil
}

// decodeInlineEntry reads the rows of one entry's data part: exactly
// e.Rows of them.
func decodeInlineEntry(ctx context.Context, e Entry, kind *recordstore.Kind, part []byte, lim Limits) ([]recordstore.Values, error) {
	codec, err := Lookup(e.Format)
	if err != nil {
		return nil, err
	}
	lim.MaxRows = e.Rows // a row more is a mismatch
	dec, err := codec.NewDecoder(bytes.NewReader(part), int64(len(part)), kind, lim)
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	vals := make([]recordstore.Values, 0, min(e.Rows, int64(len(part))))
	for {
		if len(vals)%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v, err := dec.Next()
		switch {
		case errors.Is(err, io.EOF):
			if int64(len(vals)) != e.Rows {
				return nil, recordstore.Errorf(ErrRowCount, "its data holds %d rows, the manifest says %d", len(vals), e.Rows)
			}
			return vals, nil
		case errors.Is(err, ErrTooManyRows):
			return nil, recordstore.Errorf(ErrRowCount, "its data holds more than the %d rows the manifest says", e.Rows)
		case err != nil:
			return nil, err
		}
		vals = append(vals, v)
	}
}
