// Whole-store snapshots: what a reader sees, rendered as text, used to prove
// that a refused call changed nothing and to compare a backend with the
// model.

package recordstoretest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fb46ecde/records/recordstore"
)

// takeSnapshot reads kinds, live streams and every stream's rows. Read
// errors are recorded in the snapshot rather than returned, so that two
// stores that fail alike compare equal and ones that fail differently do not.
func takeSnapshot(ctx context.Context, b recordstore.Backend) storeSnapshot {
	snap := storeSnapshot{Rows: map[string]string{}}
	kinds, err := b.Kinds(ctx)
	if err != nil {
		snap.Kinds = []string{"error: " + recordstore.Code(err)}
	}
	for _, k := range kinds {
		snap.Kinds = append(snap.Kinds, k.String())
	}
	metas, err := b.Streams(ctx, "")
	if err != nil {
		snap.Streams = []string{"error: " + recordstore.Code(err)}
	}
	for _, m := range metas {
		snap.Streams = append(snap.Streams, jsonText(m))
		recs, err := b.Scan(ctx, m.Stream, recordstore.ScanOptions{})
		if err != nil {
			snap.Rows[m.Stream] = "error: " + recordstore.Code(err)
			continue
		}
		snap.Rows[m.Stream] = jsonText(recs)
	}
	return snap
}

// jsonText renders v as JSON, or a description of why it cannot be.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unmarshalable %T: %v", v, err)
	}
	return string(b)
}
