// Streams: their metadata, append windows and the records a scan returns.

package recordstore

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// Meta describes one stream. Seqs of a generation start at 1; HighSeq is the
// seq of the newest row (0 when none was ever appended), LowSeq the seq of the
// oldest row still stored (HighSeq+1 when every row was trimmed or replaced
// away). Total counts stored rows; with replace or lww kinds it can be less
// than HighSeq-LowSeq+1 because replaced rows leave holes.
type Meta struct {
	Stream     string     `json:"stream"`
	Kind       string     `json:"kind"`
	Generation int64      `json:"generation"`
	Total      int64      `json:"total"`
	LowSeq     int64      `json:"lowSeq"`
	HighSeq    int64      `json:"highSeq"`
	Sealed     bool       `json:"sealed"`
	CreatedAt  time.Time  `json:"createdAt"`
	UpdatedAt  time.Time  `json:"updatedAt"`
	ExpiresAt  *time.Time `json:"expiresAt"`
}

// MarshalJSON writes times in the stored datetime form.
func (m Meta) MarshalJSON() ([]byte, error) {
	type plain struct {
		Stream     string  `json:"stream"`
		Kind       string  `json:"kind"`
		Generation int64   `json:"generation"`
		Total      int64   `json:"total"`
		LowSeq     int64   `json:"lowSeq"`
		HighSeq    int64   `json:"highSeq"`
		Sealed     bool    `json:"sealed"`
		CreatedAt  string  `json:"createdAt"`
		UpdatedAt  string  `json:"updatedAt"`
		ExpiresAt  *string `json:"expiresAt"`
	}
	p := plain{m.Stream, m.Kind, m.Generation, m.Total, m.LowSeq, m.HighSeq, m.Sealed,
		FormatDatetime(m.CreatedAt), FormatDatetime(m.UpdatedAt), nil}
	if m.ExpiresAt != nil {
		s := FormatDatetime(*m.ExpiresAt)
		p.ExpiresAt = &s
	}
	return json.Marshal(p)
}

// AppendResult is the window an append wrote. Appended rows got the seqs
// From..To (From = To+1 = HighSeq+1 when nothing was appended); Skipped rows
// lost a key conflict; Replaced counts stored rows that incoming ones
// replaced (those incoming rows are counted in Appended too).
type AppendResult struct {
	Stream   string `json:"stream"`
	Kind     string `json:"kind"`
	From     int64  `json:"from"`
	To       int64  `json:"to"`
	Appended int64  `json:"appended"`
	Skipped  int64  `json:"skipped"`
	Replaced int64  `json:"replaced"`
}

// Record is one stored row with its seq.
type Record struct {
	Seq    int64
	Values Row
}

// MarshalJSON writes the record as one object: its columns plus "_seq".
// Integers print exactly, json columns as the JSON value itself, datetimes
// in the stored form, nulls as null. Keys are sorted.
func (r Record) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"_seq":`)
	buf.WriteString(strconv.FormatInt(r.Seq, 10))
	names := make([]string, 0, len(r.Values))
	for name := range r.Values {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		buf.WriteByte(',')
		kb, _ := json.Marshal(name)
		buf.Write(kb)
		buf.WriteByte(':')
		if err := writeValue(&buf, r.Values[name]); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func writeValue(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case time.Time:
		buf.WriteByte('"')
		buf.WriteString(FormatDatetime(x))
		buf.WriteByte('"')
	case json.RawMessage:
		buf.Write(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}

// ScanOptions selects a window of a stream.
type ScanOptions struct {
	// After returns rows with seq > After (0: from the start).
	After int64
	// Limit caps the rows returned; 0 means no cap.
	Limit int
}
