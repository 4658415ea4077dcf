// Specs of the time forms: vectors pinned from Python's own derivation, and
// the agreement of microsecond truncation with it.

package dbfiles_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// timeVector is one line of testdata/times.json, written by Python from a
// nanosecond reading: ts, dt and rfc3339 of the microsecond-truncated
// reading; nano_dt what a nanosecond clock gives when it truncates to the
// millisecond; python_dt_of_nano_ts what Python derives from the
// nanosecond reading's float.
type timeVector struct {
	UnixNano         int64  `json:"unix_nano"`
	TS               string `json:"ts"`
	DT               string `json:"dt"`
	RFC3339          string `json:"rfc3339"`
	NanoDT           string `json:"nano_dt"`
	PythonDTOfNanoTS string `json:"python_dt_of_nano_ts"`
}

func loadTimeVectors() []timeVector {
	b, err := os.ReadFile("testdata/times.json")
	Expect(err).NotTo(HaveOccurred())
	var vs []timeVector
	Expect(json.Unmarshal(b, &vs)).To(Succeed())
	Expect(vs).NotTo(BeEmpty())
	return vs
}

// pythonDT is Python's datetime.fromtimestamp(ts, UTC) formatted as dt:
// whole seconds by floor, the fraction × 10⁶ rounded half to even into
// microseconds, then the milliseconds cut.
func pythonDT(ts float64) string {
	sec := math.Floor(ts)
	us := math.RoundToEven((ts - sec) * 1e6)
	t := time.Unix(int64(sec), 0).UTC().Add(time.Duration(us) * time.Microsecond)
	return t.Format(dbfiles.DTLayout)
}

var _ = Describe("Times", func() {
	It("derives ts, dt and the canonical datetime as Python does, for every pinned vector", func() {
		for _, v := range loadTimeVectors() {
			t := time.Unix(0, v.UnixNano)
			ts, err := strconv.ParseFloat(v.TS, 64)
			Expect(err).NotTo(HaveOccurred())
			Expect(dbfiles.TS(t)).To(Equal(ts), "ts of %d", v.UnixNano)
			Expect(dbfiles.DT(t)).To(Equal(v.DT), "dt of %d", v.UnixNano)
			Expect(dbfiles.FormatTime(t)).To(Equal(v.RFC3339), "rfc3339 of %d", v.UnixNano)
			back, err := dbfiles.ParseTime(v.RFC3339)
			Expect(err).NotTo(HaveOccurred())
			Expect(back).To(Equal(dbfiles.Micro(t)))
		}
	})

	It("pins readings where a nanosecond clock disagrees with Python and truncation to µs agrees", func() {
		disagreements := 0
		for _, v := range loadTimeVectors() {
			if v.NanoDT != v.PythonDTOfNanoTS {
				disagreements++
				Expect(dbfiles.DT(time.Unix(0, v.UnixNano))).To(Equal(pythonDT(dbfiles.TS(time.Unix(0, v.UnixNano)))))
			}
		}
		Expect(disagreements).To(BeNumerically(">=", 3))
	})

	It("agrees with Python's dt-from-ts on many microsecond-truncated readings", func() {
		r := rand.New(rand.NewPCG(1, 2))
		naiveDisagree := 0
		for range 200_000 {
			ns := int64(1_600_000_000)*1e9 + r.Int64N(300_000_000*1e9)
			t := time.Unix(0, ns)
			Expect(dbfiles.DT(t)).To(Equal(pythonDT(dbfiles.TS(t))), "reading %d", ns)
			if t.UTC().Format(dbfiles.DTLayout) != pythonDT(float64(ns)/1e9) {
				naiveDisagree++
			}
		}
		// The notes' "about 1 row in 2,000" for a nanosecond clock.
		Expect(naiveDisagree).To(BeNumerically(">", 0))
	})

	It("truncates to the microsecond and converts to UTC", func() {
		t := time.Date(2026, 7, 5, 14, 34, 56, 123_456_999, time.FixedZone("CEST", 2*3600))
		Expect(dbfiles.Micro(t)).To(Equal(time.Date(2026, 7, 5, 12, 34, 56, 123_456_000, time.UTC)))
		Expect(dbfiles.FormatTime(t)).To(Equal("2026-07-05T12:34:56.123456Z"))
		Expect(dbfiles.DT(t)).To(Equal("2026-07-05 12:34:56.123"))
	})

	DescribeTable("ParseTime accepts exactly the canonical shape",
		func(s string) {
			_, err := dbfiles.ParseTime(s)
			Expect(err).To(MatchError(dbfiles.ErrBadTime))
		},
		Entry("no fraction", "2026-07-05T12:34:56Z"),
		Entry("three digits", "2026-07-05T12:34:56.123Z"),
		Entry("nine digits", "2026-07-05T12:34:56.123456789Z"),
		Entry("an offset", "2026-07-05T12:34:56.123456+00:00"),
		Entry("a lowercase z", "2026-07-05T12:34:56.123456z"),
		Entry("a space", "2026-07-05 12:34:56.123456Z"),
		Entry("hour 24", "2026-07-05T24:34:56.123456Z"),
		Entry("June 31", "2026-06-31T12:34:56.123456Z"),
		Entry("the empty text", ""),
		Entry("a sign in the fraction", "2026-07-05T12:34:56.-12345Z"),
	)
})
