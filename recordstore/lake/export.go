package lake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
)

// DefaultRowsPerFile is Options.RowsPerFile's default.
const DefaultRowsPerFile = 1_000_000

// Options are the options of Export.
type Options struct {
	// RowsPerFile caps the rows of one file (seqs, precisely: a file
	// covers at most this many consecutive seqs); 0 is
	// DefaultRowsPerFile.
	RowsPerFile int64
	// Since skips the rows with a seq at or below it when the manifest
	// has not covered them yet (the first export of a stream that should
	// not start at the beginning). A later run's manifest wins over a
	// smaller Since.
	Since int64
	// PartitionBy, when its Column is set, splits each seq range's rows
	// into one file per value of a datetime column of the stream's kind,
	// truncated to its Unit, under "<column>_<unit>=<value>/" folders
	// (see Partitioning). A destination keeps the scheme of its first
	// export: a run with another one is ErrSchemaConflict.
	PartitionBy Partitioning
	// TempDir holds each file while it is written; "" is os.TempDir().
	TempDir string
	// Logger, when not nil, gets a line per file written and per leftover
	// removed.
	Logger *slog.Logger
}

// Report is what one Export did.
type Report struct {
	// Stream and Destination name what was exported where.
	Stream      string `json:"stream"`
	Destination string `json:"destination"`
	// Generation and HighSeq are the manifest's after the run.
	Generation int64 `json:"generation"`
	HighSeq    int64 `json:"highSeq"`
	// Files are the files this run wrote (none when nothing was new).
	Files []File `json:"files"`
	// Rows and Bytes sum Files.
	Rows  int64 `json:"rows"`
	Bytes int64 `json:"bytes"`
	// Removed are the leftovers of an earlier run that died, removed.
	Removed []string `json:"removed,omitempty"`
}

// StreamDir is the folder of a stream inside the destination:
// "stream=<path-escaped name>".
func StreamDir(stream string) string { return "stream=" + url.PathEscape(stream) }

// Export writes the rows of stream that the destination's manifest does
// not cover yet as Parquet files to sink, then the manifest naming them.
//
// A stream that does not exist is ErrNotFound; a manifest written for
// another kind or with another partitioning is ErrSchemaConflict; a
// partition column the kind does not have or that is not a datetime is
// ErrInvalid, before anything is written; an unreadable manifest is ErrInvalid
// and nothing is written; another export of the stream to the same
// destination is ErrBusy. On any failure the manifest names only whole
// files (those of this run written before the failure included), and at
// most one file it does not name is left, which the next run removes.
func Export(ctx context.Context, r *recordresults.Reader, stream string, sink Sink, opts Options) (Report, error) {
	rep := Report{Stream: stream, Destination: sink.String(), Files: []File{}}
	if opts.RowsPerFile < 0 || opts.Since < 0 {
		return rep, recordstore.Invalidf("lake export: rows per file and since must not be negative")
	}
	if opts.RowsPerFile == 0 {
		opts.RowsPerFile = DefaultRowsPerFile
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	meta, err := r.Backend().Meta(ctx, stream)
	if err != nil {
		return rep, err
	}
	var part *Partitioning
	var kind recordstore.Kind
	if opts.PartitionBy.Column != "" {
		p := opts.PartitionBy
		if p.Unit == "" {
			p.Unit = UnitDay
		}
		if err := p.check(); err != nil {
			return rep, recordstore.Invalidf("lake export: partition by %s: %v", recordstore.Quote(p.String()), err)
		}
		if kind, err = r.Backend().Kind(ctx, meta.Kind); err != nil {
			return rep, err
		}
		if err := p.checkKind(&kind); err != nil {
			return rep, err
		}
		part = &p
	}
	dir := StreamDir(stream)
	unlock, err := sink.Lock(ctx, dir)
	if err != nil {
		return rep, err
	}
	defer unlock()
	m, tag, err := loadManifest(ctx, sink, dir, stream, meta)
	if err != nil {
		return rep, err
	}
	if tag == "" {
		m.PartitionBy = part
	} else if scheme(m.PartitionBy) != scheme(part) {
		return rep, recordstore.Errorf(recordstore.ErrSchemaConflict, "lake manifest at %s partitions stream %s by %s, this export by %s",
			sink, recordstore.Quote(stream), scheme(m.PartitionBy), scheme(part))
	}
	if m.HighSeq < opts.Since {
		m.HighSeq = opts.Since
	}
	if rep.Removed, err = removeLeftovers(ctx, sink, dir, m, log); err != nil {
		return rep, err
	}
	for from := m.HighSeq + 1; from <= meta.HighSeq; {
		to := min(meta.HighSeq, from+opts.RowsPerFile-1)
		var files []File
		if part != nil {
			files, err = exportPartitioned(ctx, r, &kind, *part, sink, dir, stream, meta.Generation, from, to, opts.TempDir)
		} else {
			var f *File
			f, err = exportRange(ctx, r, sink, dir, stream, meta.Generation, from, to, opts.TempDir)
			if f != nil {
				files = []File{*f}
			}
		}
		if err != nil {
			return rep, err
		}
		m.HighSeq = to
		m.Files = append(m.Files, files...)
		if err := sink.PutIf(ctx, dir+"/"+ManifestName, m.encode(), tag); err != nil {
			for _, f := range files {
				_ = sink.Delete(ctx, dir+"/"+f.Path) // ours, named by no manifest
			}
			return rep, err
		}
		if _, tag, err = sink.Get(ctx, dir+"/"+ManifestName); err != nil {
			return rep, err
		}
		for _, f := range files {
			rep.Files = append(rep.Files, f)
			rep.Rows += f.Rows
			rep.Bytes += f.Bytes
			log.Info("lake_file_written", "stream", stream, "file", f.Path, "rows", f.Rows, "bytes", f.Bytes)
		}
		from = to + 1
	}
	rep.Generation, rep.HighSeq = m.Generation, m.HighSeq
	return rep, nil
}

// loadManifest reads the stream's manifest, or starts one; a new
// generation of the stream starts over at seq 0 in its own folder.
func loadManifest(ctx context.Context, sink Sink, dir, stream string, meta recordstore.Meta) (*Manifest, string, error) {
	data, tag, err := sink.Get(ctx, dir+"/"+ManifestName)
	if isNotFound(err) {
		return &Manifest{Format: ManifestFormat, Stream: stream, Kind: meta.Kind, Generation: meta.Generation, Files: []File{}}, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	m, err := DecodeManifest(data, stream)
	if err != nil {
		return nil, "", err
	}
	if m.Kind != meta.Kind {
		return nil, "", recordstore.Errorf(recordstore.ErrSchemaConflict, "stream %s is of kind %s, its lake manifest at %s of kind %s",
			recordstore.Quote(stream), recordstore.Quote(meta.Kind), sink, recordstore.Quote(m.Kind))
	}
	if m.Generation != meta.Generation {
		m.Generation, m.HighSeq = meta.Generation, 0
	}
	if m.HighSeq > meta.HighSeq {
		return nil, "", recordstore.Errorf(recordstore.ErrSchemaConflict, "lake manifest at %s covers stream %s to seq %d, past its last seq %d (another store's export?)",
			sink, recordstore.Quote(stream), m.HighSeq, meta.HighSeq)
	}
	return m, tag, nil
}

// removeLeftovers deletes the part files of the current generation the
// manifest does not name: what a run that died between a file and its
// manifest left.
func removeLeftovers(ctx context.Context, sink Sink, dir string, m *Manifest, log *slog.Logger) ([]string, error) {
	named := map[string]bool{}
	for _, f := range m.Files {
		named[f.Path] = true
	}
	keys, err := sink.List(ctx, dir+"/"+generationDir(m.Generation)+"/")
	if err != nil {
		return nil, err
	}
	if m.PartitionBy != nil {
		// A partitioned run's files are one folder down; a run that died
		// left its range's files in folders of values the manifest may
		// not name yet: list every partition folder there is.
		subs, err := sink.ListDirs(ctx, dir+"/"+generationDir(m.Generation)+"/")
		if err != nil {
			return nil, err
		}
		for _, sub := range subs {
			more, err := sink.List(ctx, sub)
			if err != nil {
				return nil, err
			}
			keys = append(keys, more...)
		}
	}
	var removed []string
	for _, k := range keys {
		rel := strings.TrimPrefix(k, dir+"/")
		if named[rel] || !strings.HasPrefix(path.Base(rel), "part-") || !strings.HasSuffix(rel, ".parquet") {
			continue
		}
		if err := sink.Delete(ctx, k); err != nil {
			return removed, err
		}
		log.Warn("lake_leftover_removed", "file", k)
		removed = append(removed, rel)
	}
	return removed, nil
}

// scheme names a partitioning in messages: "seq ranges" for none.
func scheme(p *Partitioning) string {
	if p == nil {
		return "seq ranges"
	}
	return p.String()
}

// exportRange writes the rows with seqs from..to to a temp file, then to
// the sink; it returns nil when the range holds no row (trimmed).
func exportRange(ctx context.Context, r *recordresults.Reader, sink Sink, dir, stream string, gen, from, to int64, tempDir string) (*File, error) {
	tmp, err := os.CreateTemp(tempDir, ".lake-part-*.parquet")
	if err != nil {
		return nil, fmt.Errorf("lake export: temp file: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(tmp, h)}
	n, err := r.ExportWith(ctx, cw, recordresults.Query{Stream: stream, After: from - 1, To: to}, recordresults.ExportOptions{Format: recordresults.FormatParquet})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	f := &File{Path: fileName(gen, from, to), Generation: gen, FromSeq: from, ToSeq: to, Rows: n, Bytes: cw.n, SHA256: hex.EncodeToString(h.Sum(nil))}
	if err := sink.PutFile(ctx, dir+"/"+f.Path, tmp.Name()); err != nil {
		return nil, err
	}
	return f, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
