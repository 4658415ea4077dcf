// The manifest (format 1): the JSON document at the root of every batch
// folder, its decoding and its validation rules.

package spool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// ManifestFormat is the manifest format this build writes and reads.
const ManifestFormat = 1

// ManifestFile is the name of the manifest inside a batch folder.
const ManifestFile = "manifest.json"

// MaxManifestBytes bounds the size of a manifest a reader accepts.
const MaxManifestBytes = 16 << 20

// Manifest is manifest.json. See docs/spool-format.md for every field.
// Its header is the recordstore.Batch's it was published from; its entries
// are the batch's entries in their wire form (Entry).
type Manifest struct {
	Format   int                  `json:"format"`
	ID       string               `json:"id"`
	Producer recordstore.Producer `json:"producer"`
	Created  time.Time            `json:"created"`
	Schemas  []recordstore.Kind   `json:"schemas"`
	Entries  []Entry              `json:"entries"`
}

// Entry is one operation of a batch, applied in order: a
// recordstore.BatchEntry as manifest format 1 writes it. Its rows are not
// in the manifest but in File, which File, Format, Rows, Bytes and SHA256
// describe (the fields only the wire has); TTL and Before have their wire
// types. See entryOf and Entry.BatchEntry for the two directions.
type Entry struct {
	// Op is one of the recordstore batch operations (recordstore.OpAppend,
	// ...).
	Op     recordstore.BatchOp `json:"op"`
	Stream string              `json:"stream"`
	// Kind names a schema of the manifest (append and declare).
	Kind string `json:"kind,omitempty"`
	// File is the data file inside the batch folder, "" for a zero-row
	// append without a file (append only).
	File string `json:"file,omitempty"`
	// Format is the codec of File.
	Format string `json:"format,omitempty"`
	// Rows is the number of rows in File.
	Rows int64 `json:"rows"`
	// Bytes is the size of File in bytes.
	Bytes int64 `json:"bytes"`
	// SHA256 is the lowercase hex SHA-256 of File.
	SHA256 string `json:"sha256,omitempty"`
	// Seal seals the stream after the rows are appended (append only).
	Seal bool `json:"seal,omitempty"`
	// Generation, when not 0, fences the entry: it applies only while the
	// stream's current generation is this one. Required for reopen.
	Generation int64 `json:"generation,omitempty"`
	// TTL is the expiry delay of an expire entry.
	TTL recordstore.Duration `json:"ttl,omitempty"`
	// Before is the cut-off of a trim entry.
	Before *time.Time `json:"before,omitempty"`
}

// entryOf returns the wire form of e without its file fields (Publish
// fills them as it writes the file). Before is written when the entry is a
// trim or carries one (which validation then refuses).
func entryOf(e *recordstore.BatchEntry) Entry {
	me := Entry{Op: e.Op, Stream: e.Stream, Kind: e.Kind, Seal: e.Seal, Generation: e.Generation,
		TTL: recordstore.Duration(e.TTL)}
	if e.Op == recordstore.OpTrim || !e.Before.IsZero() {
		before := e.Before
		me.Before = &before
	}
	return me
}

// BatchEntry returns the entry as a recordstore.BatchEntry without rows
// (Folder.Open reads them from File).
func (e *Entry) BatchEntry() recordstore.BatchEntry {
	be := recordstore.BatchEntry{Op: e.Op, Stream: e.Stream, Kind: e.Kind, Seal: e.Seal,
		Generation: e.Generation, TTL: time.Duration(e.TTL)}
	if e.Before != nil {
		be.Before = *e.Before
	}
	return be
}

// Schema returns the manifest's schema named name, or nil.
func (m *Manifest) Schema(name string) *recordstore.Kind {
	return recordstore.KindNamed(m.Schemas, name)
}

// Name returns the batch folder name the manifest must be published under.
func (m *Manifest) Name() BatchName {
	return BatchName{Created: m.Created, Instance: m.Producer.Instance, Seq: m.Producer.Seq, ID: m.ID}
}

// Encode renders the manifest as indented JSON ending in a newline.
func (m *Manifest) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return append(b, '\n'), nil
}

// encodeCompact renders the manifest as JSON without indentation or a
// final newline: the same document as Encode, in fewer bytes, for an
// inline batch (DecodeManifest reads either).
func (m *Manifest) encodeCompact() ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return b, nil
}

// DecodeManifest parses and validates a manifest. A document that is not
// JSON, has unknown fields or breaks a rule is ErrBadManifest; a format
// other than 1 is ErrManifestFormat (checked first, so a newer format is
// always reported as such).
func DecodeManifest(data []byte) (*Manifest, error) {
	if len(data) > MaxManifestBytes {
		return nil, recordstore.Errorf(ErrBadManifest, "larger than %d bytes", MaxManifestBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w manifestWire
	err := dec.Decode(&w)
	m := Manifest{Format: w.Format, ID: w.ID, Producer: w.Producer, Created: w.Created, Entries: w.Entries}
	cached := false
	if err == nil {
		m.Schemas, cached, err = decodeSchemas(w.Schemas)
	}
	if err != nil || m.Format != ManifestFormat {
		// Whatever else is wrong, another format is reported as such:
		// a newer writer's manifest may well not decode as format 1.
		// (Only then is the document parsed a second time.)
		if ferr := checkFormat(data); ferr != nil {
			return nil, ferr
		}
	}
	if err != nil {
		return nil, recordstore.Errorf(ErrBadManifest, "%v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, recordstore.Errorf(ErrBadManifest, "data after the manifest object")
	}
	if err := m.validate(cached); err != nil {
		return nil, err
	}
	if !cached {
		manifestSchemas.put(w.Schemas, m.Schemas)
	}
	return &m, nil
}

// manifestWire is a Manifest as DecodeManifest reads it: the schemas stay
// JSON text until decodeSchemas. Its fields are Manifest's, in step (a
// test compares them).
type manifestWire struct {
	Format   int                  `json:"format"`
	ID       string               `json:"id"`
	Producer recordstore.Producer `json:"producer"`
	Created  time.Time            `json:"created"`
	Schemas  json.RawMessage      `json:"schemas"`
	Entries  []Entry              `json:"entries"`
}

// decodeSchemas decodes a manifest's schemas (nil when absent), strictly,
// or takes them from manifestSchemas; cached reports the latter, in which
// case they are validated and normalized already.
func decodeSchemas(raw json.RawMessage) (kinds []recordstore.Kind, cached bool, err error) {
	if len(raw) == 0 {
		return nil, false, nil
	}
	if kinds, ok := manifestSchemas.get(raw); ok {
		return kinds, true, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&kinds); err != nil {
		return nil, false, err
	}
	return kinds, false, nil
}

// schemaCache remembers, by their exact JSON text, the validated and
// normalized schemas of the manifests decoded last: the batches of one
// producer carry the same schemas, and decoding and checking them is most
// of the cost of loading a small batch. It hands out copies (Kind.Clone),
// so no caller shares what another changes. It holds at most
// schemaCacheSize texts of at most schemaCacheBytes each, and starts over
// when full.
type schemaCache struct {
	mu sync.Mutex
	m  map[string][]recordstore.Kind
}

const (
	schemaCacheSize  = 64
	schemaCacheBytes = 64 << 10
)

// manifestSchemas is DecodeManifest's cache.
var manifestSchemas = schemaCache{m: map[string][]recordstore.Kind{}}

func (c *schemaCache) get(raw []byte) ([]recordstore.Kind, bool) {
	c.mu.Lock()
	kinds, ok := c.m[string(raw)]
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	return cloneKinds(kinds), true
}

// put remembers kinds, which must be what raw decodes to once validated.
func (c *schemaCache) put(raw []byte, kinds []recordstore.Kind) {
	if len(raw) > schemaCacheBytes {
		return
	}
	kinds = cloneKinds(kinds)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= schemaCacheSize {
		clear(c.m)
	}
	c.m[string(raw)] = kinds
}

func cloneKinds(kinds []recordstore.Kind) []recordstore.Kind {
	if kinds == nil {
		return nil
	}
	out := make([]recordstore.Kind, len(kinds))
	for i, k := range kinds {
		out[i] = k.Clone()
	}
	return out
}

func checkFormat(data []byte) error {
	var probe struct {
		Format json.RawMessage `json:"format"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return recordstore.Errorf(ErrBadManifest, "not a JSON object: %v", err)
	}
	if probe.Format == nil {
		return recordstore.Errorf(ErrBadManifest, "no format field")
	}
	if string(probe.Format) != "1" {
		return fmt.Errorf("%w %s (this build reads format %d)", ErrManifestFormat, probe.Format, ManifestFormat)
	}
	return nil
}

// Validate checks the rules of format 1 and normalizes the schemas (see
// recordstore.Kind.ValidateStored: the rules of a new declaration are the
// owner's to check). It does not look at data files.
func (m *Manifest) Validate() error { return m.validate(false) }

// validate is Validate, leaving out the schemas' own checks when they are
// known to pass (schemasChecked: DecodeManifest took them from its cache).
func (m *Manifest) validate(schemasChecked bool) error {
	if m.Format != ManifestFormat {
		return fmt.Errorf("%w %d (this build reads format %d)", ErrManifestFormat, m.Format, ManifestFormat)
	}
	if !ValidID(m.ID) {
		return badManifest("id %s is not 32 lowercase hex characters", recordstore.Quote(m.ID))
	}
	if err := m.validateProducer(); err != nil {
		return err
	}
	if m.Created.IsZero() || m.Created.UnixNano() <= 0 || m.Created.Year() > 2261 {
		return badManifest("created %s is outside 1970..2261", m.Created)
	}
	if !schemasChecked {
		if err := m.validateSchemas(); err != nil {
			return err
		}
	}
	if len(m.Entries) == 0 {
		return badManifest("no entries")
	}
	files := map[string]bool{}
	for i := range m.Entries {
		if err := m.validateEntry(&m.Entries[i], files); err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
	}
	return nil
}

func badManifest(format string, args ...any) error {
	return recordstore.Errorf(ErrBadManifest, "%s", fmt.Sprintf(format, args...))
}

func (m *Manifest) validateProducer() error {
	p := m.Producer
	if !ValidInstance(p.Instance) {
		return badManifest("producer.instance %s is not 16 lowercase hex characters", recordstore.Quote(p.Instance))
	}
	if p.Seq < 1 || p.Seq > MaxSeq {
		return badManifest("producer.seq %d is outside 1..%d", p.Seq, int64(MaxSeq))
	}
	if p.PID < 0 {
		return badManifest("producer.pid %d is negative", p.PID)
	}
	return nil
}

func (m *Manifest) validateSchemas() error {
	seen := map[string]bool{}
	for i := range m.Schemas {
		k := &m.Schemas[i]
		// ValidateStored, not Validate: a batch carries the schema of the
		// kind it appends to, which may be a kind an earlier build stored
		// under looser rules. The owner, which has the catalog, holds any
		// schema that is not a stored kind as it is to every rule.
		if err := k.ValidateStored(); err != nil {
			return fmt.Errorf("%w: schema %d: %w", ErrBadManifest, i, err)
		}
		if seen[k.Name] {
			return badManifest("schema %s declared twice", k.Name)
		}
		seen[k.Name] = true
	}
	return nil
}

func (m *Manifest) validateEntry(e *Entry, files map[string]bool) error {
	if !e.Op.Valid() {
		return badManifest("unknown op %s", recordstore.Quote(string(e.Op)))
	}
	if e.Op == recordstore.OpDeclare {
		return m.validateDeclare(e)
	}
	if err := recordstore.ValidateStreamID(e.Stream); err != nil {
		return fmt.Errorf("%w: %w", ErrBadManifest, err)
	}
	if e.Generation < 0 {
		return badManifest("generation %d is negative", e.Generation)
	}
	if e.Op == recordstore.OpAppend {
		return m.validateAppend(e, files)
	}
	if e.Kind != "" || e.File != "" || e.Format != "" || e.Rows != 0 || e.Bytes != 0 || e.SHA256 != "" || e.Seal {
		return badManifest("%s entry carries append fields (kind, file, format, rows, bytes, sha256, seal)", e.Op)
	}
	if (e.TTL != 0) != (e.Op == recordstore.OpExpire) {
		return badManifest("ttl is required on expire entries and allowed nowhere else")
	}
	if e.Op == recordstore.OpExpire && e.TTL < 0 {
		return badManifest("expire ttl %s is not positive", time.Duration(e.TTL))
	}
	if (e.Before != nil) != (e.Op == recordstore.OpTrim) {
		return badManifest("before is required on trim entries and allowed nowhere else")
	}
	if e.Op == recordstore.OpReopen && e.Generation == 0 {
		return badManifest("reopen needs a generation")
	}
	return nil
}

func (m *Manifest) validateDeclare(e *Entry) error {
	if m.Schema(e.Kind) == nil {
		return badManifest("kind %s is not among the schemas", recordstore.Quote(e.Kind))
	}
	if e.Stream != "" || e.File != "" || e.Format != "" || e.Rows != 0 || e.Bytes != 0 || e.SHA256 != "" ||
		e.Seal || e.Generation != 0 || e.TTL != 0 || e.Before != nil {
		return badManifest("declare entry carries fields other than op and kind")
	}
	return nil
}

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (m *Manifest) validateAppend(e *Entry, files map[string]bool) error {
	if m.Schema(e.Kind) == nil {
		return badManifest("kind %s is not among the schemas", recordstore.Quote(e.Kind))
	}
	if e.TTL != 0 || e.Before != nil {
		return badManifest("append entry carries ttl or before")
	}
	if e.Rows < 0 || e.Bytes < 0 {
		return badManifest("negative rows or bytes")
	}
	if e.File == "" {
		if e.Format != "" || e.Rows != 0 || e.Bytes != 0 || e.SHA256 != "" {
			return badManifest("append entry without a file carries format, rows, bytes or sha256")
		}
		return nil
	}
	if err := checkFileName(e.File); err != nil {
		return err
	}
	if files[e.File] {
		return badManifest("file %s is named by two entries", recordstore.Quote(e.File))
	}
	files[e.File] = true
	c, err := Lookup(e.Format)
	if err != nil {
		return err
	}
	if !strings.HasSuffix(e.File, c.Extension()) {
		return badManifest("file %s does not end in %s (format %s)", recordstore.Quote(e.File), c.Extension(), e.Format)
	}
	if !sha256RE.MatchString(e.SHA256) {
		return badManifest("sha256 %s is not 64 lowercase hex characters", recordstore.Quote(e.SHA256))
	}
	return nil
}

var fileNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// checkFileName refuses (ErrUnsafePath) a data file name that is not one
// plain name inside the batch folder.
func checkFileName(name string) error {
	if !fileNameRE.MatchString(name) || strings.Contains(name, "..") || name == ManifestFile || name == ErrorFile {
		return recordstore.Errorf(ErrUnsafePath, "file name %s: want ^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$ without \"..\"", recordstore.Quote(name))
	}
	return nil
}
