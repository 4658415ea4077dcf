// The Drakkar spec's tables as bound kinds, for the specs: the DDL text
// (copied from the spec's "Schemas", as drakkar-notes.md §1 pins it) and
// kinds bound to it. drakkar/dbfiles will own the real constants.

package sqlite_test

import (
	"strings"

	"github.com/fb46ecde/records/recordstore"
)

const eventsDDL = `CREATE TABLE IF NOT EXISTS events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    ts          REAL    NOT NULL,
    dt          TEXT    NOT NULL,
    event       TEXT    NOT NULL,
    partition   INTEGER,
    offset      INTEGER,
    task_id     TEXT,
    args        TEXT,
    stdout_size INTEGER DEFAULT 0,
    stdout      TEXT,
    stderr      TEXT,
    exit_code   INTEGER,
    duration    REAL,
    output_topic TEXT,
    metadata    TEXT,
    pid         INTEGER,
    labels      TEXT,
    origin      TEXT    NOT NULL DEFAULT 'kafka',
    client_name TEXT,
    request_id  TEXT
);`

var eventsIndexDDL = []string{
	"CREATE INDEX IF NOT EXISTS idx_events_partition_offset ON events(partition, offset);",
	"CREATE INDEX IF NOT EXISTS idx_events_ts ON events(ts);",
	"CREATE INDEX IF NOT EXISTS idx_events_dt ON events(dt);",
	"CREATE INDEX IF NOT EXISTS idx_events_task_id ON events(task_id);",
	"CREATE INDEX IF NOT EXISTS idx_events_type ON events(event);",
	"CREATE INDEX IF NOT EXISTS idx_events_labels ON events(labels) WHERE labels IS NOT NULL;",
	"CREATE INDEX IF NOT EXISTS idx_events_origin ON events(origin);",
	"CREATE INDEX IF NOT EXISTS idx_events_request_id ON events(request_id) WHERE request_id IS NOT NULL;",
}

const workerConfigDDL = `CREATE TABLE IF NOT EXISTS worker_config (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    worker_name     TEXT NOT NULL,
    cluster_name    TEXT,
    ip_address      TEXT,
    debug_port      INTEGER,
    debug_url       TEXT,
    kafka_brokers   TEXT,
    source_topic    TEXT,
    consumer_group  TEXT,
    binary_path     TEXT,
    max_executors     INTEGER,
    task_timeout_seconds INTEGER,
    max_retries     INTEGER,
    window_size     INTEGER,
    sinks_json      TEXT,
    env_vars_json   TEXT,
    created_at      REAL NOT NULL,
    created_at_dt   TEXT NOT NULL
);`

const workerStateDDL = `CREATE TABLE IF NOT EXISTS worker_state (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    uptime_seconds      REAL,
    assigned_partitions TEXT,
    partition_count     INTEGER,
    pool_active         INTEGER,
    pool_max            INTEGER,
    total_queued        INTEGER,
    consumed_count      INTEGER,
    completed_count     INTEGER,
    failed_count        INTEGER,
    produced_count      INTEGER,
    committed_count     INTEGER,
    paused              INTEGER,
    health_state        TEXT,
    loop_lag_ms         REAL,
    throughput          TEXT,
    updated_at          REAL NOT NULL,
    updated_at_dt       TEXT NOT NULL
);`

const workerStateIndexDDL = "CREATE INDEX IF NOT EXISTS idx_worker_state_updated ON worker_state(updated_at);"

const cacheEntriesDDL = `CREATE TABLE IF NOT EXISTS cache_entries (
    key               TEXT    NOT NULL PRIMARY KEY,
    scope             TEXT    NOT NULL CHECK(scope IN ('local','cluster','global')),
    value             TEXT    NOT NULL,
    size_bytes        INTEGER NOT NULL,
    created_at_ms     INTEGER NOT NULL,
    updated_at_ms     INTEGER NOT NULL,
    expires_at_ms     INTEGER,
    origin_worker_id  TEXT    NOT NULL
);`

// cols builds columns from name/type pairs.
func cols(pairs ...string) []recordstore.Column {
	out := make([]recordstore.Column, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, recordstore.Column{Name: pairs[i], Type: recordstore.ColumnType(pairs[i+1])})
	}
	return out
}

const (
	tInt  = string(recordstore.TypeInteger)
	tNum  = string(recordstore.TypeNumber)
	tText = string(recordstore.TypeString)
)

// boundEvents binds kind name to the spec's events table: the 19 columns
// besides id, which holds the seq.
func boundEvents(name string) recordstore.Kind {
	return recordstore.Kind{Name: name, Columns: cols(
		"ts", tNum, "dt", tText, "event", tText, "partition", tInt, "offset", tInt, "task_id", tText,
		"args", tText, "stdout_size", tInt, "stdout", tText, "stderr", tText, "exit_code", tInt,
		"duration", tNum, "output_topic", tText, "metadata", tText, "pid", tInt, "labels", tText,
		"origin", tText, "client_name", tText, "request_id", tText),
		Table: &recordstore.BoundTable{Name: "events", DDL: append([]string{eventsDDL}, eventsIndexDDL...)}}
}

// boundWorkerConfig binds the single-row worker_config, replace on id.
func boundWorkerConfig() recordstore.Kind {
	return recordstore.Kind{Name: "worker_config", Key: []string{"id"}, OnConflict: recordstore.ConflictReplace,
		Columns: cols("id", tInt, "worker_name", tText, "cluster_name", tText, "ip_address", tText,
			"debug_port", tInt, "debug_url", tText, "kafka_brokers", tText, "source_topic", tText,
			"consumer_group", tText, "binary_path", tText, "max_executors", tInt, "task_timeout_seconds", tInt,
			"max_retries", tInt, "window_size", tInt, "sinks_json", tText, "env_vars_json", tText,
			"created_at", tNum, "created_at_dt", tText),
		Table: &recordstore.BoundTable{Name: "worker_config", DDL: []string{workerConfigDDL}}}
}

// boundWorkerState binds the worker_state snapshots (append).
func boundWorkerState() recordstore.Kind {
	return recordstore.Kind{Name: "worker_state", Columns: cols(
		"uptime_seconds", tNum, "assigned_partitions", tText, "partition_count", tInt, "pool_active", tInt,
		"pool_max", tInt, "total_queued", tInt, "consumed_count", tInt, "completed_count", tInt,
		"failed_count", tInt, "produced_count", tInt, "committed_count", tInt, "paused", tInt,
		"health_state", tText, "loop_lag_ms", tNum, "throughput", tText, "updated_at", tNum, "updated_at_dt", tText),
		Table: &recordstore.BoundTable{Name: "worker_state", DDL: []string{workerStateDDL, workerStateIndexDDL}}}
}

// boundCache binds cache_entries: lww on updated_at_ms, ties broken by
// origin_worker_id.
func boundCache() recordstore.Kind {
	return recordstore.Kind{Name: "cache", Key: []string{"key"}, OnConflict: recordstore.ConflictLWW,
		LWW: &recordstore.LWW{Version: "updated_at_ms", Tiebreak: "origin_worker_id"},
		Columns: cols("key", tText, "scope", tText, "value", tText, "size_bytes", tInt, "created_at_ms", tInt,
			"updated_at_ms", tInt, "expires_at_ms", tInt, "origin_worker_id", tText),
		Table: &recordstore.BoundTable{Name: "cache_entries", DDL: []string{cacheEntriesDDL}}}
}

// storedText is what SQLite keeps in sqlite_master.sql for a statement:
// the text without IF NOT EXISTS and without the final semicolon.
func storedText(stmt string) string {
	s := strings.Replace(stmt, " IF NOT EXISTS", "", 1)
	return strings.TrimSuffix(s, ";")
}

// event is a row of boundEvents with the NOT NULL columns set.
func event(name string) recordstore.Row {
	return recordstore.Row{"ts": 1.5, "dt": "2026-01-02T03:04:05.000000Z", "event": name}
}
