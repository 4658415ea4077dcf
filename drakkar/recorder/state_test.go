// Specs of the worker_state and worker_config rows.

package recorder_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/recorder"
)

var _ = Describe("State", func() {
	It("pins the 18 worker_state columns", func() {
		Expect(recorder.StateColumns).To(HaveLen(18))
		Expect(recorder.StateColumns[0]).To(Equal("id"))
		Expect(recorder.StateColumns[17]).To(Equal("updated_at_dt"))
	})

	It("stores a snapshot in column order", func() {
		vals, err := recorder.State{
			At: at, Uptime: 90500 * time.Millisecond, AssignedPartitions: []int32{2, 0},
			PartitionCount: 2, PoolActive: 3, PoolMax: 8, TotalQueued: 4, ConsumedCount: 10,
			CompletedCount: 7, FailedCount: 1, ProducedCount: 6, CommittedCount: 9, Paused: true,
			HealthState: recorder.Ptr(recorder.HealthDegraded), LoopLag: recorder.Ptr(1500 * time.Microsecond),
			Throughput: map[string]any{"1m": 2.0, "10s": 1.5},
		}.Values()
		Expect(err).NotTo(HaveOccurred())
		Expect(vals).To(Equal([]any{
			90.5, "[2,0]", int64(2), int64(3), int64(8), int64(4), int64(10), int64(7), int64(1),
			int64(6), int64(9), int64(1), "degraded", 1.5, `{"10s":1.5,"1m":2.0}`, atTS, atDT,
		}))
	})

	It("stores NULL for the monitors that are off, and [] for no partitions", func() {
		vals, err := recorder.State{At: at}.Values()
		Expect(err).NotTo(HaveOccurred())
		Expect(vals[1]).To(Equal("[]"))
		Expect(vals[11]).To(Equal(int64(0)))
		Expect(vals[12:15]).To(Equal([]any{nil, nil, nil}))
	})
})

var _ = Describe("ConfigRow", func() {
	info := recorder.WorkerInfo{
		WorkerName: "w1", ClusterName: "search hot", IPAddress: "10.0.0.5", DebugPort: 8080,
		DebugURL: "http://10.0.0.5:8080", KafkaBrokers: "admin:s3cret@k1:9092,k2:9092",
		SourceTopic: "in", ConsumerGroup: "g", BinaryPath: "/usr/bin/task", MaxExecutors: 4,
		TaskTimeout: 90*time.Second + 500*time.Millisecond, MaxRetries: 2, WindowSize: 100,
		Sinks: map[string]any{"s3": map[string]any{"bucket": "b", "secret_key": "x"}},
		Env:   map[string]string{"API_TOKEN": "t", "LANG": "C"},
	}

	It("gives the 18 values with id 1, redaction applied", func() {
		Expect(recorder.ConfigColumns).To(HaveLen(18))
		vals, err := recorder.ConfigRow(info, at)
		Expect(err).NotTo(HaveOccurred())
		Expect(vals).To(Equal([]any{
			int64(1), "w1", "search hot", "10.0.0.5", int64(8080), "http://10.0.0.5:8080",
			"k1:9092,k2:9092", "in", "g", "/usr/bin/task", int64(4), int64(90), int64(2), int64(100),
			`{"s3":{"bucket":"b","secret_key":"***"}}`, `{"API_TOKEN":"***","LANG":"C"}`, atTS, atDT,
		}))
	})

	It("writes empty topic and group for a worker with no Kafka source, NULL for what is not given", func() {
		vals, err := recorder.ConfigRow(recorder.WorkerInfo{WorkerName: "w1"}, at)
		Expect(err).NotTo(HaveOccurred())
		Expect(vals[7:9]).To(Equal([]any{"", ""}))
		Expect(vals[4]).To(BeNil())
		Expect(vals[14:16]).To(Equal([]any{nil, nil}))
	})

	It("refuses sinks that do not encode, naming the column", func() {
		bad := info
		bad.Sinks = map[string]any{"c": make(chan int)}
		_, err := recorder.ConfigRow(bad, at)
		Expect(err).To(MatchError(recorder.ErrEvent))
		Expect(err.Error()).To(ContainSubstring("sinks_json"))
	})
})
