// Verifying a replica: restore it into a scratch folder with the same
// proof as Restore, and compare every stream's high seq and row count
// with the live store's.

package replica

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// VerifyOptions say which replica to verify a store against.
type VerifyOptions struct {
	// Replica is the replica address (see NewClient). Required.
	Replica string
	// LiveFile is the store's live file; default sqlite.LivePath(store).
	LiveFile string
	// Scratch is the folder the scratch folder is made in; default the
	// system's temp folder. It needs room for one copy of the store.
	Scratch string
	// Logger receives one line per verification; default: discard.
	Logger *slog.Logger
}

// StreamDiff is one stream whose restored copy differs from the live
// store. A stream on one side only has zeros on the other.
type StreamDiff struct {
	Stream         string `json:"stream"`
	LiveHighSeq    int64  `json:"liveHighSeq"`
	ReplicaHighSeq int64  `json:"replicaHighSeq"`
	LiveRows       int64  `json:"liveRows"`
	ReplicaRows    int64  `json:"replicaRows"`
	// Missing is "replica" or "live" for a stream on one side only.
	Missing string `json:"missing,omitempty"`
}

// VerifyReport is what Verify found.
type VerifyReport struct {
	// TXID is the replica transaction the copy was restored to.
	TXID uint64 `json:"txid"`
	// Streams is the number of live streams of the restored copy.
	Streams int `json:"streams"`
	// Diffs are the streams that differ (empty when the replica matches).
	Diffs []StreamDiff `json:"diffs"`
	// Moving says the live store changed while Verify ran: a replica
	// lagging behind it by the last few transactions is then expected.
	Moving bool `json:"moving"`
}

// Verify restores the replica of the store at path store into a scratch
// folder, with every proof of Restore (ErrGap, ErrChecksum,
// ErrCheckFailed), and compares each live stream's high seq and row count
// with the live store's, which it reads (read-only, beside a running
// owner) before and after the restore: the replica matches when it equals
// either reading. A difference is ErrMismatch, returned with the report
// (Diffs against the second reading; Moving set when the readings
// differ, since the replica then may simply lag). A store with no live
// file is recordstore.ErrNotFound.
//
// Verify writes nothing but its scratch folder (0700, under
// opts.Scratch), which it removes before returning; the store and the
// replica are only read.
func Verify(ctx context.Context, store string, opts VerifyOptions) (VerifyReport, error) {
	var rep VerifyReport
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	_, live, err := storeFiles(store, opts.LiveFile)
	if err != nil {
		return rep, err
	}
	client, err := NewClient(opts.Replica)
	if err != nil {
		return rep, err
	}
	if ok, err := exists(live); err != nil {
		return rep, err
	} else if !ok {
		return rep, recordstore.Errorf(recordstore.ErrNotFound, "store %s has no live file %s", store, live)
	}
	before, err := sqlite.CountStreams(ctx, live)
	if err != nil {
		return rep, fmt.Errorf("read the live store: %w", err)
	}
	plan, err := proveHistory(ctx, client, target{})
	if err != nil {
		return rep, err
	}
	scratch, err := os.MkdirTemp(opts.Scratch, "records-verify-")
	if err != nil {
		return rep, fmt.Errorf("make a scratch folder: %w", err)
	}
	defer os.RemoveAll(scratch)
	restored, _, err := buildChecked(ctx, client, plan, filepath.Join(scratch, "copy.sqlite"))
	if err != nil {
		return rep, err
	}
	after, err := sqlite.CountStreams(ctx, live)
	if err != nil {
		return rep, fmt.Errorf("read the live store: %w", err)
	}
	rep.TXID = uint64(plan[len(plan)-1].MaxTXID)
	rep.Streams = len(restored.Streams)
	rep.Diffs = diff(after, restored)
	rep.Moving = len(diff(before, after)) > 0
	if len(rep.Diffs) > 0 && len(diff(before, restored)) == 0 {
		rep.Diffs = nil
	}
	log.Info("verified replica", "store", store, "replica", Redact(opts.Replica), "txid", rep.TXID,
		"streams", rep.Streams, "diffs", len(rep.Diffs), "moving", rep.Moving)
	if len(rep.Diffs) == 0 {
		return rep, nil
	}
	var parts []string
	for i, d := range rep.Diffs {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(rep.Diffs)-3))
			break
		}
		switch d.Missing {
		case "":
			parts = append(parts, fmt.Sprintf("stream %s: high seq %d live, %d replica; %d rows live, %d replica",
				d.Stream, d.LiveHighSeq, d.ReplicaHighSeq, d.LiveRows, d.ReplicaRows))
		default:
			parts = append(parts, fmt.Sprintf("stream %s: not in the %s", d.Stream, d.Missing))
		}
	}
	moving := ""
	if rep.Moving {
		moving = " (the live store changed meanwhile: the replica may only lag)"
	}
	return rep, errorf(ErrMismatch, "replica at txid %d differs from store %s%s: %s", rep.TXID, store, moving, strings.Join(parts, "; "))
}

// diff returns the streams whose high seq or row count differ between
// the live and the replica reports, by stream id.
func diff(live, rep sqlite.FileReport) []StreamDiff {
	byID := map[string]sqlite.StreamCount{}
	for _, s := range rep.Streams {
		byID[s.Stream] = s
	}
	var out []StreamDiff
	for _, l := range live.Streams {
		r, ok := byID[l.Stream]
		delete(byID, l.Stream)
		d := StreamDiff{Stream: l.Stream, LiveHighSeq: l.HighSeq, LiveRows: l.Rows, ReplicaHighSeq: r.HighSeq, ReplicaRows: r.Rows}
		switch {
		case !ok:
			d.Missing = "replica"
		case r.HighSeq == l.HighSeq && r.Rows == l.Rows:
			continue
		}
		out = append(out, d)
	}
	for _, r := range rep.Streams {
		if _, ok := byID[r.Stream]; ok {
			out = append(out, StreamDiff{Stream: r.Stream, ReplicaHighSeq: r.HighSeq, ReplicaRows: r.Rows, Missing: "live"})
		}
	}
	return out
}
