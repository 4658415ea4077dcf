package lake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"

	"github.com/fb46ecde/records/recordstore"
)

// ManifestFormat is the manifest format this package writes and reads.
const ManifestFormat = 1

// ManifestName is the manifest's file name inside a stream's folder.
const ManifestName = "_manifest.json"

// Manifest is the record of what was exported of one stream.
type Manifest struct {
	// Format is ManifestFormat.
	Format int `json:"format"`
	// Stream and Kind name the stream exported and its kind.
	Stream string `json:"stream"`
	Kind   string `json:"kind"`
	// Generation is the stream's generation the last run exported; a
	// stream deleted and made again starts a new generation folder.
	Generation int64 `json:"generation"`
	// HighSeq is the last seq of Generation covered: every row of that
	// generation with a seq at or below it is in a file (or was trimmed
	// from the store, or skipped with Options.Since, before it was
	// exported).
	HighSeq int64 `json:"highSeq"`
	// PartitionBy, when not nil, is the datetime partitioning of every
	// file (Options.PartitionBy); nil is seq ranges only. It is set by
	// the first export and never changes.
	PartitionBy *Partitioning `json:"partitionBy,omitempty"`
	// Files are the files written, oldest first (in a partitioned
	// manifest: by seq range, then by partition value).
	Files []File `json:"files"`
}

// File is one Parquet file of a manifest.
type File struct {
	// Path is the file's path relative to the stream's folder:
	// "generation=<G>/part-<from>-<to>.parquet", or in a partitioned
	// manifest "generation=<G>/<column>_<unit>=<value>/part-<from>-<to>.parquet".
	Path       string `json:"path"`
	Generation int64  `json:"generation"`
	// Partition is the partition value of the file's rows in a
	// partitioned manifest ("2026-12-02" by day, NullPartition for a
	// null column); "" otherwise. The files of one seq range share it
	// out, one per value met.
	Partition string `json:"partition,omitempty"`
	FromSeq   int64  `json:"fromSeq"`
	ToSeq     int64  `json:"toSeq"`
	Rows      int64  `json:"rows"`
	Bytes     int64  `json:"bytes"`
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string `json:"sha256"`
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// fileName is the name of the file covering seqs from..to of generation
// gen, relative to the stream's folder.
func fileName(gen, from, to int64) string {
	return fmt.Sprintf("generation=%d/part-%020d-%020d.parquet", gen, from, to)
}

// generationDir is the folder of generation gen, relative to the stream's
// folder.
func generationDir(gen int64) string { return "generation=" + strconv.FormatInt(gen, 10) }

// DecodeManifest parses and checks a manifest: the format, the stream it
// must be for, and files that are consistent (names as this package
// writes them, seq ranges in order inside the high seq, sizes and hashes
// well formed). Anything else is ErrInvalid naming what is wrong.
func DecodeManifest(data []byte, stream string) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, recordstore.Invalidf("lake manifest of stream %s: %v", recordstore.Quote(stream), err)
	}
	if dec.More() {
		return nil, recordstore.Invalidf("lake manifest of stream %s: data after the manifest", recordstore.Quote(stream))
	}
	if err := m.check(stream); err != nil {
		return nil, recordstore.Invalidf("lake manifest of stream %s: %v", recordstore.Quote(stream), err)
	}
	return &m, nil
}

func (m *Manifest) check(stream string) error {
	switch {
	case m.Format != ManifestFormat:
		return fmt.Errorf("format %d, want %d", m.Format, ManifestFormat)
	case m.Stream != stream:
		return fmt.Errorf("written for stream %s", recordstore.Quote(m.Stream))
	case m.Kind == "":
		return fmt.Errorf("no kind")
	case m.Generation < 0 || m.HighSeq < 0:
		return fmt.Errorf("negative generation or high seq")
	}
	if m.PartitionBy != nil {
		if err := m.PartitionBy.check(); err != nil {
			return fmt.Errorf("partition by: %v", err)
		}
	}
	last := map[int64]int64{}
	var prev File
	for i, f := range m.Files {
		// The next file of a partitioned seq range: same range, a greater
		// partition value than the file before.
		samePart := m.PartitionBy != nil && i > 0 && f.Generation == prev.Generation &&
			f.FromSeq == prev.FromSeq && f.ToSeq == prev.ToSeq && f.Partition > prev.Partition
		want := fileName(f.Generation, f.FromSeq, f.ToSeq)
		if m.PartitionBy != nil {
			want = partFileName(f.Generation, *m.PartitionBy, f.Partition, f.FromSeq, f.ToSeq)
		}
		switch {
		case m.PartitionBy == nil && f.Partition != "":
			return fmt.Errorf("file %d: partition %s in a manifest without partitioning", i, recordstore.Quote(f.Partition))
		case m.PartitionBy != nil && !m.PartitionBy.checkValue(f.Partition):
			return fmt.Errorf("file %d: partition %s, want a %s", i, recordstore.Quote(f.Partition), m.PartitionBy.Unit)
		case f.Generation < 0 || f.Generation > m.Generation:
			return fmt.Errorf("file %d: generation %d past the manifest's %d", i, f.Generation, m.Generation)
		case f.FromSeq < 1 || f.ToSeq < f.FromSeq:
			return fmt.Errorf("file %d: seq range %d-%d", i, f.FromSeq, f.ToSeq)
		case f.FromSeq <= last[f.Generation] && !samePart:
			return fmt.Errorf("file %d: seq range %d-%d overlaps the file before", i, f.FromSeq, f.ToSeq)
		case f.Generation == m.Generation && f.ToSeq > m.HighSeq:
			return fmt.Errorf("file %d: seq %d past the high seq %d", i, f.ToSeq, m.HighSeq)
		case f.Rows < 1 || f.Rows > f.ToSeq-f.FromSeq+1 || f.Bytes < 1:
			return fmt.Errorf("file %d: %d rows, %d bytes for seqs %d-%d", i, f.Rows, f.Bytes, f.FromSeq, f.ToSeq)
		case f.Path != want || path.Clean(f.Path) != f.Path:
			return fmt.Errorf("file %d: path %s, want %s", i, recordstore.Quote(f.Path), recordstore.Quote(want))
		case !sha256Hex.MatchString(f.SHA256):
			return fmt.Errorf("file %d: sha256 %s", i, recordstore.Quote(f.SHA256))
		}
		last[f.Generation] = f.ToSeq
		prev = f
	}
	return nil
}

// encode writes the manifest as indented JSON with a final newline.
func (m *Manifest) encode() []byte {
	b, _ := json.MarshalIndent(m, "", "  ") // plain fields only: cannot fail
	return append(b, '\n')
}
