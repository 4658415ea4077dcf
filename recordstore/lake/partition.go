package lake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/spool/parquet"
)

// The units a datetime column partitions by.
const (
	UnitHour  = "hour"
	UnitDay   = "day"
	UnitMonth = "month"
)

// NullPartition is the partition value of the rows whose partition column
// is null: the Hive convention, which DuckDB and Spark read as NULL.
const NullPartition = "__HIVE_DEFAULT_PARTITION__"

// unitLayouts are the time layouts of a partition value per unit (UTC).
var unitLayouts = map[string]string{UnitHour: "2006-01-02T15", UnitDay: "2006-01-02", UnitMonth: "2006-01"}

// Partitioning splits a stream's files by the value of one of its kind's
// datetime columns, truncated to a unit, besides seq ranges.
type Partitioning struct {
	// Column is the datetime column.
	Column string `json:"column"`
	// Unit is UnitHour, UnitDay or UnitMonth.
	Unit string `json:"unit"`
}

// ParsePartitioning reads "COLUMN" or "COLUMN:UNIT" (hour, day or month;
// day when left out). A malformed value is ErrInvalid; whether the column
// exists and is a datetime is checked by Export against the stream's kind.
func ParsePartitioning(s string) (Partitioning, error) {
	col, unit, cut := strings.Cut(s, ":")
	if !cut {
		unit = UnitDay
	}
	p := Partitioning{Column: col, Unit: unit}
	if err := p.check(); err != nil {
		return Partitioning{}, recordstore.Invalidf("partition by %s: %v", recordstore.Quote(s), err)
	}
	return p, nil
}

// String returns the partitioning as ParsePartitioning reads it.
func (p Partitioning) String() string { return p.Column + ":" + p.Unit }

// Dir is the partition folder of a partition value, relative to a
// generation's folder: "<column>_<unit>=<value>". The unit is part of the
// name so that the folder's column does not shadow the file's own column
// of the same name in a Hive-partitioned read.
func (p Partitioning) Dir(value string) string {
	return p.Column + "_" + p.Unit + "=" + value
}

// value is the partition value of a stored datetime (or nil).
func (p Partitioning) value(v any) (string, error) {
	var t time.Time
	switch d := v.(type) {
	case nil:
		return NullPartition, nil
	case time.Time:
		t = d
	case string:
		st, ok := recordstore.ParseStoredDatetime(d)
		if !ok {
			pt, err := recordstore.ParseDatetime(d)
			if err != nil {
				return "", err
			}
			st = pt
		}
		t = st
	default:
		return "", recordstore.Invalidf("column %s: want a datetime, got %T", recordstore.Quote(p.Column), v)
	}
	return t.UTC().Format(unitLayouts[p.Unit]), nil
}

var columnName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (p Partitioning) check() error {
	if !columnName.MatchString(p.Column) {
		return fmt.Errorf("column %s: want a column name", recordstore.Quote(p.Column))
	}
	if _, ok := unitLayouts[p.Unit]; !ok {
		return fmt.Errorf("unit %s: want hour, day or month", recordstore.Quote(p.Unit))
	}
	return nil
}

// checkValue tells a well-formed partition value of the unit.
func (p Partitioning) checkValue(v string) bool {
	if v == NullPartition {
		return true
	}
	t, err := time.Parse(unitLayouts[p.Unit], v)
	return err == nil && t.Format(unitLayouts[p.Unit]) == v
}

// checkKind checks that the kind has the column and that it is a datetime.
func (p Partitioning) checkKind(k *recordstore.Kind) error {
	c, ok := k.Column(p.Column)
	if !ok {
		return recordstore.Invalidf("partition by %s: kind %s has no column %s", recordstore.Quote(p.String()), recordstore.Quote(k.Name), recordstore.Quote(p.Column))
	}
	if c.Type != recordstore.TypeDatetime {
		return recordstore.Invalidf("partition by %s: column %s of kind %s is a %s, not a datetime", recordstore.Quote(p.String()), recordstore.Quote(p.Column), recordstore.Quote(k.Name), c.Type)
	}
	return nil
}

// partFile is one partition's temp file while a seq range is written.
type partFile struct {
	tmp  *os.File
	h    hash.Hash
	cw   *countWriter
	enc  spool.Encoder
	rows int64
}

// exportPartitioned writes the rows with seqs from..to in one file per
// partition value met, reading the range once; it returns the files
// written to the sink in partition order (none when the range holds no
// row). Each partition met holds a temp file open until the range ends.
func exportPartitioned(ctx context.Context, r *recordresults.Reader, k *recordstore.Kind, p Partitioning, sink Sink, dir, stream string, gen, from, to int64, tempDir string) (files []File, err error) {
	parts := map[string]*partFile{}
	defer func() {
		for _, pf := range parts {
			pf.tmp.Close()
			os.Remove(pf.tmp.Name())
		}
	}()
	out := recordstore.Kind{Name: k.Name, Columns: append([]recordstore.Column{{Name: "_seq", Type: recordstore.TypeInteger, Required: true}}, k.Columns...)}
	vals := make(recordstore.Values, len(out.Columns))
	for rec, err := range r.Rows(ctx, recordresults.Query{Stream: stream, After: from - 1, To: to}) {
		if err != nil {
			return nil, err
		}
		vals[0] = rec.Seq
		for i, c := range k.Columns {
			v, err := recordstore.NormalizeValue(c, rec.Values[c.Name])
			if err != nil {
				return nil, fmt.Errorf("lake export: row %d column %s: %w", rec.Seq, c.Name, err)
			}
			vals[i+1] = v
		}
		key, err := p.value(rec.Values[p.Column])
		if err != nil {
			return nil, fmt.Errorf("lake export: row %d: %w", rec.Seq, err)
		}
		pf := parts[key]
		if pf == nil {
			tmp, err := os.CreateTemp(tempDir, ".lake-part-*.parquet")
			if err != nil {
				return nil, fmt.Errorf("lake export: temp file: %w", err)
			}
			pf = &partFile{tmp: tmp, h: sha256.New()}
			parts[key] = pf
			pf.cw = &countWriter{w: io.MultiWriter(tmp, pf.h)}
			enc, err := parquet.Codec{}.NewEncoder(pf.cw, &out)
			if err != nil {
				return nil, err
			}
			pf.enc = enc
		}
		if err := pf.enc.Write(vals); err != nil {
			return nil, fmt.Errorf("lake export: row %d: %w", rec.Seq, err)
		}
		pf.rows++
	}
	keys := make([]string, 0, len(parts))
	for key := range parts {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		pf := parts[key]
		if err := pf.enc.Close(); err != nil {
			return nil, fmt.Errorf("lake export: %w", err)
		}
		if err := pf.tmp.Close(); err != nil {
			return nil, err
		}
	}
	for _, key := range keys {
		pf := parts[key]
		f := File{Path: partFileName(gen, p, key, from, to), Generation: gen, Partition: key, FromSeq: from, ToSeq: to,
			Rows: pf.rows, Bytes: pf.cw.n, SHA256: hex.EncodeToString(pf.h.Sum(nil))}
		if err := sink.PutFile(ctx, dir+"/"+f.Path, pf.tmp.Name()); err != nil {
			for _, w := range files {
				_ = sink.Delete(ctx, dir+"/"+w.Path) // ours, named by no manifest
			}
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// partFileName is the name of the file of one partition value covering
// seqs from..to of generation gen, relative to the stream's folder.
func partFileName(gen int64, p Partitioning, value string, from, to int64) string {
	return fmt.Sprintf("%s/%s/part-%020d-%020d.parquet", generationDir(gen), p.Dir(value), from, to)
}
