// The meta file of a sealed recorder file (spec "The meta file"), schema 1:
// its codec and its durable write.

package dbfiles

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// MetaSchema is the only meta schema this package reads and writes.
const MetaSchema = 1

// Meta is the content of a <name>.db.meta.json file.
type Meta struct {
	// Schema is MetaSchema; EncodeMeta writes 0 as MetaSchema.
	Schema int
	// Worker is the name of the worker that wrote the file.
	Worker string
	// Instance is the 16 lowercase hex id of the writing process.
	Instance string
	// Cluster is the cluster name as configured (not sanitized).
	Cluster string
	// FirstEventTS and LastEventTS are MIN(ts) and MAX(ts) of events, or
	// both nil when the file has no events.
	FirstEventTS, LastEventTS *time.Time
	// SealedAt is when the file was sealed.
	SealedAt time.Time
	// SizeBytes is the file's size after the seal.
	SizeBytes int64
	// Tables is the row count per table (no sqlite_* table).
	Tables map[string]int64
	// EventTypes is the event count per event type.
	EventTypes map[string]int64
}

// metaKeys is the exact key set of schema 1.
var metaKeys = []string{"cluster", "event_types", "first_event_ts", "instance", "last_event_ts",
	"schema", "sealed_at", "size_bytes", "tables", "worker"}

// EncodeMeta returns the canonical bytes of m: sorted keys, compact, raw
// UTF-8, times in FormatTime, no trailing newline. A schema other than
// MetaSchema, an instance that is not 16 lowercase hex, only one of the two
// event times, a negative size or count is ErrBadMeta. Nil maps are
// written as {}.
func EncodeMeta(m Meta) ([]byte, error) {
	if m.Schema == 0 {
		m.Schema = MetaSchema
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	obj := map[string]any{
		"schema":         m.Schema,
		"worker":         m.Worker,
		"instance":       m.Instance,
		"cluster":        m.Cluster,
		"first_event_ts": optTime(m.FirstEventTS),
		"last_event_ts":  optTime(m.LastEventTS),
		"sealed_at":      FormatTime(m.SealedAt),
		"size_bytes":     m.SizeBytes,
		"tables":         counts(m.Tables),
		"event_types":    counts(m.EventTypes),
	}
	b, err := CanonicalJSON(obj)
	if err != nil {
		return nil, recordstore.Errorf(ErrBadMeta, "%w", err)
	}
	return b, nil
}

func optTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return FormatTime(*t)
}

func counts(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return m
}

func (m Meta) check() error {
	switch {
	case m.Schema != MetaSchema:
		return recordstore.Errorf(ErrBadMeta, "schema %d", m.Schema)
	case !IsHex16(m.Instance):
		return recordstore.Errorf(ErrBadMeta, "instance %q is not 16 lowercase hex", m.Instance)
	case (m.FirstEventTS == nil) != (m.LastEventTS == nil):
		return recordstore.Errorf(ErrBadMeta, "first_event_ts and last_event_ts must both be set or both null")
	case m.SizeBytes < 0:
		return recordstore.Errorf(ErrBadMeta, "negative size_bytes")
	}
	for what, c := range map[string]map[string]int64{"tables": m.Tables, "event_types": m.EventTypes} {
		for k, n := range c {
			if n < 0 {
				return recordstore.Errorf(ErrBadMeta, "%s[%q] is negative", what, k)
			}
		}
	}
	return nil
}

// DecodeMeta reads meta file bytes strictly: a JSON object with exactly the
// ten keys of schema 1 (a missing or an unknown key is an error), schema 1,
// strings where strings are due, times in exactly the FormatTime shape,
// non-negative integers (no fraction, no exponent) for sizes and counts.
// Every failure is ErrBadMeta. It does not require canonical bytes.
func DecodeMeta(b []byte) (Meta, error) {
	obj, err := decodeObject(b, metaKeys)
	if err != nil {
		return Meta{}, recordstore.Errorf(ErrBadMeta, "%w", err)
	}
	var m Meta
	d := fieldDecoder{obj: obj}
	var schema int64
	d.int("schema", &schema)
	d.str("worker", &m.Worker)
	d.str("instance", &m.Instance)
	d.str("cluster", &m.Cluster)
	m.FirstEventTS = d.optTime("first_event_ts")
	m.LastEventTS = d.optTime("last_event_ts")
	d.time("sealed_at", &m.SealedAt)
	d.int("size_bytes", &m.SizeBytes)
	m.Tables = d.counts("tables")
	m.EventTypes = d.counts("event_types")
	if d.err != nil {
		return Meta{}, recordstore.Errorf(ErrBadMeta, "%w", d.err)
	}
	if schema != MetaSchema {
		return Meta{}, recordstore.Errorf(ErrBadMeta, "unknown schema %d", schema)
	}
	m.Schema = MetaSchema
	if err := m.check(); err != nil {
		return Meta{}, err
	}
	return m, nil
}

// ReadMeta reads and decodes the meta file at path. A missing file is the
// os error (errors.Is fs.ErrNotExist); bad content is ErrBadMeta.
func ReadMeta(path string) (Meta, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Meta{}, fmt.Errorf("read meta file: %w", err)
	}
	m, err := DecodeMeta(b)
	if err != nil {
		return Meta{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// WriteMeta writes m's canonical bytes to path, mode 0600, durably
// (temp file, fsync, rename, folder fsync through fsutil). On error path
// is unchanged: absent or its old content (after a failed folder fsync the
// new content is in place but may not survive a crash; that error wraps
// fsutil.ErrSync).
func WriteMeta(path string, m Meta) error {
	b, err := EncodeMeta(m)
	if err != nil {
		return err
	}
	return fsutil.WriteFile(path, b, fsutil.FileMode)
}

// decodeObject parses b as one JSON object whose keys must be exactly
// want (numbers kept as json.Number). Text that is not UTF-8 is refused;
// a key given twice keeps its last value, as in Python.
func decodeObject(b []byte, want []string) (map[string]any, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("not an object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the object")
	}
	for _, k := range want {
		if _, ok := obj[k]; !ok {
			return nil, fmt.Errorf("missing key %q", k)
		}
	}
	if len(obj) != len(want) {
		for k := range obj {
			if !slices.Contains(want, k) {
				return nil, fmt.Errorf("unknown key %q", k)
			}
		}
	}
	return obj, nil
}

// fieldDecoder reads typed fields of a decoded object, keeping the first
// error.
type fieldDecoder struct {
	obj map[string]any
	err error
}

func (d *fieldDecoder) fail(key, want string) {
	if d.err == nil {
		d.err = fmt.Errorf("%s: want %s", key, want)
	}
}

func (d *fieldDecoder) str(key string, dst *string) {
	s, ok := d.obj[key].(string)
	if !ok {
		d.fail(key, "a string")
	}
	*dst = s
}

func (d *fieldDecoder) time(key string, dst *time.Time) {
	var s string
	d.str(key, &s)
	if d.err != nil {
		return
	}
	t, err := ParseTime(s)
	if err != nil {
		d.fail(key, "a time YYYY-MM-DDTHH:MM:SS.ffffffZ")
	}
	*dst = t
}

func (d *fieldDecoder) optTime(key string) *time.Time {
	if d.obj[key] == nil {
		return nil
	}
	var t time.Time
	d.time(key, &t)
	return &t
}

// count reads a non-negative integer written without fraction or exponent.
func count(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok || strings.ContainsAny(string(n), ".eE-") {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil
}

func (d *fieldDecoder) int(key string, dst *int64) {
	n, ok := count(d.obj[key])
	if !ok {
		d.fail(key, "a non-negative integer")
	}
	*dst = n
}

func (d *fieldDecoder) counts(key string) map[string]int64 {
	obj, ok := d.obj[key].(map[string]any)
	if !ok {
		d.fail(key, "an object")
		return nil
	}
	out := make(map[string]int64, len(obj))
	for k, v := range obj {
		n, ok := count(v)
		if !ok {
			d.fail(key+"."+k, "a non-negative integer")
			return nil
		}
		out[k] = n
	}
	return out
}

// MarshalJSON writes m as EncodeMeta does, so that a Meta inside another
// JSON value (a listing) has its canonical bytes.
func (m Meta) MarshalJSON() ([]byte, error) { return EncodeMeta(m) }
