// The per-kind table cache: each declared kind with its table name and the
// statements it is written and read through, prepared once.

package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/fb46ecde/records/recordstore"
)

// table is one kind bound to its SQLite table. It is immutable once built;
// a kind that gains columns gets a new table value.
type table struct {
	kind   recordstore.Kind
	name   string // SQLite table name (unquoted)
	layout tableLayout
	purge  string // deletes every row of a stream (?1)
	keyIdx []int  // positions of the key columns in kind.Columns
	verIdx int    // lww version column position, or -1
	tieIdx int    // lww tiebreak column position, or -1

	// Statements on the writer connection (used inside write transactions
	// through tx.StmtContext, which reuses the connection's preparation).
	insert, deleteKey, deleteLoser, minSeq, deleteRange *sql.Stmt
	// batch are multi-row INSERTs, largest first (kinds without a key).
	batch []batchInsert
	// upsert is the single-statement lww write of a bound table that
	// stores the seq (nil for any other table, see lwwupsert.go), and
	// upsertAt the schema it was last found usable or unusable in.
	upsert   *sql.Stmt
	upsertAt *upsertCheck
	// Statements on the reader pool; scanSQL is scan's text, which a
	// large Scan prepares on the driver (see Backend.scanDirect).
	scan    *sql.Stmt
	scanSQL string
}

// batchInsert is an INSERT of a fixed number of rows.
type batchInsert struct {
	rows int
	sql  string // st's text, which insertBulk prepares on the driver
	st   *sql.Stmt
}

// newTable binds kind k to its table and prepares its statements: the
// writer's when w is not nil (a read-only backend has none), the reader
// pool's always. It must not be called while the caller holds a write
// transaction: preparing on the writer needs its only connection.
func newTable(ctx context.Context, w, r *sql.DB, k recordstore.Kind, name string) (*table, error) {
	lay := engineLayout
	if k.Table != nil {
		var err error
		if lay, err = inspectBound(ctx, r, &k); err != nil {
			return nil, err
		}
	}
	t := &table{kind: k, name: name, layout: lay, keyIdx: k.KeyIndexes(), verIdx: -1, tieIdx: -1}
	if k.LWW != nil {
		t.verIdx = k.ColumnIndex(k.LWW.Version)
		if k.LWW.Tiebreak != "" {
			t.tieIdx = k.ColumnIndex(k.LWW.Tiebreak)
		}
	}
	s := buildTableSQL(&t.kind, name, lay)
	t.purge = s.purge
	if w != nil {
		t.prepareUpsert(ctx, w)
	}
	prep := []struct {
		db  *sql.DB
		sql string
		dst **sql.Stmt
	}{
		{w, s.insert, &t.insert},
		{w, s.deleteKey, &t.deleteKey},
		{w, s.deleteLoser, &t.deleteLoser},
		{w, s.minSeq, &t.minSeq},
		{w, s.deleteRange, &t.deleteRange},
		{r, s.scan, &t.scan},
	}
	t.scanSQL = s.scan
	if len(t.keyIdx) == 0 {
		sizes := batchSizes(&t.kind, lay)
		t.batch = make([]batchInsert, len(sizes))
		for i, n := range sizes {
			t.batch[i].rows = n
			t.batch[i].sql = insertManySQL(&t.kind, name, n, lay)
			prep = append(prep, struct {
				db  *sql.DB
				sql string
				dst **sql.Stmt
			}{w, t.batch[i].sql, &t.batch[i].st})
		}
	}
	for _, p := range prep {
		if p.sql == "" || p.db == nil {
			continue
		}
		st, err := p.db.PrepareContext(ctx, p.sql)
		if err != nil {
			_ = t.close()
			return nil, fmt.Errorf("prepare statements of kind %s: %w", k.Name, err)
		}
		*p.dst = st
	}
	return t, nil
}

func (t *table) close() error {
	var errs []error
	all := []*sql.Stmt{t.insert, t.deleteKey, t.deleteLoser, t.minSeq, t.deleteRange, t.scan, t.upsert}
	for _, b := range t.batch {
		all = append(all, b.st)
	}
	for _, st := range all {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// tableCache holds the table of every kind this process knows.
type tableCache struct {
	mu      sync.Mutex
	m       map[string]*table // by exact kind name; guarded by mu
	retired []*table          // replaced tables, closed at Close (a call may still use one); guarded by mu
}

func (c *tableCache) init() { c.m = map[string]*table{} }

func (c *tableCache) get(name string) *table {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[name]
}

// put installs t, retiring the table it replaces. When keepExisting is set
// and a table is already cached, t is closed and the cached one returned.
func (c *tableCache) put(t *table, keepExisting bool) *table {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[t.kind.Name]; ok {
		if keepExisting {
			_ = t.close()
			return old
		}
		c.retired = append(c.retired, old)
	}
	c.m[t.kind.Name] = t
	return t
}

// drop forgets a kind so that its next use reloads it from the catalog.
func (c *tableCache) drop(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[name]; ok {
		c.retired = append(c.retired, old)
		delete(c.m, name)
	}
}

// rowRetention returns the tables of kinds with row retention.
func (c *tableCache) rowRetention() []*table {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*table
	for _, t := range c.m {
		if r := t.kind.Retention; r != nil && r.Mode == recordstore.RetainRows {
			out = append(out, t)
		}
	}
	return out
}

func (c *tableCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, t := range c.m {
		errs = append(errs, t.close())
	}
	for _, t := range c.retired {
		errs = append(errs, t.close())
	}
	c.m, c.retired = map[string]*table{}, nil
	return errors.Join(errs...)
}

// table returns the table of a declared kind, loading it from the catalog
// when this process has not seen it yet (ErrNotFound when undeclared). The
// caller must not hold a write transaction.
func (b *Backend) table(ctx context.Context, kind string) (*table, error) {
	if t := b.tables.get(kind); t != nil {
		return t, nil
	}
	t, err := b.loadTable(ctx, kind)
	if err != nil {
		return nil, err
	}
	return b.tables.put(t, true), nil
}

// reloadTable reads a kind from the catalog again and, when its columns
// changed (or it was not cached), caches its new table: a read-only backend
// calls it when another process may have declared the kind or added
// columns to it.
func (b *Backend) reloadTable(ctx context.Context, kind string) (*table, error) {
	k, name, err := b.catalogKind(ctx, kind)
	if err != nil {
		return nil, err
	}
	if t := b.tables.get(kind); t != nil && len(t.kind.Columns) == len(k.Columns) {
		return t, nil
	}
	t, err := newTable(ctx, b.w, b.r, k, name)
	if err != nil {
		return nil, err
	}
	return b.tables.put(t, false), nil
}

// loadTable reads a kind from the catalog and prepares its table.
func (b *Backend) loadTable(ctx context.Context, kind string) (*table, error) {
	k, name, err := b.catalogKind(ctx, kind)
	if err != nil {
		return nil, err
	}
	return newTable(ctx, b.w, b.r, k, name)
}

// catalogKind reads a kind's declaration and table name from the catalog
// (ErrNotFound when undeclared).
func (b *Backend) catalogKind(ctx context.Context, kind string) (recordstore.Kind, string, error) {
	var name, schema string
	err := b.r.QueryRowContext(ctx, `SELECT table_name, schema FROM record_kinds WHERE name = ?`, kind).Scan(&name, &schema)
	if errors.Is(err, sql.ErrNoRows) {
		return recordstore.Kind{}, "", notFound("kind %s is not declared", kind)
	}
	if err != nil {
		return recordstore.Kind{}, "", fmt.Errorf("read kind %s: %w", kind, err)
	}
	k, err := parseSchema(kind, schema)
	return k, name, err
}

// parseSchema reads a kind's stored declaration. It is held to the rules
// of recordstore.Kind.ValidateStored, not Validate: a kind an earlier build
// declared (say, with a json key column) still loads.
func parseSchema(name, schema string) (recordstore.Kind, error) {
	var k recordstore.Kind
	if err := json.Unmarshal([]byte(schema), &k); err != nil {
		return k, corrupt("kind %s: stored schema: %v", name, err)
	}
	if err := k.ValidateStored(); err != nil {
		return k, corrupt("kind %s: stored schema: %v", name, err)
	}
	return k, nil
}

// loadKinds caches every kind of the catalog, replacing what is cached;
// Open and Promote call it. On error the cache is unchanged.
func (b *Backend) loadKinds(ctx context.Context) error {
	tables, err := b.readTables(ctx)
	if err != nil {
		return err
	}
	for _, t := range tables {
		b.tables.put(t, false)
	}
	return nil
}

// readTables reads every kind of the catalog and prepares its table.
func (b *Backend) readTables(ctx context.Context) ([]*table, error) {
	return readTablesOn(ctx, b.w, b.r)
}

// readTablesOn is readTables on the writer w and the reader pool r (Rotate
// prepares the tables of the next file before it switches to it).
func readTablesOn(ctx context.Context, w, r *sql.DB) ([]*table, error) {
	all, err := readKindRows(ctx, r)
	if err != nil {
		return nil, err
	}
	out := make([]*table, 0, len(all))
	fail := func(err error) ([]*table, error) {
		for _, t := range out {
			_ = t.close()
		}
		return nil, err
	}
	for _, e := range all {
		k, err := parseSchema(e.name, e.schema)
		if err != nil {
			return fail(err)
		}
		t, err := newTable(ctx, w, r, k, e.table)
		if err != nil {
			return fail(err)
		}
		out = append(out, t)
	}
	return out, nil
}

// kindRow is one row of record_kinds: a kind's name, its table and its
// schema text.
type kindRow struct{ name, table, schema string }

// readKindRows reads every row of record_kinds, in name order, through q
// (the reader pool, or a transaction).
func readKindRows(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) ([]kindRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, table_name, schema FROM record_kinds ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("read kinds: %w", err)
	}
	var all []kindRow
	for rows.Next() {
		var e kindRow
		if err := rows.Scan(&e.name, &e.table, &e.schema); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("read kinds: %w", err)
		}
		all = append(all, e)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("read kinds: %w", err)
	}
	return all, nil
}
