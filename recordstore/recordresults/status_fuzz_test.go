package recordresults_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/fb46ecde/records/recordstore/recordresults"
)

// FuzzStatusJSON: any text either decodes as a printed Status or is
// refused, without a panic; a decoded one prints, and what it prints
// decodes again and prints the same (a client of GET /api/v1/status reads
// back what the server wrote).
func FuzzStatusJSON(f *testing.F) {
	for _, seed := range []string{
		`{"phase":"none"}`,
		`{"instance":"a","pid":1,"host":"h","build":"b","phase":"ready","epoch":3,"startedAt":"2026-12-02T08:00:00.000000Z",` +
			`"heartbeatAt":"2026-12-02T08:00:01.5Z","store":"/s","catalogVersion":1,"socket":"/s.sock","spool":{"dir":"/s.spool"},` +
			`"backlog":2,"failed":0,"refused":1,"lastError":"","socketAlive":true,"stale":false,"wake":"push","subscribers":500}`,
		`{"phase":"ready","socketAlive":false,"stale":true,"wake":"polling"}`,
		`{"phase":"ready","startedAt":"yesterday"}`,
		`{"phase":"none","corrupt":"page 7"}`, `{"subscribers":-1}`, `[]`, `null`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var st recordresults.Status
		if err := json.Unmarshal(data, &st); err != nil {
			return
		}
		once, err := json.Marshal(st)
		if err != nil {
			t.Fatalf("decoded %q, cannot print it: %v", data, err)
		}
		var again recordresults.Status
		if err := json.Unmarshal(once, &again); err != nil {
			t.Fatalf("printed %s, cannot decode it: %v", once, err)
		}
		twice, err := json.Marshal(again)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("printed %s, then %s (%v)", once, twice, err)
		}
	})
}
