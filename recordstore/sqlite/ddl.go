// SQL text for kind tables: identifier quoting, column types, the table and
// index DDL, and the statements each kind table is used through.

package sqlite

import (
	"strconv"
	"strings"

	"github.com/fb46ecde/records/recordstore"
)

// The bookkeeping columns of every kind table: the stream's number
// (record_streams.no) and the row's seq. Kind column names may not start
// with "_seq" (recordstore.Kind.Validate), so these never collide.
const (
	colStream = `"_seq_stream"`
	colSeq    = `"_seq"`
)

// quote returns id as a quoted SQL identifier.
func quote(id string) string {
	return `"` + strings.ReplaceAll(id, `"`, `""`) + `"`
}

// sqlType is the declared SQLite type of a column type. Datetimes are TEXT
// (not DATETIME) so that the driver hands them back as the stored text.
func sqlType(t recordstore.ColumnType) string {
	switch t {
	case recordstore.TypeInteger, recordstore.TypeBool:
		return "INTEGER"
	case recordstore.TypeNumber:
		return "REAL"
	}
	return "TEXT"
}

// reservedTable reports whether a kind name would collide with SQLite's
// own tables or the bookkeeping tables (compared case-insensitively, as
// SQLite compares table names).
func reservedTable(name string) bool {
	low := strings.ToLower(name)
	return strings.HasPrefix(low, "record_") || strings.HasPrefix(low, "sqlite_")
}

// CheckKindName refuses, with recordstore.ErrInvalid, a kind name this
// backend reserves for its own tables (the prefixes record_ and sqlite_,
// in any case), as DeclareKind does; for a process that declares kinds
// without opening the store (a submitonly.Backend).
func CheckKindName(name string) error {
	if reservedTable(name) {
		return recordstore.Invalidf("kind name %s: the prefixes record_ and sqlite_ are reserved", recordstore.Quote(name))
	}
	return nil
}

// keyIndexName and indexName name a kind table's indexes. Kind names never
// contain ':', so these cannot collide with a kind table.
func keyIndexName(table string) string { return quote(table + ":key") }

func indexName(table string, i int) string {
	return quote(table + ":ix" + strconv.Itoa(i+1))
}

// createTableDDL returns the statements creating the table of kind k: the
// rows keyed by (stream, seq), a UNIQUE index on (stream, key...) when the
// kind has a key, and the kind's declared indexes.
func createTableDDL(k *recordstore.Kind, table string) []string {
	var sb strings.Builder
	sb.WriteString("CREATE TABLE " + quote(table) + " (\n\t" + colStream + " INTEGER NOT NULL,\n\t" + colSeq + " INTEGER NOT NULL")
	for _, c := range k.Columns {
		sb.WriteString(",\n\t" + quote(c.Name) + " " + sqlType(c.Type))
	}
	sb.WriteString(",\n\tPRIMARY KEY (" + colStream + ", " + colSeq + ")\n) WITHOUT ROWID")
	out := []string{sb.String()}
	if len(k.Key) > 0 {
		out = append(out, "CREATE UNIQUE INDEX "+keyIndexName(table)+" ON "+quote(table)+
			" ("+colStream+", "+quoteList(k.Key)+")")
	}
	for i, idx := range k.Indexes {
		out = append(out, "CREATE INDEX "+indexName(table, i)+" ON "+quote(table)+" ("+quoteList(idx)+")")
	}
	return out
}

// addColumnDDL returns the statement adding column c to table.
func addColumnDDL(table string, c recordstore.Column) string {
	return "ALTER TABLE " + quote(table) + " ADD COLUMN " + quote(c.Name) + " " + sqlType(c.Type)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}

func columnNames(k *recordstore.Kind) []string {
	out := make([]string, len(k.Columns))
	for i, c := range k.Columns {
		out[i] = c.Name
	}
	return out
}

// tableSQL is the text of every statement a kind table is used through.
type tableSQL struct {
	insert, deleteKey, deleteLoser, minSeq, deleteRange, scan, purge string
}

// tableLayout says where a kind table keeps the stream and the seq: an
// engine table has both columns; a bound table (see bound.go) holds one
// stream and keeps the seq in its INTEGER PRIMARY KEY column, or in the
// rowid. Every statement binds the stream number as ?1 all the same (a
// bound table's statements leave it unused), so callers bind the same
// arguments either way.
type tableLayout struct {
	bound     bool
	seq       string // the quoted column (or rowid) holding the seq
	seqStored bool   // an INSERT writes the assigned seq into seq
	// defaults holds, by kind column, the DEFAULT expression a null value
	// is replaced with ("" for none; nil when no column has one).
	defaults []string
}

// param wraps the parameter of kind column i in its default, if any.
func (l tableLayout) param(i int, p string) string {
	if l.defaults == nil || l.defaults[i] == "" {
		return p
	}
	return "coalesce(" + p + ", (" + l.defaults[i] + "))"
}

// engineLayout is the layout of the tables the store creates.
var engineLayout = tableLayout{seq: colSeq, seqStored: true}

// streamCond is the condition selecting the stream ?1's rows.
func (l tableLayout) streamCond() string {
	if l.bound {
		return "?1 IS NOT NULL"
	}
	return colStream + " = ?1"
}

func buildTableSQL(k *recordstore.Kind, table string, l tableLayout) tableSQL {
	q := quote(table)
	var s tableSQL
	s.insert = insertSQL(k, table, l)
	if len(k.Key) > 0 {
		target := colStream + ", " + quoteList(k.Key)
		if l.bound {
			target = quoteList(k.Key)
		}
		s.insert += " ON CONFLICT (" + target + ") DO NOTHING"
		s.deleteKey = "DELETE FROM " + q + " WHERE " + l.streamCond()
		for i, name := range k.Key {
			s.deleteKey += " AND " + quote(name) + " = ?" + strconv.Itoa(i+2)
		}
		if k.Policy() == recordstore.ConflictLWW {
			s.deleteLoser = s.deleteKey + " AND " + lwwLoses(k, len(k.Key)+2)
		}
	}
	s.minSeq = "SELECT min(" + l.seq + ") FROM " + q + " WHERE " + l.streamCond()
	s.deleteRange = "DELETE FROM " + q + " WHERE " + l.streamCond() + " AND " + l.seq + " BETWEEN ?2 AND ?3"
	s.scan = "SELECT " + l.seq + ", " + quoteList(columnNames(k)) + " FROM " + q +
		" WHERE " + l.streamCond() + " AND " + l.seq + " > ?2 ORDER BY " + l.seq + " LIMIT ?3"
	s.purge = "DELETE FROM " + q + " WHERE " + l.streamCond()
	return s
}

// insertInto begins every INSERT of rows into a kind table. OR FAIL
// instead of the default ABORT spares SQLite a statement journal: with
// ABORT, every INSERT that writes several rows or indexes copies the pages
// it touches (the table's last leaf, each time) into a sub-journal so that
// it can undo itself alone. Nothing here needs that: a single-row INSERT
// checks every constraint before it writes, and any error of a multi-row
// one either rolls the entry's savepoint back (applyEntryTx) or the whole
// transaction, and an I/O error or a full disk in the middle of such a
// statement makes SQLite roll the transaction back by itself. The kind
// tables' only constraints are the primary key (stream, seq) and the key
// index, which ON CONFLICT handles.
const insertInto = "INSERT OR FAIL INTO "

// insertSQL returns the single-row INSERT into table, with parameters
// (stream, seq, columns...). An engine table's are anonymous: the driver
// binds those without parsing parameter names. A bound table's are
// numbered, leaving out the stream (and the seq when it is not stored).
func insertSQL(k *recordstore.Kind, table string, l tableLayout) string {
	if !l.bound {
		return insertInto + quote(table) + " (" + colStream + ", " + colSeq + ", " + quoteList(columnNames(k)) + ") VALUES (" +
			strings.TrimSuffix(strings.Repeat("?, ", len(k.Columns)+2), ", ") + ")"
	}
	cols, params := quoteList(columnNames(k)), make([]string, 0, len(k.Columns)+1)
	if l.seqStored {
		cols = l.seq + ", " + cols
		params = append(params, "?2")
	}
	for i := range k.Columns {
		params = append(params, l.param(i, "?"+strconv.Itoa(i+3)))
	}
	return insertInto + quote(table) + " (" + cols + ") VALUES (" + strings.Join(params, ", ") + ")"
}

// insertManySQL returns an INSERT of rows rows into table. The stream
// number (?1) and the first row's seq (?2) are bound once; row r gets seq
// ?2 + r; the columns of every row follow as anonymous parameters (which
// SQLite numbers from 3 on). Binding two parameters fewer per row saves a
// sixth of the binding work of a ten-column kind. A bound table has no
// stream column (?1 is left unused) and needs a stored seq (see
// batchSizes).
func insertManySQL(k *recordstore.Kind, table string, rows int, l tableLayout) string {
	var sb strings.Builder
	if l.bound {
		sb.WriteString(insertInto + quote(table) + " (" + l.seq + ", " + quoteList(columnNames(k)) + ") VALUES ")
	} else {
		sb.WriteString(insertInto + quote(table) + " (" + colStream + ", " + colSeq + ", " + quoteList(columnNames(k)) + ") VALUES ")
	}
	cols := strings.Repeat(", ?", len(k.Columns))
	if l.defaults != nil {
		cols = ""
		for i := range k.Columns {
			cols += ", " + l.param(i, "?")
		}
	}
	for i := 0; i < rows; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		if l.bound {
			sb.WriteString("(?2 + " + strconv.Itoa(i) + cols + ")")
		} else {
			sb.WriteString("(?1, ?2 + " + strconv.Itoa(i) + cols + ")")
		}
	}
	return sb.String()
}

// maxParams is SQLite's default limit on parameters per statement
// (SQLITE_MAX_VARIABLE_NUMBER since 3.32).
const maxParams = 32766

// batchSizes returns the row counts of the multi-row INSERTs a kind
// without a key is written through, largest first; single rows use the
// plain insert. Each statement executed costs a fixed overhead in the
// driver and in SQLite (binding setup, opening the table cursor), so
// larger appends go through as few statements as possible. A bound table
// that does not store the seq has none: its multi-row INSERT could not
// number its anonymous parameters from 3.
func batchSizes(k *recordstore.Kind, l tableLayout) []int {
	if !l.seqStored {
		return nil
	}
	big := min(64, (maxParams-2)/len(k.Columns))
	var out []int
	for _, n := range []int{big, 16, 4} {
		if n > 1 && (len(out) == 0 || n < out[len(out)-1]) {
			out = append(out, n)
		}
	}
	return out
}

// lwwLoses is the condition under which the stored row loses to the
// incoming one (version in parameter p, tiebreak in p+1): the incoming
// version is strictly greater, or equal with a smaller tiebreak. NULL
// sorts before every value, as in ORDER BY.
func lwwLoses(k *recordstore.Kind, p int) string {
	return lwwLosesTo(k, "?"+strconv.Itoa(p), "?"+strconv.Itoa(p+1))
}

// lwwLosesTo is lwwLoses with the incoming version and tiebreak in the
// parameters pv and pt (pt is unused when the kind has no tiebreak).
func lwwLosesTo(k *recordstore.Kind, pv, pt string) string {
	v := quote(k.LWW.Version)
	cond := "((" + v + " IS NULL AND " + pv + " IS NOT NULL) OR " + v + " < " + pv
	if k.LWW.Tiebreak != "" {
		t := quote(k.LWW.Tiebreak)
		cond += " OR (" + v + " IS " + pv + " AND ((" + pt + " IS NULL AND " + t + " IS NOT NULL) OR " + pt + " < " + t + "))"
	}
	return cond + ")"
}

// upsertLWWSQL returns the single-statement lww write of a bound table
// that stores the seq (see lwwupsert.go), or "" for any other table: the
// bound insert (parameters ?2 seq, ?3... columns), and on a conflict on
// the key an UPDATE of the stored row to the incoming one, seq included,
// when the stored row loses (lwwLosesTo on the incoming version and
// tiebreak parameters, as deleteLoser compares them). The UPDATE writes
// what the INSERT would have stored (excluded.*, defaults applied).
func upsertLWWSQL(k *recordstore.Kind, table string, l tableLayout) string {
	if !l.bound || !l.seqStored || len(k.Key) == 0 || k.Policy() != recordstore.ConflictLWW || k.LWW == nil {
		return ""
	}
	param := func(col string) string { return "?" + strconv.Itoa(k.ColumnIndex(col)+3) }
	pt := ""
	if k.LWW.Tiebreak != "" {
		pt = param(k.LWW.Tiebreak)
	}
	set := make([]string, 0, len(k.Columns)+1)
	set = append(set, l.seq+" = ?2")
	for _, c := range k.Columns {
		set = append(set, quote(c.Name)+" = excluded."+quote(c.Name))
	}
	return insertSQL(k, table, l) + " ON CONFLICT (" + quoteList(k.Key) + ") DO UPDATE SET " +
		strings.Join(set, ", ") + " WHERE " + lwwLosesTo(k, param(k.LWW.Version), pt)
}
