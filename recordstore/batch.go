// Batches: groups of operations applied exactly once by a backend that
// implements BatchAppender, with a result per entry. Spool batches written by
// other processes become Batch values on the owner.

package recordstore

import (
	"context"
	"errors"
	"time"
)

// BatchOp is the operation of one batch entry.
type BatchOp string

// The batch operations.
const (
	OpAppend BatchOp = "append" // append Rows (then seal when Seal is set)
	OpSeal   BatchOp = "seal"
	OpExpire BatchOp = "expire" // TTL
	OpTrim   BatchOp = "trim"   // Before
	OpDelete BatchOp = "delete"
	OpReopen BatchOp = "reopen" // Generation
	// OpDeclare declares Kind from the batch's schemas, strictly as
	// Backend.DeclareKind does, and touches no stream.
	OpDeclare BatchOp = "declare"
)

// Valid reports whether op is one of the batch operations.
func (op BatchOp) Valid() bool {
	switch op {
	case OpAppend, OpSeal, OpExpire, OpTrim, OpDelete, OpReopen, OpDeclare:
		return true
	}
	return false
}

// Producer identifies who wrote a batch. Instance is 16 lowercase hex
// characters, new per process; Seq grows by one with every batch that
// instance publishes. PID, Host and Build are advisory. Its JSON form is
// the "producer" object of a spool manifest (docs/spool-format.md), every
// field always written.
type Producer struct {
	Instance string `json:"instance"`
	Seq      int64  `json:"seq"`
	PID      int    `json:"pid"`
	Host     string `json:"host"`
	Build    string `json:"build"`
}

// BatchEntry is one operation of a batch.
type BatchEntry struct {
	Op     BatchOp
	Stream string
	// Kind names the kind of Rows (for append) and the schema to declare
	// (for declare). Rows are normalized against the batch's own schema of
	// that kind (Batch.Schemas), in that schema's column order.
	Kind string
	Rows []Values
	// Source, when set, streams the append's rows instead of Rows: the
	// backend reads them while it inserts, so decoding a large spooled
	// file overlaps the inserts instead of preceding them. See RowSource
	// for what a source error does to the batch.
	Source RowSource
	// Seal, with append, seals the stream after the rows are appended.
	Seal bool
	// Generation, when not zero, fences the entry: it applies only to that
	// incarnation of the stream, and fails with ErrNotFound otherwise.
	Generation int64
	// TTL is the expire operation's time to live (> 0).
	TTL time.Duration
	// Before is the trim operation's cut-off.
	Before time.Time
}

// RowSource streams the rows of one append entry (BatchEntry.Source), in
// the column order of the batch's schema of the entry's kind. The backend
// reads it from one goroutine at a time, at most once, and never closes it:
// whoever built the batch closes its sources after AppendBatch returns.
//
// A source error is a problem of the batch, not of the entry: when Next
// fails with an error that carries a code (Code(err) is not
// CodeInternal: rows that do not fit, a row count that differs from the
// one announced), the backend rolls back every entry of the batch and
// records the batch as failed with that error (OutcomeFailed), exactly as
// if it had been submitted with Failure. Any other error (an I/O error
// reading the source) fails the whole AppendBatch call, and nothing is
// committed. An entry refused before its rows are read (a schema conflict,
// a fenced generation) leaves its source unread.
type RowSource interface {
	// Len is how many rows the source announces; Next must yield exactly
	// that many before io.EOF.
	Len() int
	// Next returns the next row, or io.EOF after the last one.
	Next() (Values, error)
}

// Batch is a group of entries applied once, identified by ID. Schemas are
// the writer's own declarations of the kinds its entries use; the backend
// reconciles them additively with its catalog before applying the batch.
//
// The same value travels through the spool: package spool publishes a
// Batch as a batch folder (its entries' Rows, or the rows an append
// entry's Source streams, written as they are read; Failure and Retry
// are not published) and reads a folder back as a Batch.
type Batch struct {
	ID       string
	Producer Producer
	Created  time.Time
	Schemas  []Kind
	Entries  []BatchEntry
	// Failure, when set, records the batch in the ledger as failed with
	// this error (outcome "failed") and applies none of its entries: that
	// is how an owner answers, durably, for a batch it could not load.
	Failure *BatchError
	// Retry, when set, applies the batch even though the ledger records
	// it as failed (an operator put a failed batch back, perhaps after
	// fixing what failed it), replacing that record with the new outcome
	// — which is failed again if Failure is set or the batch fails. A
	// batch the ledger records as committed is never applied again,
	// Retry or not.
	Retry bool
}

// Schema returns the batch's declaration of the named kind.
func (b *Batch) Schema(kind string) (*Kind, bool) {
	k := KindNamed(b.Schemas, kind)
	return k, k != nil
}

// Rows returns the number of rows of the batch's entries: the Rows of
// each, or as many as its Source announces (Len) when it streams them.
func (b *Batch) Rows() int64 {
	var n int64
	for i := range b.Entries {
		if src := b.Entries[i].Source; src != nil {
			n += int64(src.Len())
			continue
		}
		n += int64(len(b.Entries[i].Rows))
	}
	return n
}

// KindNamed returns the kind named name in kinds (a pointer into the
// slice), or nil. It is the one lookup of a batch's or a manifest's
// schemas.
func KindNamed(kinds []Kind, name string) *Kind {
	for i := range kinds {
		if kinds[i].Name == name {
			return &kinds[i]
		}
	}
	return nil
}

// BatchOutcome is what became of a batch.
type BatchOutcome string

// The batch outcomes. A committed batch may still carry failed entries: each
// entry is isolated, and only a batch-level problem fails the whole batch.
const (
	OutcomeCommitted BatchOutcome = "committed"
	OutcomeFailed    BatchOutcome = "failed"
)

// EntryResult is the result of one entry: Append for appends, Meta for the
// stream after other operations, Status for declares, Error when the entry
// was rolled back.
type EntryResult struct {
	Op     BatchOp       `json:"op"`
	Stream string        `json:"stream,omitempty"`
	Append *AppendResult `json:"append,omitempty"`
	Meta   *Meta         `json:"meta,omitempty"`
	Status KindStatus    `json:"status,omitempty"`
	Error  *BatchError   `json:"error,omitempty"`
}

// Err returns the entry's error, or nil.
func (r EntryResult) Err() error {
	if r.Error == nil {
		return nil
	}
	return r.Error
}

// BatchResult is the ledger's record of a batch: its outcome, the epoch of
// the writer that applied it, when, and a result per entry (in entry order).
// Error is set when the whole batch failed.
type BatchResult struct {
	ID         string        `json:"id"`
	Outcome    BatchOutcome  `json:"outcome"`
	Epoch      int64         `json:"epoch"`
	IngestedAt time.Time     `json:"ingestedAt"`
	Entries    []EntryResult `json:"entries"`
	Error      *BatchError   `json:"error,omitempty"`
}

// Err returns the batch-level error, else the first entry error, else nil.
func (r BatchResult) Err() error {
	if r.Error != nil {
		return r.Error
	}
	for _, e := range r.Entries {
		if e.Error != nil {
			return e.Error
		}
	}
	return nil
}

// BatchError is an error recorded in the ledger. Its Code is one of the
// codes of Code(); it unwraps to the matching sentinel, so errors.Is works on
// an error that went through JSON and back.
type BatchError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error returns "code: message".
func (e *BatchError) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// ErrorCode returns the recorded code.
func (e *BatchError) ErrorCode() string { return e.Code }

// Unwrap returns the sentinel of the code, or nil.
func (e *BatchError) Unwrap() error { return SentinelForCode(e.Code) }

// AsBatchError turns any error into a BatchError carrying its code and its
// message without the sentinel's own text in front (the rest of the text is
// kept as it is, so "entry 0: invalid: checksum mismatch" is recorded
// whole). A BatchError in the chain is returned as is; an *Error gives its
// Code and Msg. nil stays nil.
func AsBatchError(err error) *BatchError {
	if err == nil {
		return nil
	}
	var be *BatchError
	if errors.As(err, &be) {
		return be
	}
	code := Code(err)
	if e, ok := err.(*Error); ok && e.Code == code && e.Msg != "" {
		return &BatchError{Code: code, Message: e.Msg}
	}
	return &BatchError{Code: code, Message: cutSentinelText(err.Error(), code, cutLeading)}
}

// BatchAppender is implemented by backends that apply batches exactly once.
type BatchAppender interface {
	// AppendBatch applies batches with group commit: all in one
	// transaction, a ledger row each, each entry in its own savepoint so
	// that a deterministic entry failure rolls back only that entry. A
	// batch id already in the ledger writes nothing and returns the
	// recorded result, unless the record is a failure and the batch is
	// marked Retry. The error is for failures of the whole call (I/O,
	// closed); then nothing was committed.
	AppendBatch(ctx context.Context, batches ...Batch) ([]BatchResult, error)
	// BatchOutcome returns the ledger's result of a batch (ErrNotFound
	// when the batch was never applied).
	BatchOutcome(ctx context.Context, id string) (BatchResult, error)
	// ProducerSeq returns the highest seq applied for a producer instance
	// (0 when none).
	ProducerSeq(ctx context.Context, instance string) (int64, error)
	// SweepBatches removes ledger rows ingested before the given time and
	// returns how many it removed.
	SweepBatches(ctx context.Context, before time.Time) (int64, error)
}

// ChangeSource is implemented by backends that can tell when the store
// changed, including changes made by another process.
type ChangeSource interface {
	// WatchChanges calls changed after each detected change until ctx
	// ends; it returns ctx.Err() then.
	WatchChanges(ctx context.Context, changed func()) error
}

// DeclareBatch checks every kind of kinds with check (a backend's
// CheckDeclare) and returns the batch that declares them all, in order.
// No kinds, or a kind named twice, is ErrInvalid; when check refuses a
// kind, its error is returned and no batch. It writes nothing.
func DeclareBatch(ctx context.Context, kinds []Kind, check func(context.Context, Kind) (KindStatus, error)) (Batch, error) {
	if len(kinds) == 0 {
		return Batch{}, Invalidf("declare: no kinds")
	}
	var batch Batch
	for _, k := range kinds {
		if _, dup := batch.Schema(k.Name); dup {
			return Batch{}, Invalidf("declare: kind %s appears twice", k.Name)
		}
		if _, err := check(ctx, k); err != nil {
			return Batch{}, err
		}
		batch.Schemas = append(batch.Schemas, k)
		batch.Entries = append(batch.Entries, BatchEntry{Op: OpDeclare, Kind: k.Name})
	}
	return batch, nil
}
