// The rules a new kind declaration must meet beyond the ones every stored
// kind meets: the store's limits (which are SQLite's), no json key column,
// no contradictory lww columns, a retention ttl of at least a second given
// as duration text; and the normalization of a valid kind.

package recordstore

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"
)

// The limits of a kind declaration. They are the limits of the SQLite
// backend (modernc.org/sqlite, built with SQLite's defaults), checked by
// Kind.Validate wherever a kind is declared, so that a kind the store
// cannot create or write never gets as far as the store.
const (
	// MaxColumns is the most columns a kind may have: SQLite allows 2000
	// columns per table (SQLITE_MAX_COLUMN) and each kind table has two
	// of its own (the stream and the seq). It also bounds every index,
	// since an index may not name a column twice.
	MaxColumns = 1998
	// MaxKeyColumns is the most key columns a kind may have: a key lookup
	// compares every key column in one SQLite expression, and SQLite
	// limits an expression's depth to 1000 (SQLITE_MAX_EXPR_DEPTH); half
	// of that leaves room for the statement's other terms.
	MaxKeyColumns = 500
	// MaxIndexes is the most indexes a kind may declare. SQLite has no
	// such limit; the store has, since every index is written by every
	// append.
	MaxIndexes = 64
	// MinTTL is the shortest retention ttl: a shorter one is a unit
	// mistake (a bare number is not accepted, but "86400ns" is), and would
	// expire a stream or its rows before anyone reads them.
	MinTTL = time.Second
)

const maxColumnsRule = "a kind has at most 1998 columns (SQLite allows 2000 per table, and the store adds 2)"

// validateDeclared checks the rules a declaration must meet on top of
// validateStored's (which it assumes passed).
func (k *Kind) validateDeclared() error {
	if n := len(k.Columns); n > MaxColumns {
		return Invalidf("kind %s: %d columns: %s", k.Name, n, maxColumnsRule)
	}
	if n := len(k.Key); n > MaxKeyColumns {
		return Invalidf("kind %s: %d key columns: a key has at most %d columns (SQLite limits the depth of the expression that compares them)", k.Name, n, MaxKeyColumns)
	}
	for _, name := range k.Key {
		if c, _ := k.Column(name); c.Type == TypeJSON {
			return Invalidf("kind %s: key column %s is json: json values compare as their text, so equal values could make different keys; use a string column", k.Name, name)
		}
	}
	if err := k.validateLWWColumns(); err != nil {
		return err
	}
	if r := k.Retention; r != nil && time.Duration(r.TTL) < MinTTL {
		return Invalidf("kind %s: retention.ttl %s: want at least 1s", k.Name, time.Duration(r.TTL))
	}
	if n := len(k.Indexes); n > MaxIndexes {
		return Invalidf("kind %s: %d indexes: a kind has at most %d", k.Name, n, MaxIndexes)
	}
	for i, idx := range k.Indexes {
		for j, name := range idx {
			if slices.Contains(idx[:j], name) {
				return Invalidf("kind %s: index %d names column %s twice", k.Name, i+1, name)
			}
		}
	}
	return nil
}

// validateLWWColumns refuses lww columns that contradict the key or each
// other: a version (or tiebreak) that is a key column is equal in every
// row of one key, so the first row would win forever; a tiebreak that is
// the version never breaks a tie. (json columns are refused as either by
// validatePolicy.)
func (k *Kind) validateLWWColumns() error {
	if k.Policy() != ConflictLWW || k.LWW == nil {
		return nil
	}
	if slices.Contains(k.Key, k.LWW.Version) {
		return Invalidf("kind %s: lww.version %s is a key column: every row of a key has the same version, so no later row could win", k.Name, k.LWW.Version)
	}
	t := k.LWW.Tiebreak
	if t == "" {
		return nil
	}
	if t == k.LWW.Version {
		return Invalidf("kind %s: lww.tiebreak %s is also lww.version: it would never break a tie", k.Name, t)
	}
	if slices.Contains(k.Key, t) {
		return Invalidf("kind %s: lww.tiebreak %s is a key column: every row of a key has the same tiebreak, so it would never break a tie", k.Name, t)
	}
	return nil
}

// normalize sets the default conflict policy and drops every index equal
// to an earlier one (a repeated index would be a second copy of the same
// index, written by every append and never used).
func (k *Kind) normalize() {
	k.OnConflict = k.Policy()
	if len(k.Indexes) < 2 {
		return
	}
	out := k.Indexes[:0:0]
	for _, idx := range k.Indexes {
		if !slices.ContainsFunc(out, func(o []string) bool { return slices.Equal(o, idx) }) {
			out = append(out, idx)
		}
	}
	if len(out) < len(k.Indexes) {
		k.Indexes = out
	}
}

// UnmarshalJSON reads a retention rule: {"mode": ..., "ttl": "24h"}. The
// ttl must be duration text: a bare number (which Duration alone reads as
// nanoseconds, so that 86400 meant 86.4µs) is refused with ErrInvalid.
// Every build has stored ttls as text, so stored kinds read as before.
func (r *Retention) UnmarshalJSON(b []byte) error {
	var w struct {
		Mode RetentionMode   `json:"mode"`
		TTL  json.RawMessage `json:"ttl"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return err
	}
	*r = Retention{Mode: w.Mode}
	ttl := bytes.TrimSpace(w.TTL)
	if len(ttl) == 0 || string(ttl) == "null" {
		return nil
	}
	if ttl[0] != '"' {
		return Invalidf("ttl %s: want text like \"24h\"", clipBytes(ttl))
	}
	return json.Unmarshal(ttl, &r.TTL)
}

// clipBytes is Quote for raw JSON text, shown unquoted when short.
func clipBytes(b []byte) string {
	if len(b) <= MaxQuote {
		return string(b)
	}
	return Quote(string(b))
}
