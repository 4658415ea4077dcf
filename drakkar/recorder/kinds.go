// The recorder's tables as bound kinds of the engine: the spec's DDL,
// verbatim, and the columns the recorder writes into each.

package recorder

import (
	"strings"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore"
)

// The kinds, tables and streams of a recorder file. Each kind is bound to
// the table of the same name and holds one stream of that name.
const (
	EventsKind       = "events"
	WorkerConfigKind = "worker_config"
	WorkerStateKind  = "worker_state"
)

// indexesOn returns the statements of dbfiles.RecorderIndexDDL that index
// table, in their order.
func indexesOn(table string) []string {
	var out []string
	for _, s := range dbfiles.RecorderIndexDDL {
		if strings.Contains(s, " ON "+table+"(") {
			out = append(out, s)
		}
	}
	return out
}

func col(name string, t recordstore.ColumnType, required bool) recordstore.Column {
	return recordstore.Column{Name: name, Type: t, Required: required}
}

var (
	str = recordstore.TypeString
	num = recordstore.TypeNumber
	i64 = recordstore.TypeInteger
)

// eventsKind is the events table: every column but id, which is the
// stream's seq. The JSON columns are text the recorder encodes
// canonically itself (dbfiles.CanonicalJSON), so the engine stores them
// as given.
func eventsKind() recordstore.Kind {
	return recordstore.Kind{
		Name: EventsKind,
		Columns: []recordstore.Column{
			col("ts", num, true), col("dt", str, true), col("event", str, true),
			col("partition", i64, false), col("offset", i64, false), col("task_id", str, false),
			col("args", str, false), col("stdout_size", i64, false), col("stdout", str, false),
			col("stderr", str, false), col("exit_code", i64, false), col("duration", num, false),
			col("output_topic", str, false), col("metadata", str, false), col("pid", i64, false),
			col("labels", str, false), col("origin", str, true), col("client_name", str, false),
			col("request_id", str, false),
		},
		Table: &recordstore.BoundTable{Name: "events", DDL: append([]string{dbfiles.EventsDDL}, indexesOn("events")...)},
	}
}

// workerConfigKind is the single-row worker_config table: replaced on id,
// which is always 1.
func workerConfigKind() recordstore.Kind {
	return recordstore.Kind{
		Name: WorkerConfigKind,
		Columns: []recordstore.Column{
			col("id", i64, true), col("worker_name", str, true), col("cluster_name", str, false),
			col("ip_address", str, false), col("debug_port", i64, false), col("debug_url", str, false),
			col("kafka_brokers", str, false), col("source_topic", str, false), col("consumer_group", str, false),
			col("binary_path", str, false), col("max_executors", i64, false), col("task_timeout_seconds", i64, false),
			col("max_retries", i64, false), col("window_size", i64, false), col("sinks_json", str, false),
			col("env_vars_json", str, false), col("created_at", num, true), col("created_at_dt", str, true),
		},
		Key:        []string{"id"},
		OnConflict: recordstore.ConflictReplace,
		Table:      &recordstore.BoundTable{Name: "worker_config", DDL: []string{dbfiles.WorkerConfigDDL}},
	}
}

// workerStateKind is the worker_state table of periodic snapshots: every
// column but id, which is the stream's seq.
func workerStateKind() recordstore.Kind {
	return recordstore.Kind{
		Name: WorkerStateKind,
		Columns: []recordstore.Column{
			col("uptime_seconds", num, false), col("assigned_partitions", str, false), col("partition_count", i64, false),
			col("pool_active", i64, false), col("pool_max", i64, false), col("total_queued", i64, false),
			col("consumed_count", i64, false), col("completed_count", i64, false), col("failed_count", i64, false),
			col("produced_count", i64, false), col("committed_count", i64, false), col("paused", i64, false),
			col("health_state", str, false), col("loop_lag_ms", num, false), col("throughput", str, false),
			col("updated_at", num, true), col("updated_at_dt", str, true),
		},
		Table: &recordstore.BoundTable{Name: "worker_state", DDL: append([]string{dbfiles.WorkerStateDDL}, indexesOn("worker_state")...)},
	}
}

// Kinds returns the recorder's three bound kinds, in the order they are
// declared: events, worker_config, worker_state. Every recorder file has
// all three tables, whatever the store_* flags (they only decide which
// rows are written).
func Kinds() []recordstore.Kind {
	return []recordstore.Kind{eventsKind(), workerConfigKind(), workerStateKind()}
}
