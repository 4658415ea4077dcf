// The printed form of a status, pinned byte for byte: what `query status`
// prints and GET /api/v1/status answers.

package recordresults_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/recordresults"
)

// fullStatus is an owner's status with every field set.
func fullStatus() owner.Status {
	at := time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	return owner.Status{
		State: owner.State{Instance: "inst", PID: 7, Host: "h", Build: "b1", Phase: owner.PhaseReady,
			StartedAt: at, HeartbeatAt: at.Add(time.Second), Epoch: 4, Store: "/d/v1/records.sqlite", CatalogVersion: 1,
			Spool:  owner.SpoolInfo{Dir: "/d/records.sqlite.spool", ManifestFormat: 1, Formats: []string{"ndjson", "ndjson.gz"}},
			Socket: "/d/records.sqlite.sock", Backlog: 2, Failed: 5, Refused: 3, LastError: "boom"},
		Role: owner.RoleOwner, SocketAlive: true, Stale: true, HeartbeatAgeMS: 9, Hint: "not printed",
	}
}

// damagedStatus is fullStatus of an owner that met a damaged live file.
func damagedStatus() owner.Status {
	st := fullStatus()
	st.Corrupt = &owner.Damage{Code: "corrupt", Message: "live file: malformed"}
	return st
}

var _ = Describe("the printed status", func() {
	DescribeTable("is pinned byte for byte",
		func(st owner.Status, corrupt string, want string) {
			printed := recordresults.NewStatus(st)
			if corrupt != "" { // the serving process met a damaged file
				printed.Corrupt = corrupt
			}
			raw, err := json.Marshal(printed)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(raw)).To(Equal(want))
		},
		Entry("a ready owner, every field in its order, times in the stored datetime form", fullStatus(), "",
			`{"instance":"inst","pid":7,"host":"h","build":"b1","phase":"ready","epoch":4,`+
				`"startedAt":"2030-01-02T02:04:05.123456Z","heartbeatAt":"2030-01-02T02:04:06.123456Z",`+
				`"store":"/d/v1/records.sqlite","catalogVersion":1,"socket":"/d/records.sqlite.sock",`+
				`"spool":{"dir":"/d/records.sqlite.spool","manifestFormat":1,"formats":["ndjson","ndjson.gz"]},`+
				`"backlog":2,"failed":5,"refused":3,"lastError":"boom","socketAlive":true,"stale":true}`),
		Entry("a damaged store adds corrupt last", fullStatus(), "damaged",
			`{"instance":"inst","pid":7,"host":"h","build":"b1","phase":"ready","epoch":4,`+
				`"startedAt":"2030-01-02T02:04:05.123456Z","heartbeatAt":"2030-01-02T02:04:06.123456Z",`+
				`"store":"/d/v1/records.sqlite","catalogVersion":1,"socket":"/d/records.sqlite.sock",`+
				`"spool":{"dir":"/d/records.sqlite.spool","manifestFormat":1,"formats":["ndjson","ndjson.gz"]},`+
				`"backlog":2,"failed":5,"refused":3,"lastError":"boom","socketAlive":true,"stale":true,"corrupt":"damaged"}`),
		Entry("an owner that met a damaged file adds its message as corrupt", damagedStatus(), "",
			`{"instance":"inst","pid":7,"host":"h","build":"b1","phase":"ready","epoch":4,`+
				`"startedAt":"2030-01-02T02:04:05.123456Z","heartbeatAt":"2030-01-02T02:04:06.123456Z",`+
				`"store":"/d/v1/records.sqlite","catalogVersion":1,"socket":"/d/records.sqlite.sock",`+
				`"spool":{"dir":"/d/records.sqlite.spool","manifestFormat":1,"formats":["ndjson","ndjson.gz"]},`+
				`"backlog":2,"failed":5,"refused":3,"lastError":"boom","socketAlive":true,"stale":true,"corrupt":"live file: malformed"}`),
		Entry("an unreadable state: zero times and an empty lastError print as empty strings",
			owner.Status{State: owner.State{Phase: owner.PhaseUnknown, Backlog: 1}, Hint: owner.BadStateHint}, "",
			`{"instance":"","pid":0,"host":"","build":"","phase":"unknown","epoch":0,"startedAt":"","heartbeatAt":"",`+
				`"store":"","catalogVersion":0,"socket":"","spool":{"dir":"","manifestFormat":0,"formats":null},`+
				`"backlog":1,"failed":0,"refused":0,"lastError":"","socketAlive":false,"stale":false}`),
		Entry("no owner", owner.Status{State: owner.State{Phase: owner.PhaseNone}, SocketAlive: true}, "",
			`{"phase":"none"}`),
	)

	It("prints every field of the owner's state, its damage as corrupt", func() {
		full := fullStatus()
		full.Corrupt = &owner.Damage{Code: "corrupt", Message: "damaged"}
		raw, err := json.Marshal(recordresults.NewStatus(full))
		Expect(err).NotTo(HaveOccurred())
		var printed map[string]any
		Expect(json.Unmarshal(raw, &printed)).To(Succeed())
		st := reflect.TypeFor[owner.State]()
		for i := range st.NumField() {
			name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
			Expect(printed).To(HaveKey(name), "owner.State.%s", st.Field(i).Name)
		}
	})

	DescribeTable("reads back what it prints",
		func(st owner.Status) {
			raw, err := json.Marshal(recordresults.NewStatus(st))
			Expect(err).NotTo(HaveOccurred())
			var back recordresults.Status
			Expect(json.Unmarshal(raw, &back)).To(Succeed())
			again, err := json.Marshal(back)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(again)).To(Equal(string(raw)))
			Expect(back.PID).To(Equal(st.PID))
			Expect(back.CatalogVersion).To(Equal(st.CatalogVersion))
		},
		Entry("a ready owner", fullStatus()),
		Entry("an unreadable state", owner.Status{State: owner.State{Phase: owner.PhaseUnknown, Backlog: 1}}),
	)
})
