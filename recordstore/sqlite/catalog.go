// The kind catalog (record_kinds): declaring a kind creates or alters its
// table in the same transaction that records its schema.

package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// DeclareKind declares k or reconciles it additively with the stored
// declaration (recordstore.Reconcile): a new kind gets its table, added
// columns are added with ALTER TABLE (stored rows read them as null). A
// kind whose name differs from a declared one only in case, or starts with
// "record_" or "sqlite_", is refused (ErrSchemaConflict, ErrInvalid), and
// so is a kind that breaks a rule of recordstore.Kind.Validate unless it is
// the stored declaration as it is (see checkDeclaration). On
// error the catalog and the tables are unchanged. A read-only backend
// submits the declaration (see Options.Submit) unless the catalog has it
// already, and then reads the kind from the catalog.
func (b *Backend) DeclareKind(ctx context.Context, k recordstore.Kind) (recordstore.KindStatus, error) {
	if err := k.ValidateStored(); err != nil { // the rest in declareTx: see checkDeclaration
		return "", err
	}
	if err := CheckKindName(k.Name); err != nil {
		return "", err
	}
	if err := b.enter(); err != nil {
		return "", err
	}
	if b.readOnly {
		b.leave()
		return b.declareReadOnly(ctx, k)
	}
	defer b.leave()
	if err := b.lockWrite(ctx); err != nil {
		return "", err
	}
	defer b.unlockWrite()
	_, status, err := b.declareLocked(ctx, k, false)
	if err != nil && status != "" {
		// The declaration is committed; the table is reloaded from the
		// catalog on its next use.
		b.log.Warn("prepare declared kind", "kind", k.Name, "err", err)
		return status, nil
	}
	if err != nil {
		return "", fmt.Errorf("declare kind %s: %w", k.Name, err)
	}
	return status, nil
}

// A bound kind (recordstore.Kind.Table) gets no table of the store's
// layout: its table is created from its DDL when missing, adopted when
// present, and checked against the kind either way (see bindTableTx); a
// mismatch is an ErrInvalid error and changes nothing.

// declareLocked declares k in its own transaction (see declareTx), then
// prepares and caches the kind's table. The caller holds the write lock
// and no transaction. When only the preparation fails, the status is
// returned with the error (the declaration is committed, and the kind is
// reloaded from the catalog on its next use).
func (b *Backend) declareLocked(ctx context.Context, k recordstore.Kind, subset bool) (*table, recordstore.KindStatus, error) {
	var (
		final  recordstore.Kind
		table  string
		status recordstore.KindStatus
	)
	err := b.inTxLocked(ctx, func(tx *sql.Tx, now time.Time) error {
		var err error
		final, table, status, err = declareTx(ctx, tx, k, subset, now)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	if t := b.tables.get(k.Name); status == recordstore.KindUnchanged && t != nil {
		return t, status, nil
	}
	// The write connection is free again: prepare the table's statements.
	t, err := newTable(ctx, b.w, b.r, final, table)
	if err != nil {
		b.tables.drop(k.Name)
		return nil, status, err
	}
	return b.tables.put(t, false), status, nil
}

// declareTx records k in the catalog inside tx, creating or altering its
// table, and returns the kind as stored, its table and what changed. With
// subset set, k may omit stored columns (recordstore.Reconcile): that is
// how a batch's own schema is reconciled.
func declareTx(ctx context.Context, tx *sql.Tx, k recordstore.Kind, subset bool, now time.Time) (recordstore.Kind, string, recordstore.KindStatus, error) {
	var name, table, schema string
	err := tx.QueryRowContext(ctx, `SELECT name, table_name, schema FROM record_kinds WHERE name_fold = ?1`,
		strings.ToLower(k.Name)).Scan(&name, &table, &schema)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if err := checkDeclaration(&k, recordstore.KindCreated); err != nil {
			return k, "", "", err
		}
		return createKindTx(ctx, tx, k, now)
	case err != nil:
		return k, "", "", fmt.Errorf("read catalog: %w", err)
	case name != k.Name:
		return k, "", "", schemaConflict("kind %s differs only in case from the declared kind %s", k.Name, name)
	}
	stored, err := parseSchema(name, schema)
	if err != nil {
		return k, "", "", err
	}
	merged, status, err := recordstore.Reconcile(stored, k, subset)
	if err != nil || status == recordstore.KindUnchanged {
		return stored, table, status, err
	}
	if err := checkDeclaration(&k, status); err != nil {
		return k, "", "", err
	}
	for _, c := range merged.Columns[len(stored.Columns):] {
		if _, err := tx.ExecContext(ctx, addColumnDDL(table, c)); err != nil {
			return k, "", "", fmt.Errorf("add column %s: %w", c.Name, err)
		}
	}
	if err := storeSchema(ctx, tx, merged, now, false); err != nil {
		return k, "", "", err
	}
	return merged, table, status, nil
}

// checkDeclaration holds a declaration that creates a kind or changes the
// stored one (status) to every rule of recordstore.Kind.Validate. Only a
// declaration that is the stored one as it is (KindUnchanged) escapes the
// rules added since an earlier build stored it, so that its writers —
// whose batches carry that very schema — go on as before. k has passed
// ValidateStored.
func checkDeclaration(k *recordstore.Kind, status recordstore.KindStatus) error {
	if status == recordstore.KindUnchanged {
		return nil
	}
	return k.Validate()
}

func createKindTx(ctx context.Context, tx *sql.Tx, k recordstore.Kind, now time.Time) (recordstore.Kind, string, recordstore.KindStatus, error) {
	table := k.Name
	if k.Table != nil {
		table = k.Table.Name
		if err := bindTableTx(ctx, tx, &k); err != nil {
			return k, "", "", err
		}
	} else {
		if typ, err := objectType(ctx, tx, table); err != nil || typ != "" {
			if err == nil {
				err = recordstore.Invalidf("kind %s: its table name is taken by a %s (a bound kind's table, or one of its indexes)", k.Name, typ)
			}
			return k, "", "", err
		}
		for _, ddl := range createTableDDL(&k, table) {
			if _, err := tx.ExecContext(ctx, ddl); err != nil {
				return k, "", "", fmt.Errorf("create table: %w", err)
			}
		}
	}
	if err := storeSchema(ctx, tx, k, now, true); err != nil {
		return k, "", "", err
	}
	return k, table, recordstore.KindCreated, nil
}

// tableName is the table of kind k: its bound table, or one named as
// the kind.
func tableName(k *recordstore.Kind) string {
	if k.Table != nil {
		return k.Table.Name
	}
	return k.Name
}

func storeSchema(ctx context.Context, tx *sql.Tx, k recordstore.Kind, now time.Time, create bool) error {
	schema, err := json.Marshal(k)
	if err != nil {
		return fmt.Errorf("encode schema: %w", err)
	}
	ns := recordstore.FormatDatetime(now)
	if create {
		_, err = tx.ExecContext(ctx, `INSERT INTO record_kinds (name, name_fold, table_name, schema, created_at, updated_at)
			VALUES (?1, ?2, ?3, ?4, ?5, ?5)`, k.Name, strings.ToLower(k.Name), tableName(&k), string(schema), ns)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE record_kinds SET schema = ?2, updated_at = ?3 WHERE name = ?1`,
			k.Name, string(schema), ns)
	}
	if err != nil {
		return fmt.Errorf("record schema: %w", err)
	}
	return nil
}

// Kinds lists the declared kinds, sorted by name.
func (b *Backend) Kinds(ctx context.Context) (_ []recordstore.Kind, err error) {
	defer b.corrupted(&err)
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.leave()
	rows, err := b.r.QueryContext(ctx, `SELECT name, schema FROM record_kinds ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list kinds: %w", err)
	}
	defer rows.Close()
	out := []recordstore.Kind{}
	for rows.Next() {
		var name, schema string
		if err := rows.Scan(&name, &schema); err != nil {
			return nil, fmt.Errorf("list kinds: %w", err)
		}
		k, err := parseSchema(name, schema)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list kinds: %w", err)
	}
	return out, nil
}

// Kind returns one declared kind (ErrNotFound if unknown, ErrInvalid if
// the name is malformed).
func (b *Backend) Kind(ctx context.Context, name string) (_ recordstore.Kind, err error) {
	defer b.corrupted(&err)
	if err := recordstore.ValidateKindName(name); err != nil {
		return recordstore.Kind{}, err
	}
	if err := b.enter(); err != nil {
		return recordstore.Kind{}, err
	}
	defer b.leave()
	var schema string
	err = b.r.QueryRowContext(ctx, `SELECT schema FROM record_kinds WHERE name = ?1`, name).Scan(&schema)
	if errors.Is(err, sql.ErrNoRows) {
		return recordstore.Kind{}, notFound("kind %s is not declared", name)
	}
	if err != nil {
		return recordstore.Kind{}, fmt.Errorf("read kind %s: %w", name, err)
	}
	return parseSchema(name, schema)
}
