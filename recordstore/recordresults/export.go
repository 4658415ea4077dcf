// Export: the rows of any Query written as NDJSON, CSV or Parquet (the
// spool's codec), streamed a page at a time with a row cap.

package recordresults

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstore/spool/parquet"
)

// Format is an export format.
type Format string

// The export formats.
const (
	FormatNDJSON  Format = "ndjson"  // one JSON object per row, as scan prints it
	FormatCSV     Format = "csv"     // a header line "_seq,<columns>", then one line per row
	FormatParquet Format = "parquet" // the spool's Parquet codec, with an "_seq" int64 column first
)

// ParseFormat reads a format name; "" is FormatNDJSON. Another name is
// ErrInvalid.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case "":
		return FormatNDJSON, nil
	case FormatNDJSON, FormatCSV, FormatParquet:
		return f, nil
	}
	return "", recordstore.Invalidf("format=%s: want ndjson, csv or parquet", recordstore.Quote(s))
}

// ContentType is the HTTP content type of the format.
func (f Format) ContentType() string {
	switch f {
	case FormatCSV:
		return "text/csv; charset=utf-8"
	case FormatParquet:
		return "application/vnd.apache.parquet"
	}
	return ContentTypeNDJSON
}

// Extension is the file name suffix of the format: ".ndjson", ".csv",
// ".parquet".
func (f Format) Extension() string { return "." + string(f) }

// rowWriter writes rows of one kind in one format.
type rowWriter interface {
	write(rec recordstore.Record) error
	// writeValues writes a row from its values in the order of the kind's
	// columns (every column, a null one nil), as write writes its record.
	writeValues(seq int64, vals []any) error
	// flush writes out what is buffered (between pages).
	flush() error
	// close ends the output (a CSV flush, a Parquet footer).
	close() error
}

// ExportOptions are the options of ExportWith and ExportPageWith. The zero
// value writes NDJSON.
type ExportOptions struct {
	// Format is the output format; "" is FormatNDJSON.
	Format Format
	// CSVGuard, with FormatCSV, writes every text cell that a spreadsheet
	// would take for a formula (GuardCSVCell) with a "'" in front. Cells of
	// numbers, bools, datetimes and json stay as they are: -5 in an integer
	// column is the number -5.
	CSVGuard bool
	// Progress, when not nil, is called after each page with the rows
	// written so far (ExportWith only).
	Progress func(rows int64)
}

// format is o.Format, FormatNDJSON when empty.
func (o ExportOptions) format() Format {
	if o.Format == "" {
		return FormatNDJSON
	}
	return o.Format
}

// newRowWriter returns the writer of the options' format for rows of kind
// k.
func newRowWriter(w io.Writer, k *recordstore.Kind, o ExportOptions) (rowWriter, error) {
	switch o.format() {
	case FormatCSV:
		return newCSVWriter(w, k, o.CSVGuard)
	case FormatParquet:
		return newParquetWriter(w, k)
	}
	return newNDJSONWriter(w, k), nil
}

// ndjsonWriter writes each record as Record.MarshalJSON does, byte for
// byte, faster: the kind's keys are sorted and quoted once, and plain
// strings and integers are written without reflection.
type ndjsonWriter struct {
	w    *bufio.Writer
	keys []string // the kind's column names, sorted
	head [][]byte // `,"name":` of each key
	cols []int    // the kind's column index of each key
	line []byte
}

func newNDJSONWriter(w io.Writer, k *recordstore.Kind) *ndjsonWriter {
	n := &ndjsonWriter{w: bufio.NewWriterSize(w, 64<<10)}
	for _, c := range k.Columns {
		n.keys = append(n.keys, c.Name)
	}
	slices.Sort(n.keys)
	for _, name := range n.keys {
		q, _ := json.Marshal(name)
		n.head = append(n.head, append(append([]byte{','}, q...), ':'))
		n.cols = append(n.cols, k.ColumnIndex(name))
	}
	return n
}

// writeValues writes the line write writes for the record of vals, built
// in the writer's buffer when it has room.
func (n *ndjsonWriter) writeValues(seq int64, vals []any) error {
	b := n.w.AvailableBuffer()
	own := cap(b) < 1024
	if own {
		b = n.line[:0]
	}
	b = append(b, `{"_seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	for i, c := range n.cols {
		b = append(b, n.head[i]...)
		var err error
		if b, err = appendJSONValue(b, vals[c]); err != nil {
			return err
		}
	}
	b = append(b, '}', '\n')
	if own {
		n.line = b
	}
	_, err := n.w.Write(b)
	return err
}

func (n *ndjsonWriter) write(rec recordstore.Record) error {
	if len(rec.Values) != len(n.keys) {
		b, err := rec.MarshalJSON() // a row of other columns than the kind's
		if err != nil {
			return err
		}
		_, err = n.w.Write(append(b, '\n'))
		return err
	}
	b := append(n.line[:0], `{"_seq":`...)
	b = strconv.AppendInt(b, rec.Seq, 10)
	for i, name := range n.keys {
		v, ok := rec.Values[name]
		if !ok {
			raw, err := rec.MarshalJSON()
			if err != nil {
				return err
			}
			b = append(raw, '\n')
			_, err = n.w.Write(b)
			return err
		}
		b = append(b, n.head[i]...)
		var err error
		if b, err = appendJSONValue(b, v); err != nil {
			return err
		}
	}
	b = append(b, '}', '\n')
	n.line = b
	_, err := n.w.Write(b)
	return err
}

// appendJSONValue appends v as Record.MarshalJSON writes it (encoding/json
// for anything but the fast cases, so the bytes are the same).
func appendJSONValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case float64:
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			return appendJSONFloat(b, x), nil
		}
	case time.Time:
		b = append(b, '"')
		b = append(b, recordstore.FormatDatetime(x)...)
		return append(b, '"'), nil
	case json.RawMessage:
		return append(b, x...), nil
	case string:
		if plainJSONString(x) {
			b = append(b, '"')
			b = append(b, x...)
			return append(b, '"'), nil
		}
	}
	m, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, m...), nil
}

// appendJSONFloat appends f (finite) as encoding/json writes a float64:
// the shortest text that reads back as f, in exponent form below 1e-6 and
// from 1e21 on (its exponent without a leading zero: 1e-07 is 1e-7).
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

// plainJSONString reports whether encoding/json writes s as is between
// quotes: printable ASCII without '"', '\\' or the HTML characters it
// escapes.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

func (n *ndjsonWriter) flush() error { return n.w.Flush() }
func (n *ndjsonWriter) close() error { return n.w.Flush() }

// csvWriter writes "_seq" and the kind's columns, in kind order: nulls as
// empty fields, datetimes in the stored form, json as its compact text,
// text cells through GuardCSVCell when guard is set.
type csvWriter struct {
	w     *csv.Writer
	k     *recordstore.Kind
	guard bool
	line  []string
}

func newCSVWriter(w io.Writer, k *recordstore.Kind, guard bool) (*csvWriter, error) {
	c := &csvWriter{w: csv.NewWriter(w), k: k, guard: guard, line: make([]string, len(k.Columns)+1)}
	c.line[0] = "_seq"
	for i, col := range k.Columns {
		c.line[i+1] = col.Name
	}
	return c, c.w.Write(c.line)
}

func (c *csvWriter) write(rec recordstore.Record) error {
	c.line[0] = strconv.FormatInt(rec.Seq, 10)
	for i, col := range c.k.Columns {
		c.line[i+1] = csvCell(rec.Values[col.Name], c.guard)
	}
	return c.w.Write(c.line)
}

func (c *csvWriter) writeValues(seq int64, vals []any) error {
	c.line[0] = strconv.FormatInt(seq, 10)
	for i := range c.k.Columns {
		c.line[i+1] = csvCell(vals[i], c.guard)
	}
	return c.w.Write(c.line)
}

func (c *csvWriter) flush() error { return c.close() }

func (c *csvWriter) close() error {
	c.w.Flush()
	return c.w.Error()
}

// csvCell is csvField, with a text cell through GuardCSVCell when guard
// is set.
func csvCell(v any, guard bool) string {
	s := csvField(v)
	if guard && csvText(v) {
		return GuardCSVCell(s)
	}
	return s
}

// csvText reports whether v is written as text a spreadsheet could read as
// a formula: a string (or a value of no known type), not a number, bool,
// datetime or json value.
func csvText(v any) bool {
	switch v.(type) {
	case nil, int64, float64, bool, time.Time, json.RawMessage:
		return false
	}
	return true
}

// GuardCSVCell returns the text of a CSV cell made safe to open in a
// spreadsheet: a cell starting with '=', '+', '-', '@', a tab or a
// carriage return, which a spreadsheet may run as a formula ("CSV
// injection"), gets a "'" in front (shown as text, the quote hidden);
// any other cell is returned as it is. A guarded export applies it to
// text cells only (ExportOptions.CSVGuard).
func GuardCSVCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// csvField is the text of one value in a CSV field.
func csvField(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return recordstore.FormatDatetime(x)
	case json.RawMessage:
		return string(x)
	}
	return fmt.Sprint(v)
}

// parquetWriter writes through the spool's Parquet encoder, over the kind
// with an "_seq" integer column put first.
type parquetWriter struct {
	enc  spool.Encoder
	cols []recordstore.Column
	vals recordstore.Values
}

func newParquetWriter(w io.Writer, k *recordstore.Kind) (*parquetWriter, error) {
	out := recordstore.Kind{Name: k.Name, Columns: append([]recordstore.Column{{Name: "_seq", Type: recordstore.TypeInteger, Required: true}}, k.Columns...)}
	enc, err := parquet.Codec{}.NewEncoder(w, &out)
	if err != nil {
		return nil, fmt.Errorf("parquet export of kind %s: %w", k.Name, err)
	}
	return &parquetWriter{enc: enc, cols: k.Columns, vals: make(recordstore.Values, len(k.Columns)+1)}, nil
}

func (p *parquetWriter) write(rec recordstore.Record) error {
	p.vals[0] = rec.Seq
	for i, c := range p.cols {
		v, err := recordstore.NormalizeValue(c, rec.Values[c.Name])
		if err != nil {
			return fmt.Errorf("row %d column %s: %w", rec.Seq, c.Name, err)
		}
		p.vals[i+1] = v
	}
	return p.enc.Write(p.vals)
}

func (p *parquetWriter) writeValues(seq int64, vals []any) error {
	p.vals[0] = seq
	for i, c := range p.cols {
		v, err := recordstore.NormalizeValue(c, vals[i])
		if err != nil {
			return fmt.Errorf("row %d column %s: %w", seq, c.Name, err)
		}
		p.vals[i+1] = v
	}
	return p.enc.Write(p.vals)
}

// flush leaves rows buffered: a Parquet row group is written when full.
func (p *parquetWriter) flush() error { return nil }

func (p *parquetWriter) close() error { return p.enc.Close() }

// Export writes the rows of q (at most q.Limit, 0: all) to w in format f,
// a page at a time, and returns how many it wrote; progress, when not
// nil, is called after each page with the rows written so far. Bad
// parameters fail before anything is written; a failure later leaves w
// with a partial output (a Parquet file without its footer, which no
// reader takes for a whole one).
func (r *Reader) Export(ctx context.Context, w io.Writer, q Query, f Format, progress func(rows int64)) (int64, error) {
	return r.ExportWith(ctx, w, q, ExportOptions{Format: f, Progress: progress})
}

// ExportWith is Export with options: the format, the CSV guard and the
// progress function.
func (r *Reader) ExportWith(ctx context.Context, w io.Writer, q Query, o ExportOptions) (int64, error) {
	p, err := r.plan(ctx, q)
	if err != nil {
		return 0, err
	}
	return r.export(ctx, w, p, q.Limit, o)
}

// export writes the rows of a planned read; o.Progress, when set, runs
// after each page (an HTTP flush, a progress bar).
// A backend that is a RowStreamer is read through it (see streamExport).
func (r *Reader) export(ctx context.Context, w io.Writer, p *plan, limit int, o ExportOptions) (int64, error) {
	g := &pager{b: r.b, p: p, limit: limit}
	if s, ok := r.b.(RowStreamer); ok {
		pb := &pageBuffer{out: w}
		rw, err := newRowWriter(pb, &p.kind, o)
		if err != nil {
			return 0, err
		}
		return streamExport(ctx, s, g, rw, pb, o)
	}
	return writeExport(ctx, w, g, nil, o, nil)
}

// writeExport writes first (a page already read from g, or nil), then the
// rest of g's pages, then ends the output. When g's limit cut the read
// and cut is not nil, it returns cut's error instead of ending the output,
// so that nobody takes what was written for the whole read.
func writeExport(ctx context.Context, w io.Writer, g *pager, first []recordstore.Record, o ExportOptions, cut func() error) (int64, error) {
	rw, err := newRowWriter(w, &g.p.kind, o)
	if err != nil {
		return 0, err
	}
	var n int64
	recs := first
	for {
		if recs == nil {
			if recs, err = g.next(ctx); err != nil {
				return n, err
			}
		}
		if len(recs) == 0 {
			break
		}
		for _, rec := range recs {
			if err := rw.write(rec); err != nil {
				return n, fmt.Errorf("export row %d: %w", rec.Seq, err)
			}
		}
		n += int64(len(recs))
		recs = nil
		if err := rw.flush(); err != nil {
			return n, fmt.Errorf("export: %w", err)
		}
		if o.Progress != nil {
			o.Progress(n)
		}
	}
	if cut != nil && g.cut() {
		return n, cut()
	}
	if err := rw.close(); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	return n, nil
}

// ExportPage writes one page of q (see Page) to w in format f and returns
// the cursor of the next page ("" after the last) and the rows written.
// The page is read whole before anything is written, so a failure to read
// it leaves w untouched.
func (r *Reader) ExportPage(ctx context.Context, w io.Writer, q Query, f Format) (next string, n int, err error) {
	return r.ExportPageWith(ctx, w, q, ExportOptions{Format: f})
}

// ExportPageWith is ExportPage with options (the format and the CSV
// guard; Progress is not called).
func (r *Reader) ExportPageWith(ctx context.Context, w io.Writer, q Query, o ExportOptions) (next string, n int, err error) {
	p, err := r.plan(ctx, q)
	if err != nil {
		return "", 0, err
	}
	recs, more, err := p.fetch(ctx, r.b, q.pageSize())
	if err != nil {
		return "", 0, err
	}
	if more {
		next = p.cursor()
	}
	if err := writeRows(w, &p.kind, recs, o); err != nil {
		return "", 0, err
	}
	return next, len(recs), nil
}

// writeRows writes recs, rows of kind k, to w as o says.
func writeRows(w io.Writer, k *recordstore.Kind, recs []recordstore.Record, o ExportOptions) error {
	rw, err := newRowWriter(w, k, o)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if err := rw.write(rec); err != nil {
			return fmt.Errorf("export row %d: %w", rec.Seq, err)
		}
	}
	if err := rw.close(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
