// Remap: moving normalized values written under one declaration of a kind
// (a batch's own schema) into the column order of another (the stored one).

package recordstore

import "fmt"

// Remapper moves rows of normalized values from the column order of one
// declaration of a kind into another's. Build it once per pair of
// declarations with NewRemapper and apply it to every row; it is safe for
// concurrent use.
type Remapper struct {
	from, to *Kind
	pos      []int // pos[i] is the position in to of from's column i
	identity bool  // same columns in the same order: rows pass through
}

// NewRemapper checks that every column of from exists in to with the same
// type (ErrSchemaConflict otherwise) and returns the remapper. Columns of
// to that from lacks are null in remapped rows.
func NewRemapper(from, to *Kind) (*Remapper, error) {
	m := &Remapper{from: from, to: to, pos: make([]int, len(from.Columns))}
	m.identity = len(from.Columns) == len(to.Columns)
	for i, c := range from.Columns {
		j := to.ColumnIndex(c.Name)
		if j < 0 || to.Columns[j].Type != c.Type {
			return nil, fmt.Errorf("%w: column %s of kind %s does not match kind %s",
				ErrSchemaConflict, c.Name, from.Name, to.Name)
		}
		m.pos[i] = j
		m.identity = m.identity && i == j
	}
	return m, nil
}

// Remap returns vals (a row of from) in to's column order. It refuses with
// ErrInvalid a row with the wrong number of values, a value whose Go type
// is not the stored type of its column (see Values: string for string,
// datetime and json columns, int64 for integer and bool columns, with bools
// 0 or 1, float64 for number columns), and a null required or key column
// of to. The text of datetime and json values is not parsed again: values
// come from Kind.Normalize or a spool codec, which produce it. When the
// column lists are equal, vals itself is returned.
func (m *Remapper) Remap(vals Values) (Values, error) {
	if len(vals) != len(m.from.Columns) {
		return nil, Invalidf("kind %s: %d values for %d columns", m.from.Name, len(vals), len(m.from.Columns))
	}
	for i, v := range vals {
		if !storedFits(m.from.Columns[i].Type, v) {
			c := m.from.Columns[i]
			return nil, Invalidf("kind %s: column %s (%s): %T %v is not a stored %s value", m.from.Name, c.Name, c.Type, v, v, c.Type)
		}
	}
	out := vals
	if !m.identity {
		out = make(Values, len(m.to.Columns))
		for i, v := range vals {
			out[m.pos[i]] = v
		}
	}
	if err := m.to.CheckRequired(out); err != nil {
		return nil, err
	}
	return out, nil
}

// storedFits reports whether v has the Go type a column of type t stores.
func storedFits(t ColumnType, v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return t == TypeString || t == TypeDatetime || t == TypeJSON
	case int64:
		return t == TypeInteger || (t == TypeBool && (x == 0 || x == 1))
	case float64:
		return t == TypeNumber
	}
	return false
}

// Remap moves one row of values of kind from (a batch's schema) into the
// column order of kind to (the stored declaration, after Reconcile). A
// column of from that to lacks, or that has another type in to, is an
// ErrSchemaConflict error; columns of to that from lacks are null. The row
// is checked as Remapper.Remap checks it (ErrInvalid). For many rows, build
// a Remapper once instead.
func Remap(from, to *Kind, vals Values) (Values, error) {
	m, err := NewRemapper(from, to)
	if err != nil {
		return nil, err
	}
	return m.Remap(vals)
}
