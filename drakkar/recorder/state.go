// State and WorkerInfo: the rows of the recorder's worker_state (periodic
// snapshots) and worker_config (one row, id 1) tables.

package recorder

import (
	"github.com/fb46ecde/records/drakkar/dbfiles"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// StateColumns is the column list of worker_state, id first, in the order
// of the spec's DDL. State.Values returns the columns after id.
var StateColumns = []string{
	"id", "uptime_seconds", "assigned_partitions", "partition_count",
	"pool_active", "pool_max", "total_queued", "consumed_count",
	"completed_count", "failed_count", "produced_count", "committed_count",
	"paused", "health_state", "loop_lag_ms", "throughput", "updated_at",
	"updated_at_dt",
}

// ConfigColumns is the column list of worker_config, id first, in the
// order of the spec's DDL; ConfigRow returns all of them.
var ConfigColumns = []string{
	"id", "worker_name", "cluster_name", "ip_address", "debug_port",
	"debug_url", "kafka_brokers", "source_topic", "consumer_group",
	"binary_path", "max_executors", "task_timeout_seconds", "max_retries",
	"window_size", "sinks_json", "env_vars_json", "created_at",
	"created_at_dt",
}

// Health states of worker_state.health_state.
const (
	HealthHealthy  = "healthy"
	HealthDegraded = "degraded"
	HealthStalled  = "stalled"
)

// State is one worker_state snapshot but its id.
type State struct {
	// At is the clock reading of the snapshot (updated_at and
	// updated_at_dt).
	At time.Time
	// Uptime is stored as REAL seconds.
	Uptime time.Duration
	// AssignedPartitions is stored as a canonical JSON array; nil is [].
	AssignedPartitions []int32
	PartitionCount     int64
	PoolActive         int64
	PoolMax            int64
	TotalQueued        int64
	ConsumedCount      int64
	CompletedCount     int64
	FailedCount        int64
	ProducedCount      int64
	CommittedCount     int64
	// Paused is stored as 0 or 1.
	Paused bool
	// HealthState is one of the Health constants; nil = monitor off.
	HealthState *string
	// LoopLag is the event-loop lag at the sync tick, stored as REAL
	// milliseconds; nil = not measured.
	LoopLag *time.Duration
	// Throughput is the three-window throughput, stored as canonical JSON;
	// nil = feature off.
	Throughput any
}

// Values returns the stored values of the 17 columns after id, in
// StateColumns order. An unencodable throughput is an ErrEvent naming it.
func (s State) Values() ([]any, error) {
	parts := s.AssignedPartitions
	if parts == nil {
		parts = []int32{}
	}
	assigned, err := jsonColumn("assigned_partitions", parts)
	if err != nil {
		return nil, err
	}
	throughput, err := jsonColumn("throughput", s.Throughput)
	if err != nil {
		return nil, err
	}
	var lag any
	if s.LoopLag != nil {
		lag = milliseconds(*s.LoopLag)
	}
	paused := int64(0)
	if s.Paused {
		paused = 1
	}
	return []any{
		s.Uptime.Seconds(), assigned, s.PartitionCount, s.PoolActive, s.PoolMax,
		s.TotalQueued, s.ConsumedCount, s.CompletedCount, s.FailedCount,
		s.ProducedCount, s.CommittedCount, paused, nullable(s.HealthState), lag,
		throughput, dbfiles.TS(s.At), dbfiles.DT(s.At),
	}, nil
}

// WorkerInfo is what the worker_config row says about the worker. Empty
// text and zero numbers are stored as they are (a worker with no Kafka
// source writes source_topic and consumer_group as "", as the spec asks);
// only DebugPort 0, nil Sinks and nil Env are NULL.
type WorkerInfo struct {
	WorkerName  string
	ClusterName string
	IPAddress   string
	DebugPort   int
	DebugURL    string
	// KafkaBrokers is the comma-separated broker list; credentials are
	// stripped before it is stored (RedactBrokers).
	KafkaBrokers  string
	SourceTopic   string
	ConsumerGroup string
	BinaryPath    string
	MaxExecutors  int
	// TaskTimeout is stored as whole seconds (truncated).
	TaskTimeout time.Duration
	MaxRetries  int
	WindowSize  int
	// Sinks is any JSON value describing the sinks; secret-named keys are
	// hidden before it is stored (RedactJSON).
	Sinks any
	// Env is the worker's environment; secret-named values are hidden
	// before it is stored (RedactEnv).
	Env map[string]string
}

// ConfigRow returns the 18 values of the worker_config row (id = 1 first,
// ConfigColumns order) for info at the given time, redaction applied. An
// unencodable Sinks is an ErrEvent naming sinks_json.
func ConfigRow(info WorkerInfo, at time.Time) ([]any, error) {
	var sinks any
	if info.Sinks != nil {
		raw, err := canonicalJSON(info.Sinks)
		if err != nil {
			return nil, recordstore.Errorf(ErrEvent, "sinks_json: %w", err)
		}
		var decoded any
		if err := decode(raw, &decoded); err != nil {
			return nil, recordstore.Errorf(ErrEvent, "sinks_json: %w", err)
		}
		if sinks, err = jsonColumn("sinks_json", RedactJSON(decoded)); err != nil {
			return nil, err
		}
	}
	var env any
	if info.Env != nil {
		var err error
		if env, err = jsonColumn("env_vars_json", RedactEnv(info.Env)); err != nil {
			return nil, err
		}
	}
	var port any
	if info.DebugPort != 0 {
		port = int64(info.DebugPort)
	}
	return []any{
		int64(1), info.WorkerName, info.ClusterName, info.IPAddress, port,
		info.DebugURL, RedactBrokers(info.KafkaBrokers), info.SourceTopic,
		info.ConsumerGroup, info.BinaryPath, int64(info.MaxExecutors),
		int64(info.TaskTimeout / time.Second), int64(info.MaxRetries),
		int64(info.WindowSize), sinks, env, dbfiles.TS(at), dbfiles.DT(at),
	}, nil
}
