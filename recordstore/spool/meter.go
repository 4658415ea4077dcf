// Metering an append against the spool's limits as its rows are read, so
// that an append meets the same limits whether the owner applies it or it
// travels as a batch.

package spool

import (
	"unicode/utf8"

	"github.com/fb46ecde/records/recordstore"
)

// meterDirect is the length from which Meter counts the JSON form of a
// string value without writing it.
const meterDirect = 1024

// Meter counts the rows of one append of one kind, and the bytes they take
// as the NDJSON lines Publish writes for them, against Limits: a row past
// MaxRows fails Add with ErrTooManyRows, a row that takes the lines past
// MaxBytes with ErrTooLarge — what publishing the rows as one batch to a
// Dir with those limits would refuse. A zero limit is no limit.
type Meter struct {
	kind  *recordstore.Kind
	lim   Limits
	ra    *rowAppender
	buf   []byte
	rows  int64
	bytes int64
}

// NewMeter returns a Meter of rows of kind against lim.
func NewMeter(kind *recordstore.Kind, lim Limits) *Meter {
	return &Meter{kind: kind, lim: lim, ra: newRowAppender(kind)}
}

// Counted reports whether the Meter counted exactly rows rows of kind (the
// same *Kind it was made with) against lim: then rows that many, which it
// counted, fit one append of a Dir with those limits.
func (m *Meter) Counted(kind *recordstore.Kind, lim Limits, rows int64) bool {
	return m != nil && m.kind == kind && m.lim == lim && m.rows == rows
}

// Add counts one row of stored values of the Meter's kind. A row the
// NDJSON codec cannot write (a value of the wrong type, say) is ErrInvalid.
// On error nothing is counted.
func (m *Meter) Add(vals recordstore.Values) error {
	if max := m.lim.MaxRows; max > 0 && m.rows+1 > max {
		return recordstore.Errorf(ErrTooManyRows, "more than %d rows in one append", max)
	}
	n, err := m.lineSize(vals)
	if err != nil {
		return err
	}
	if max := m.lim.MaxBytes; max > 0 && m.bytes+n > max {
		return tooLarge(max)
	}
	m.rows++
	m.bytes += n
	return nil
}

// Rows is the number of rows counted.
func (m *Meter) Rows() int64 { return m.rows }

// Bytes is the size of the NDJSON lines of the rows counted.
func (m *Meter) Bytes() int64 { return m.bytes }

// lineSize is the length of the JSON line appendRow writes for vals. A
// long string is measured where it is, not copied.
func (m *Meter) lineSize(vals recordstore.Values) (int64, error) {
	kind := m.ra.kind
	if len(vals) != len(kind.Columns) {
		return 0, recordstore.Invalidf("kind %s: %d values for %d columns", kind.Name, len(vals), len(kind.Columns))
	}
	n := int64(3) // {, } and the newline
	first := true
	for i, v := range vals {
		if v == nil {
			continue
		}
		if !first {
			n++ // the comma
		}
		first = false
		n += int64(len(m.ra.keys[i]))
		c := kind.Columns[i]
		if s, ok := v.(string); ok && len(s) >= meterDirect && (c.Type == recordstore.TypeString || c.Type == recordstore.TypeJSON) {
			size, err := stringSize(c.Type, s)
			if err != nil {
				return 0, recordstore.Invalidf("kind %s: column %s: %s", kind.Name, c.Name, recordstore.InvalidText(err))
			}
			n += size
			continue
		}
		var err error
		if m.buf, err = appendValue(m.buf[:0], c.Type, v); err != nil {
			return 0, recordstore.Invalidf("kind %s: column %s: %s", kind.Name, c.Name, recordstore.InvalidText(err))
		}
		n += int64(len(m.buf))
	}
	return n, nil
}

// stringSize is the length of the JSON form appendValue writes for s: a
// string column's quoted and escaped text, a json column's stored compact
// text as it is (Kind.Normalize stores json compact).
func stringSize(t recordstore.ColumnType, s string) (int64, error) {
	if t == recordstore.TypeJSON {
		return int64(len(s)), nil
	}
	if !utf8.ValidString(s) {
		return 0, recordstore.Invalidf("string is not valid UTF-8")
	}
	n := int64(len(s)) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n, nil
}
