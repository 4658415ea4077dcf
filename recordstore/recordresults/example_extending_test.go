// A small record family built on the engine, as docs/extending.md
// describes it: an audit log kind with a key and the replace policy,
// written through every one-call write of a Store.

package recordresults_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/spool"
)

// auditKind is the audit log's kind: one row per event, keyed by its id.
// A corrected event (the same id again) replaces the stored one, which
// moves to the next seq. Rows older than 90 days are trimmed.
func auditKind() recordstore.Kind {
	return recordstore.Kind{
		Name: "audit",
		Columns: []recordstore.Column{
			{Name: "event_id", Type: recordstore.TypeString, Required: true},
			{Name: "actor", Type: recordstore.TypeString, Required: true},
			{Name: "action", Type: recordstore.TypeString},
			{Name: "at", Type: recordstore.TypeDatetime},
			{Name: "detail", Type: recordstore.TypeJSON},
		},
		Key:        []string{"event_id"},
		OnConflict: recordstore.ConflictReplace,
		Retention:  &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(90 * 24 * time.Hour)},
		TimeColumn: "at",
		Indexes:    [][]string{{"actor"}},
	}
}

// window prints an append's window.
func window(what string, r recordstore.AppendResult) {
	fmt.Printf("%s: seqs %d..%d, appended %d, replaced %d, skipped %d\n", what, r.From, r.To, r.Appended, r.Replaced, r.Skipped)
}

// Example_auditLog declares an audit log kind and writes to it through
// the one-call writes of a Store (DeclareKinds, Append, Publish and
// Await, NewWriter, Mutate), then reads it back with Scan. The process is
// alone on its store, so it is the owner and applies every write itself;
// the same calls from a process that does not own the store go through
// the spool and return the owner's exact result.
func Example_auditLog() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "audit-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	st, err := records.Open(ctx, filepath.Join(dir, "records.sqlite"), records.Options{Owner: records.OwnerOptions{Build: "audit-example"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	fmt.Println("role:", st.Role())

	// Declare the kind. Declaring it again as it is changes nothing;
	// changing its key is a schema conflict, and nothing changes.
	kind := auditKind()
	for range 2 {
		d, err := st.DeclareKinds(ctx, []recordstore.Kind{kind}, owner.WriteOptions{})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("declare:", d.Statuses)
	}
	changed := auditKind()
	changed.Key = []string{"actor", "event_id"}
	_, err = st.DeclareKinds(ctx, []recordstore.Kind{changed}, owner.WriteOptions{})
	fmt.Println("change the key:", recordstore.Code(err))

	// Append: one all-or-nothing append, whatever the role.
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	a, err := st.Append(ctx, "tenant-7", "audit", []recordstore.Row{
		{"event_id": "e1", "actor": "ana", "action": "login", "at": at},
		{"event_id": "e2", "actor": "ben", "action": "export", "at": at.Add(time.Minute), "detail": json.RawMessage(`{"rows":120}`)},
	}, owner.AppendOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	window("append", a.AppendResult)

	// The same key again replaces the stored row (the replace policy).
	a, err = st.Append(ctx, "tenant-7", "audit", []recordstore.Row{
		{"event_id": "e1", "actor": "ana", "action": "login-mfa", "at": at},
	}, owner.AppendOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	window("correct e1", a.AppendResult)

	// A row that does not fit the kind refuses the whole append.
	_, err = st.Append(ctx, "tenant-7", "audit", []recordstore.Row{
		{"event_id": "e3", "actor": "cy"},
		{"event_id": "e4"}, // actor is required
	}, owner.AppendOptions{})
	fmt.Println("row without actor:", recordstore.Code(err), errors.Is(err, recordstore.ErrInvalid))

	// Publish and Await: a batch prepared as the owner would apply it
	// (the SQLite backend is an owner.Preparer), written into the spool,
	// and its outcome read from the ledger.
	batch, err := st.Backend().PrepareAppend(ctx, "tenant-7", "audit", nil, []recordstore.Row{
		{"event_id": "e3", "actor": "cy", "action": "delete", "at": at.Add(2 * time.Minute)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	id, err := st.Publish(ctx, batch)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := st.Await(ctx, id)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("published batch:", res.Outcome)
	window("published append", *res.Entries[0].Append)

	// The bulk Writer buffers appends and cuts them into batches, each
	// applied exactly once; Flush (and Close) return their outcomes. Its
	// three small appends to one stream travel as one entry.
	w := st.NewWriter(spool.WriterOptions{})
	for i := range 3 {
		row := recordstore.Row{"event_id": fmt.Sprintf("b%d", i), "actor": "batch-job", "action": "import"}
		if err := w.Append(ctx, "tenant-7", &kind, []recordstore.Row{row}); err != nil {
			fmt.Println(err)
			return
		}
	}
	results, err := w.Close(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range results {
		for _, e := range r.Entries {
			window("writer batch", *e.Append)
		}
	}

	// Mutate: a stream operation. A sealed stream refuses appends.
	m, err := st.Mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "tenant-7"}, owner.WriteOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sealed:", m.Meta.Sealed, "total:", m.Meta.Total, "highSeq:", m.Meta.HighSeq)
	_, err = st.Append(ctx, "tenant-7", "audit", []recordstore.Row{{"event_id": "e9", "actor": "dee"}}, owner.AppendOptions{})
	fmt.Println("append after seal:", recordstore.Code(err))

	// Read it back: seq order, with the hole e1's first row left behind.
	recs, err := st.Backend().Scan(ctx, "tenant-7", recordstore.ScanOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(string(line))
	}

	// Output:
	// role: owner
	// declare: [created]
	// declare: [unchanged]
	// change the key: schema_conflict
	// append: seqs 1..2, appended 2, replaced 0, skipped 0
	// correct e1: seqs 3..3, appended 1, replaced 1, skipped 0
	// row without actor: invalid true
	// published batch: committed
	// published append: seqs 4..4, appended 1, replaced 0, skipped 0
	// writer batch: seqs 5..7, appended 3, replaced 0, skipped 0
	// sealed: true total: 6 highSeq: 7
	// append after seal: sealed
	// {"_seq":2,"action":"export","actor":"ben","at":"2026-05-01T12:01:00.000000Z","detail":{"rows":120},"event_id":"e2"}
	// {"_seq":3,"action":"login-mfa","actor":"ana","at":"2026-05-01T12:00:00.000000Z","detail":null,"event_id":"e1"}
	// {"_seq":4,"action":"delete","actor":"cy","at":"2026-05-01T12:02:00.000000Z","detail":null,"event_id":"e3"}
	// {"_seq":5,"action":"import","actor":"batch-job","at":null,"detail":null,"event_id":"b0"}
	// {"_seq":6,"action":"import","actor":"batch-job","at":null,"detail":null,"event_id":"b1"}
	// {"_seq":7,"action":"import","actor":"batch-job","at":null,"detail":null,"event_id":"b2"}
}
