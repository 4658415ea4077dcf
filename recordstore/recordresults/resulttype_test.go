// Typed result types: the kind a struct's tags declare, refused tags, and
// typed appends and scans through the owner and through the spool.

package recordresults_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// build is a typed result: a CI build.
type build struct {
	_       struct{}          `records:"kind=builds,onConflict=lww,retention=rows/720h"`
	ID      int64             `records:"id,key,required"`
	Repo    string            `records:"repo,search,index"`
	Status  string            `records:"status,search"`
	Attempt int32             `records:"attempt,version"`
	Runner  string            `records:"runner,tiebreak"`
	Seconds *float64          `records:"seconds"`
	Passed  *bool             `records:"passed"`
	At      time.Time         `records:"at,time,index"`
	Labels  map[string]string `records:"labels"`
	Raw     json.RawMessage   `records:"raw"`
	Skipped string            `records:"-"`
}

func ptr[T any](v T) *T { return &v }

var _ = Describe("A result type", func() {
	It("declares the kind its struct tags describe", func() {
		k, search, err := recordresults.ResultKind[build]()
		Expect(err).NotTo(HaveOccurred())
		Expect(k).To(Equal(recordstore.Kind{
			Name: "builds",
			Columns: []recordstore.Column{
				{Name: "id", Type: recordstore.TypeInteger, Required: true},
				{Name: "repo", Type: recordstore.TypeString},
				{Name: "status", Type: recordstore.TypeString},
				{Name: "attempt", Type: recordstore.TypeInteger},
				{Name: "runner", Type: recordstore.TypeString},
				{Name: "seconds", Type: recordstore.TypeNumber},
				{Name: "passed", Type: recordstore.TypeBool},
				{Name: "at", Type: recordstore.TypeDatetime},
				{Name: "labels", Type: recordstore.TypeJSON},
				{Name: "raw", Type: recordstore.TypeJSON},
			},
			Key:        []string{"id"},
			OnConflict: recordstore.ConflictLWW,
			LWW:        &recordstore.LWW{Version: "attempt", Tiebreak: "runner"},
			Retention:  &recordstore.Retention{Mode: recordstore.RetainRows, TTL: recordstore.Duration(720 * time.Hour)},
			TimeColumn: "at",
			Indexes:    [][]string{{"repo"}, {"at"}},
		}))
		Expect(search).To(Equal([]string{"repo", "status"}))
	})

	type noKind struct {
		A string `records:"a"`
	}
	type badOption struct {
		_ struct{} `records:"kind=k"`
		A string   `records:"a,primary"`
	}
	type badType struct {
		_ struct{} `records:"kind=k"`
		A string   `records:"a,type=integer"`
	}
	type unsupported struct {
		_ struct{}    `records:"kind=k"`
		C chan string `records:"c"`
	}
	type twice struct {
		_ struct{} `records:"kind=k"`
		A string   `records:"a"`
		B string   `records:"A"`
	}
	type badPolicy struct {
		_ struct{} `records:"kind=k,onConflict=newest"`
		A string   `records:"a,key"`
	}
	type badRetention struct {
		_ struct{} `records:"kind=k,retention=forever"`
		A string   `records:"a"`
	}
	type jsonKey struct {
		_ struct{}       `records:"kind=k"`
		A map[string]int `records:"a,key"`
	}
	type twoTimes struct {
		_ struct{}  `records:"kind=k"`
		A time.Time `records:"a,time"`
		B time.Time `records:"b,time"`
	}
	DescribeTable("refuses tags that do not describe a valid kind",
		func(check func() error, mention string) {
			err := check()
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err).To(MatchError(ContainSubstring(mention)))
		},
		Entry("no kind name", func() error { _, _, err := recordresults.ResultKind[noKind](); return err }, "no kind name"),
		Entry("an unknown option", func() error { _, _, err := recordresults.ResultKind[badOption](); return err }, `unknown option "primary"`),
		Entry("a type that does not fit the field", func() error { _, _, err := recordresults.ResultKind[badType](); return err }, "does not fit"),
		Entry("a field with no column type", func() error { _, _, err := recordresults.ResultKind[unsupported](); return err }, "no column type"),
		Entry("a column declared twice", func() error { _, _, err := recordresults.ResultKind[twice](); return err }, "declared twice"),
		Entry("an unknown conflict policy", func() error { _, _, err := recordresults.ResultKind[badPolicy](); return err }, "newest"),
		Entry("a malformed retention", func() error { _, _, err := recordresults.ResultKind[badRetention](); return err }, "retention=forever"),
		Entry("a json key column", func() error { _, _, err := recordresults.ResultKind[jsonKey](); return err }, "json"),
		Entry("two time columns", func() error { _, _, err := recordresults.ResultKind[twoTimes](); return err }, "two time columns"),
		Entry("a type that is not a struct", func() error { _, _, err := recordresults.ResultKind[int](); return err }, "want a struct"),
	)

	builds := []build{
		{ID: 1, Repo: "records", Status: "passed", Attempt: 1, Runner: "r1", Seconds: ptr(12.5), Passed: ptr(true),
			At: time.Date(2026, 12, 1, 10, 0, 0, 123456000, time.UTC), Labels: map[string]string{"os": "linux"}, Raw: json.RawMessage(`{"x":[1,2]}`)},
		{ID: 2, Repo: "drakkar", Status: "failed", Attempt: 2, Runner: "r2", At: time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)},
	}

	It("appends typed rows and scans them back equal, and searches them, as the owner", func() {
		ctx := context.Background()
		st, err := records.Open(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), records.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		rt, err := recordresults.RegisterResultType[build](ctx, st, nil)
		Expect(err).NotTo(HaveOccurred())
		res, err := rt.Append(ctx, "ci", builds)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Appended).To(Equal(int64(2)))
		var got []build
		for b, err := range rt.Scan(ctx, recordresults.Query{Stream: "ci"}) {
			Expect(err).NotTo(HaveOccurred())
			got = append(got, b)
		}
		Expect(got).To(Equal(builds))
		got = nil
		for b, err := range rt.Scan(ctx, recordresults.Query{Stream: "ci", Text: "FAIL"}) {
			Expect(err).NotTo(HaveOccurred())
			got = append(got, b)
		}
		Expect(got).To(Equal(builds[1:]), "status is a search column")
	})

	It("appends typed rows through the spool from a process that does not own the store", func() {
		ctx := context.Background()
		path := filepath.Join(GinkgoT().TempDir(), "records.sqlite")
		startPlainOwner(path)
		st, err := mpOpenAs(ctx, path, mpOptions(), owner.RoleNonOwner)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		rt, err := recordresults.RegisterResultType[build](ctx, st, nil)
		Expect(err).NotTo(HaveOccurred())
		res, err := rt.Append(ctx, "ci", builds)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Spooled).To(BeTrue())
		Expect(res.Appended).To(Equal(int64(2)))
		Eventually(func() ([]build, error) {
			var got []build
			for b, err := range rt.Scan(ctx, recordresults.Query{Stream: "ci"}) {
				if err != nil {
					return nil, err
				}
				got = append(got, b)
			}
			return got, nil
		}, apiWait).Should(Equal(builds))
	})

	It("refuses a typed scan of a stream of another kind", func() {
		ctx := context.Background()
		st, err := records.Open(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), records.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		_, err = st.Backend().DeclareKind(ctx, apiEvents)
		Expect(err).NotTo(HaveOccurred())
		_, err = st.Backend().Append(ctx, "e", "events", []recordstore.Row{{"msg": "x"}})
		Expect(err).NotTo(HaveOccurred())
		rt, err := recordresults.RegisterResultType[build](ctx, st, nil)
		Expect(err).NotTo(HaveOccurred())
		for _, err := range rt.Scan(ctx, recordresults.Query{Stream: "e"}) {
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err).To(MatchError(ContainSubstring("kind events, not builds")))
		}
	})
})
