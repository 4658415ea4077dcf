// Bound kinds: creating a bound kind's table from the caller's DDL,
// checking the kind against the table SQLite reports, choosing the column
// that holds the seq, and keeping the table to one stream.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fb46ecde/records/recordstore"
)

// querier is what inspecting a table needs: a transaction or the pool.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// bindTableTx makes k's bound table ready inside tx: when the table is
// missing it runs k's DDL verbatim, in order (so sqlite_master holds the
// caller's text); when it exists (created by another implementation, or
// by an earlier declaration) it runs nothing. Then it checks the kind
// against the table (inspectBound). A table that is already another
// kind's, or is not a table, is refused with ErrInvalid. On error the
// caller rolls tx back: nothing is created.
func bindTableTx(ctx context.Context, tx *sql.Tx, k *recordstore.Kind) error {
	bt := k.Table
	var other string
	err := tx.QueryRowContext(ctx, `SELECT name FROM record_kinds WHERE lower(table_name) = lower(?1) AND name <> ?2`,
		bt.Name, k.Name).Scan(&other)
	switch {
	case err == nil:
		return recordstore.Invalidf("kind %s: table %s is the table of kind %s", k.Name, bt.Name, other)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("read catalog: %w", err)
	}
	typ, err := objectType(ctx, tx, bt.Name)
	if err != nil {
		return err
	}
	switch typ {
	case "table":
	case "":
		for i, stmt := range bt.DDL {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				if isIOError(err) || isDamaged(err) {
					return fmt.Errorf("create table %s: %w", bt.Name, err)
				}
				return recordstore.Invalidf("kind %s: table %s: DDL statement %d: %w", k.Name, bt.Name, i+1, err)
			}
		}
		if typ, err = objectType(ctx, tx, bt.Name); err != nil {
			return err
		}
		if typ != "table" {
			return recordstore.Invalidf("kind %s: its DDL did not create table %s", k.Name, bt.Name)
		}
	default:
		return recordstore.Invalidf("kind %s: %s is a %s, not a table", k.Name, bt.Name, typ)
	}
	_, err = inspectBound(ctx, tx, k)
	return err
}

// objectType returns the type of the schema object named name ("table",
// "view", "index", ...; "" when there is none), compared as SQLite
// compares names.
func objectType(ctx context.Context, tx *sql.Tx, name string) (string, error) {
	var typ string
	err := tx.QueryRowContext(ctx, `SELECT type FROM sqlite_master WHERE name = ?1 COLLATE NOCASE`, name).Scan(&typ)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read schema of %s: %w", name, err)
	}
	return typ, nil
}

// tableColumn is one row of PRAGMA table_info.
type tableColumn struct {
	name, typ  string
	notNull    bool
	hasDefault bool
	dflt       string // the DEFAULT expression's text
	pk         int
}

// readColumns returns the table's columns (PRAGMA table_info).
func readColumns(ctx context.Context, q querier, table string) ([]tableColumn, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value IS NOT NULL, coalesce(dflt_value, ''), pk FROM pragma_table_info(?1)`, table)
	if err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", table, err)
	}
	defer rows.Close()
	var out []tableColumn
	for rows.Next() {
		var c tableColumn
		if err := rows.Scan(&c.name, &c.typ, &c.notNull, &c.hasDefault, &c.dflt, &c.pk); err != nil {
			return nil, fmt.Errorf("read columns of %s: %w", table, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", table, err)
	}
	return out, nil
}

// uniqueIndexes returns the column lists (lower case) of the table's
// UNIQUE, non-partial indexes on plain columns (PRAGMA index_list and
// index_info): the ones an ON CONFLICT target may name.
func uniqueIndexes(ctx context.Context, q querier, table string) ([][]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT l.name, i.name FROM pragma_index_list(?1) AS l, pragma_index_info(l.name) AS i
		WHERE l."unique" AND NOT l.partial ORDER BY l.name, i.seqno`, table)
	if err != nil {
		return nil, fmt.Errorf("read indexes of %s: %w", table, err)
	}
	defer rows.Close()
	var (
		out  [][]string
		last string
		bad  = map[string]bool{}
	)
	for rows.Next() {
		var idx string
		var col sql.NullString
		if err := rows.Scan(&idx, &col); err != nil {
			return nil, fmt.Errorf("read indexes of %s: %w", table, err)
		}
		if idx != last || len(out) == 0 {
			out, last = append(out, nil), idx
		}
		if !col.Valid { // an expression: not a key the kind can name
			bad[idx] = true
		}
		out[len(out)-1] = append(out[len(out)-1], strings.ToLower(col.String))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read indexes of %s: %w", table, err)
	}
	if len(bad) > 0 {
		out = slices.DeleteFunc(out, func(cols []string) bool { return slices.Contains(cols, "") })
	}
	return out, nil
}

// withoutRowid reports whether the table is a WITHOUT ROWID table.
func withoutRowid(ctx context.Context, q querier, table string) (bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT wr FROM pragma_table_list(?1)`, table)
	if err != nil {
		return false, fmt.Errorf("read table list: %w", err)
	}
	defer rows.Close()
	wr := false
	for rows.Next() {
		if err := rows.Scan(&wr); err != nil {
			return false, fmt.Errorf("read table list: %w", err)
		}
	}
	return wr, rows.Err()
}

// affinity is SQLite's column affinity of a declared type (the rules of
// "Determination Of Column Affinity").
func affinity(declared string) string {
	t := strings.ToUpper(declared)
	switch {
	case strings.Contains(t, "INT"):
		return "INTEGER"
	case strings.Contains(t, "CHAR"), strings.Contains(t, "CLOB"), strings.Contains(t, "TEXT"):
		return "TEXT"
	case t == "", strings.Contains(t, "BLOB"):
		return "BLOB"
	case strings.Contains(t, "REAL"), strings.Contains(t, "FLOA"), strings.Contains(t, "DOUB"):
		return "REAL"
	}
	return "NUMERIC"
}

// inspectBound checks bound kind k against its table as SQLite reports
// it, and returns where the table keeps the seq. Every kind column must
// be a table column whose affinity is the column type's (integer and
// bool: INTEGER, number: REAL, string, datetime and json: TEXT); every NOT
// NULL column without a default, other than the INTEGER PRIMARY KEY, must
// be a kind column; a key must be the table's PRIMARY KEY or the columns
// of a UNIQUE index. The seq is the INTEGER PRIMARY KEY column when the
// table has one that is not a kind column (the store writes the seqs it
// assigns into it); it is the rowid when the table has none (written the
// same way); when the INTEGER PRIMARY KEY is a kind column, the seq of a
// row is that column's value, which the caller supplies, and the store
// writes no seq. A kind column that is NOT NULL with a DEFAULT in the
// table gets its default when a row leaves it null (as when an INSERT
// leaves the column out). A WITHOUT ROWID table is refused. Errors are ErrInvalid,
// naming the column and the table.
func inspectBound(ctx context.Context, q querier, k *recordstore.Kind) (tableLayout, error) {
	table := k.Table.Name
	cols, err := readColumns(ctx, q, table)
	if err != nil {
		return tableLayout{}, err
	}
	if len(cols) == 0 {
		return tableLayout{}, recordstore.Invalidf("kind %s: table %s does not exist", k.Name, table)
	}
	wr, err := withoutRowid(ctx, q, table)
	if err != nil {
		return tableLayout{}, err
	}
	if wr {
		return tableLayout{}, recordstore.Invalidf("kind %s: table %s is WITHOUT ROWID: a bound table keeps the seq in its rowid", k.Name, table)
	}
	byName := map[string]tableColumn{}
	var pk []string
	for _, c := range cols {
		byName[strings.ToLower(c.name)] = c
		if c.pk > 0 {
			pk = append(pk, strings.ToLower(c.name))
		}
	}
	ipk := ""
	if len(pk) == 1 && strings.EqualFold(byName[pk[0]].typ, "INTEGER") {
		ipk = pk[0]
	}
	if err := checkBoundColumns(k, cols, byName, ipk); err != nil {
		return tableLayout{}, err
	}
	if err := checkBoundKey(ctx, q, k, pk); err != nil {
		return tableLayout{}, err
	}
	lay, err := boundLayout(k, byName, ipk)
	if err != nil {
		return lay, err
	}
	for i, c := range k.Columns {
		if tc := byName[strings.ToLower(c.Name)]; tc.notNull && tc.hasDefault {
			if lay.defaults == nil {
				lay.defaults = make([]string, len(k.Columns))
			}
			lay.defaults[i] = tc.dflt
		}
	}
	return lay, nil
}

// checkBoundColumns holds the kind's columns and the table's NOT NULL
// columns to the rules of inspectBound.
func checkBoundColumns(k *recordstore.Kind, cols []tableColumn, byName map[string]tableColumn, ipk string) error {
	table := k.Table.Name
	for _, c := range k.Columns {
		tc, ok := byName[strings.ToLower(c.Name)]
		if !ok {
			return recordstore.Invalidf("kind %s: column %s is not a column of table %s", k.Name, c.Name, table)
		}
		if want := sqlType(c.Type); affinity(tc.typ) != want {
			return recordstore.Invalidf("kind %s: column %s is %s in table %s: a %s column needs %s affinity",
				k.Name, c.Name, recordstore.Quote(tc.typ), table, c.Type, want)
		}
	}
	for _, tc := range cols {
		if tc.notNull && !tc.hasDefault && strings.ToLower(tc.name) != ipk &&
			!slices.ContainsFunc(k.Columns, func(c recordstore.Column) bool { return strings.EqualFold(c.Name, tc.name) }) {
			return recordstore.Invalidf("kind %s: column %s of table %s is NOT NULL without a default, and not a column of the kind",
				k.Name, tc.name, table)
		}
	}
	return nil
}

// checkBoundKey requires a kind's key to be the table's PRIMARY KEY or
// the columns of one of its UNIQUE indexes (in any order), so that
// INSERT ... ON CONFLICT (key) finds the stored row.
func checkBoundKey(ctx context.Context, q querier, k *recordstore.Kind, pk []string) error {
	if len(k.Key) == 0 {
		return nil
	}
	key := make([]string, len(k.Key))
	for i, n := range k.Key {
		key[i] = strings.ToLower(n)
	}
	slices.Sort(key)
	same := func(cols []string) bool {
		c := slices.Clone(cols)
		slices.Sort(c)
		return slices.Equal(c, key)
	}
	if same(pk) {
		return nil
	}
	uniq, err := uniqueIndexes(ctx, q, k.Table.Name)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(uniq, same) {
		return nil
	}
	return recordstore.Invalidf("kind %s: key (%s) is neither the PRIMARY KEY of table %s nor the columns of a UNIQUE index",
		k.Name, strings.Join(k.Key, ", "), k.Table.Name)
}

// boundLayout chooses the seq column (see inspectBound).
func boundLayout(k *recordstore.Kind, byName map[string]tableColumn, ipk string) (tableLayout, error) {
	switch {
	case ipk != "" && slices.ContainsFunc(k.Columns, func(c recordstore.Column) bool { return strings.EqualFold(c.Name, ipk) }):
		return tableLayout{bound: true, seq: quote(byName[ipk].name)}, nil
	case ipk != "":
		return tableLayout{bound: true, seq: quote(byName[ipk].name), seqStored: true}, nil
	}
	for _, alias := range []string{"rowid", "_rowid_", "oid"} {
		if _, shadowed := byName[alias]; !shadowed {
			return tableLayout{bound: true, seq: alias, seqStored: true}, nil
		}
	}
	return tableLayout{}, recordstore.Invalidf("kind %s: table %s has columns named rowid, _rowid_ and oid: its rowid cannot be named", k.Name, k.Table.Name)
}

// bindStreamTx prepares a fresh generation s of a bound kind's stream:
// it refuses (ErrInvalid) when another live stream holds the table (a
// bound table holds one stream), and starts s's counters from the rows
// the table holds already (a table created or filled by another
// implementation, or the rows of a stream since deleted that the table
// kept), so that the next seq follows the highest stored one.
func (b *Backend) bindStreamTx(ctx context.Context, tx *sql.Tx, t *table, s *streamRow) error {
	var other string
	err := tx.QueryRowContext(ctx, `SELECT id FROM record_streams WHERE kind = ?1 AND id <> ?2 AND deleted = 0 LIMIT 1`,
		t.kind.Name, s.id).Scan(&other)
	switch {
	case err == nil:
		return recordstore.Invalidf("kind %s is bound to table %s, which holds stream %s: append to %s, not %s",
			t.kind.Name, t.name, other, other, s.id)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("read streams of kind %s: %w", t.kind.Name, err)
	}
	var low, high sql.NullInt64
	var n int64
	q := "SELECT min(" + t.layout.seq + "), max(" + t.layout.seq + "), count(*) FROM " + quote(t.name)
	if err := tx.QueryRowContext(ctx, q).Scan(&low, &high, &n); err != nil {
		return fmt.Errorf("read rows of table %s: %w", t.name, err)
	}
	top := high.Int64
	if t.layout.seqStored {
		used, err := autoincrementSeq(ctx, tx, t.name)
		if err != nil {
			return err
		}
		top = max(top, used)
	}
	s.high, s.low, s.total = top, top+1, n
	if n > 0 {
		s.low = low.Int64
	}
	return nil
}

// autoincrementSeq returns the largest rowid an AUTOINCREMENT table has
// ever used (sqlite_sequence), 0 for any other table: a bound stream
// starts after it, so that its seqs never reuse an id.
func autoincrementSeq(ctx context.Context, tx *sql.Tx, table string) (int64, error) {
	typ, err := objectType(ctx, tx, "sqlite_sequence")
	if err != nil || typ != "table" {
		return 0, err
	}
	var seq int64
	err = tx.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = ?1 COLLATE NOCASE`, table).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read sqlite_sequence: %w", err)
	}
	return seq, nil
}
