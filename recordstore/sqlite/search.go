// Search indexes: an FTS5 trigram table per kind over its search columns,
// kept in step with the kind table by triggers (so every write, from any
// path, updates it in its own transaction), used by QueryRows to narrow a
// q search before the exact substring test.

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

var _ recordstore.SearchIndexer = (*Backend)(nil)

// searchSeqBits is how many low bits of an index row's rowid hold the seq;
// the stream number is above them. A row whose seq does not fit (over four
// billion rows in one stream) is left out of the index by the insert
// trigger, and the search then scans (see searchCond).
const searchSeqBits = 32

// searchTable names the search index of a kind table.
func searchTable(table string) string { return table + ":search" }

// CreateSearchIndex builds (or rebuilds) the search index of kind over
// cols, string or json columns of the kind, in one write transaction:
// on failure the store is as it was. A kind bound to its own table is
// ErrUnsupported; a read-only backend ErrReadOnly.
func (b *Backend) CreateSearchIndex(ctx context.Context, kind string, cols []string) (err error) {
	defer b.corrupted(&err)
	if b.w == nil {
		return recordstore.Errorf(recordstore.ErrReadOnly, "search index of kind %s: this backend only reads", kind)
	}
	if err := b.enter(); err != nil {
		return err
	}
	defer b.leave()
	t, err := b.table(ctx, kind)
	if err != nil {
		return err
	}
	if t.layout.bound {
		return recordstore.Errorf(recordstore.ErrUnsupported, "search index of kind %s: a kind bound to its own table cannot have one", kind)
	}
	if len(cols) == 0 {
		return recordstore.Invalidf("search index of kind %s: no columns", kind)
	}
	for _, c := range cols {
		col, ok := t.kind.Column(c)
		if !ok || col.Type != recordstore.TypeString && col.Type != recordstore.TypeJSON {
			return recordstore.Invalidf("search index of kind %s: %s is not a string or json column", kind, recordstore.Quote(c))
		}
	}
	return b.writeTx(ctx, func(tx *sql.Tx, _ time.Time) error {
		for _, stmt := range searchDDL(t.name, cols) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("search index of kind %s: %w", kind, err)
			}
		}
		return nil
	})
}

// searchDDL drops the kind table's search index and its triggers, then
// creates them over cols and fills the index.
func searchDDL(table string, cols []string) []string {
	fts, q := quote(searchTable(table)), quote(table)
	ins, del := quote(table+":search_ins"), quote(table+":search_del")
	rowid := func(row string) string {
		return "(" + row + "." + colStream + " << " + fmt.Sprint(searchSeqBits) + ") | " + row + "." + colSeq
	}
	newVals := make([]string, len(cols))
	for i, c := range cols {
		newVals[i] = "new." + quote(c)
	}
	fits := "new." + colSeq + " < (1 << " + fmt.Sprint(searchSeqBits) + ")"
	return []string{
		"DROP TRIGGER IF EXISTS " + ins,
		"DROP TRIGGER IF EXISTS " + del,
		"DROP TABLE IF EXISTS " + fts,
		"CREATE VIRTUAL TABLE " + fts + " USING fts5(" + quoteList(cols) + ", tokenize = 'trigram case_sensitive 0')",
		"INSERT INTO " + fts + " (rowid, " + quoteList(cols) + ") SELECT " + rowid(q) + ", " + quoteList(cols) + " FROM " + q +
			" WHERE " + colSeq + " < (1 << " + fmt.Sprint(searchSeqBits) + ")",
		"CREATE TRIGGER " + ins + " AFTER INSERT ON " + q + " WHEN " + fits + " BEGIN INSERT INTO " + fts +
			" (rowid, " + quoteList(cols) + ") VALUES (" + rowid("new") + ", " + strings.Join(newVals, ", ") + "); END",
		"CREATE TRIGGER " + del + " AFTER DELETE ON " + q + " BEGIN DELETE FROM " + fts + " WHERE rowid = " + rowid("old") + "; END",
	}
}

// searchIndexCols returns the columns of the kind table's search index
// (nil when it has none), read in the query's transaction.
func searchIndexCols(ctx context.Context, tx *sql.Tx, table string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, "SELECT name FROM pragma_table_info(?1)", searchTable(table))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// searchCond is the condition narrowing a q search by the kind's search
// index, or "" when the index cannot serve it: no index, other columns
// than the query's, a needle under three bytes (a trigram needs three), or
// a stream with a seq past the index's range (high). The exact substring
// test stays in the query: the index only narrows, to the seqs lo < seq ≤
// hi (hi < 0: no upper bound) that the page reads, so that each page of a
// paged search reads the index from its cursor on.
func (t *table) searchCond(ctx context.Context, tx *sql.Tx, w *whereBuilder, q *recordstore.RowQuery, streamNo, high, lo, hi int64) (string, error) {
	if t.layout.bound || len(q.Text) < 3 || high >= 1<<searchSeqBits {
		return "", nil
	}
	cols, err := searchIndexCols(ctx, tx, t.name)
	if err != nil || len(cols) == 0 {
		return "", err
	}
	for _, c := range q.Search {
		if !slices.Contains(cols, c) {
			return "", nil
		}
	}
	phrase := `"` + strings.ReplaceAll(q.Text, `"`, `""`) + `"`
	base := streamNo << searchSeqBits
	lo = min(lo, 1<<searchSeqBits)
	end := base + 1<<searchSeqBits - 1
	if hi >= 0 {
		end = base + min(hi, 1<<searchSeqBits-1)
	}
	return colSeq + " IN (SELECT rowid - " + w.arg(base) + " FROM " + quote(searchTable(t.name)) +
		" WHERE " + quote(searchTable(t.name)) + " MATCH " + w.arg(phrase) +
		" AND rowid > " + w.arg(base+lo) + " AND rowid <= " + w.arg(end) + ")", nil
}
