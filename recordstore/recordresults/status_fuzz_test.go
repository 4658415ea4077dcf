package recordresults_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/recordresults"
)

// FuzzStatusJSON: the printed status a client of GET /api/v1/status
// decodes either decodes or fails, never panics, and what decodes prints
// back to text that decodes and prints the same (the owner's replica
// included).
func FuzzStatusJSON(f *testing.F) {
	withReplica := recordresults.NewStatus(fullStatus())
	withReplica.Replica = &owner.ReplicaStatus{Target: "s3://b/p", Running: true, LocalTXID: 9, ReplicaTXID: 7,
		LagSeconds: 0.25, LagBytes: 4096, LastError: "boom"}
	withReplica.Wake, withReplica.Subscribers = owner.WakePush, 3
	withReplica.Lease = &owner.FenceStatus{Target: "s3://b/p", Generation: 4, Owner: "host-a:12",
		SafeUntil: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	for _, st := range []recordresults.Status{recordresults.NewStatus(fullStatus()), withReplica} {
		raw, err := json.Marshal(st)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"phase":"none"}`))
	f.Add([]byte(`{"phase":"ready","startedAt":"x"}`))
	f.Add([]byte(`{"replica":{"target":1}}`))
	f.Add([]byte(`{"phase":"ready","lease":{"generation":-1,"safeUntil":"x"}}`))
	f.Add([]byte(`{"replica":{"failingSince":"2030-01-02T03:04:05Z","lagSeconds":1e308}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var st recordresults.Status
		if err := json.Unmarshal(data, &st); err != nil {
			return
		}
		if st.Phase == owner.PhaseNone {
			return // printed as {"phase":"none"} alone
		}
		again, err := json.Marshal(st)
		if err != nil {
			t.Fatalf("decoded %q but cannot print it: %v", data, err)
		}
		var back recordresults.Status
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatalf("printed %s does not decode: %v", again, err)
		}
		third, err := json.Marshal(back)
		if err != nil || string(third) != string(again) {
			t.Fatalf("round trip of %q: printed %s, then %s (%v)", data, again, third, err)
		}
		if (back.Replica == nil) != (st.Replica == nil) {
			t.Fatalf("round trip of %q lost or made up the replica", data)
		}
		if (back.Lease == nil) != (st.Lease == nil) {
			t.Fatalf("round trip of %q lost or made up the lease", data)
		}
	})
}
