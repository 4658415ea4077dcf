// The DDL of the Drakkar databases as it must appear in sqlite_master
// (notes §1 and §2): the spec's CREATE TABLE text with its spacing kept,
// without the three comments of worker_state, and the indexes one
// statement each, in a fixed order.

package dbfiles

// EventsDDL creates the recorder's events table (spec "Schemas").
const EventsDDL = `CREATE TABLE IF NOT EXISTS events (
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

// WorkerConfigDDL creates the recorder's single-row worker_config table.
// "max_executors     INTEGER" has five spaces, as the spec prints it.
const WorkerConfigDDL = `CREATE TABLE IF NOT EXISTS worker_config (
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

// WorkerStateDDL creates the recorder's worker_state table, without the
// spec's three "--" comments (a comment would be stored in sqlite_master;
// drakkar's own files have none). The columns keep their padding.
const WorkerStateDDL = `CREATE TABLE IF NOT EXISTS worker_state (
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

// CacheEntriesDDL creates the cache's cache_entries table.
const CacheEntriesDDL = `CREATE TABLE IF NOT EXISTS cache_entries (
    key               TEXT    NOT NULL PRIMARY KEY,
    scope             TEXT    NOT NULL CHECK(scope IN ('local','cluster','global')),
    value             TEXT    NOT NULL,
    size_bytes        INTEGER NOT NULL,
    created_at_ms     INTEGER NOT NULL,
    updated_at_ms     INTEGER NOT NULL,
    expires_at_ms     INTEGER,
    origin_worker_id  TEXT    NOT NULL
);`

// RecorderTableDDL is the recorder's three tables in creation order.
var RecorderTableDDL = []string{EventsDDL, WorkerConfigDDL, WorkerStateDDL}

// RecorderIndexDDL is the recorder's nine indexes, one statement each, in
// the order of notes §1.
var RecorderIndexDDL = []string{
	"CREATE INDEX IF NOT EXISTS idx_events_partition_offset ON events(partition, offset);",
	"CREATE INDEX IF NOT EXISTS idx_events_ts ON events(ts);",
	"CREATE INDEX IF NOT EXISTS idx_events_dt ON events(dt);",
	"CREATE INDEX IF NOT EXISTS idx_events_task_id ON events(task_id);",
	"CREATE INDEX IF NOT EXISTS idx_events_type ON events(event);",
	"CREATE INDEX IF NOT EXISTS idx_events_labels ON events(labels) WHERE labels IS NOT NULL;",
	"CREATE INDEX IF NOT EXISTS idx_events_origin ON events(origin);",
	"CREATE INDEX IF NOT EXISTS idx_events_request_id ON events(request_id) WHERE request_id IS NOT NULL;",
	"CREATE INDEX IF NOT EXISTS idx_worker_state_updated ON worker_state(updated_at);",
}

// CacheIndexDDL is the cache's two indexes, each split over two lines as
// the spec prints them.
var CacheIndexDDL = []string{
	"CREATE INDEX IF NOT EXISTS idx_cache_expires\n    ON cache_entries(expires_at_ms) WHERE expires_at_ms IS NOT NULL;",
	"CREATE INDEX IF NOT EXISTS idx_cache_scope_updated\n    ON cache_entries(scope, updated_at_ms);",
}

// MergedDDL creates the merged format of merge results and archives
// (notes §2): the workers, events and worker_states tables, then their
// nine indexes (plain CREATE INDEX).
var MergedDDL = []string{
	`CREATE TABLE workers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    worker_name TEXT NOT NULL,
    cluster_name TEXT,
    ip_address TEXT,
    debug_port INTEGER,
    debug_url TEXT,
    kafka_brokers TEXT,
    source_topic TEXT,
    consumer_group TEXT,
    binary_path TEXT,
    max_executors INTEGER,
    task_timeout_seconds INTEGER,
    max_retries INTEGER,
    window_size INTEGER,
    sinks_json TEXT,
    env_vars_json TEXT,
    created_at REAL,
    created_at_dt TEXT,
    source_file TEXT NOT NULL
)`,
	`CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    worker_id INTEGER NOT NULL REFERENCES workers(id),
    ts REAL NOT NULL,
    dt TEXT NOT NULL,
    event TEXT NOT NULL,
    partition INTEGER,
    offset INTEGER,
    task_id TEXT,
    args TEXT,
    stdout_size INTEGER DEFAULT 0,
    stdout TEXT,
    stderr TEXT,
    exit_code INTEGER,
    duration REAL,
    output_topic TEXT,
    metadata TEXT,
    pid INTEGER,
    labels TEXT,
    origin TEXT,
    client_name TEXT,
    request_id TEXT
)`,
	`CREATE TABLE worker_states (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    worker_id INTEGER NOT NULL REFERENCES workers(id),
    uptime_seconds REAL,
    assigned_partitions TEXT,
    partition_count INTEGER,
    pool_active INTEGER,
    pool_max INTEGER,
    total_queued INTEGER,
    consumed_count INTEGER,
    completed_count INTEGER,
    failed_count INTEGER,
    produced_count INTEGER,
    committed_count INTEGER,
    paused INTEGER,
    health_state TEXT,
    loop_lag_ms REAL,
    throughput TEXT,
    updated_at REAL NOT NULL,
    updated_at_dt TEXT NOT NULL
)`,
	"CREATE INDEX idx_events_ts ON events(ts)",
	"CREATE INDEX idx_events_dt ON events(dt)",
	"CREATE INDEX idx_events_event ON events(event)",
	"CREATE INDEX idx_events_task_id ON events(task_id)",
	"CREATE INDEX idx_events_partition ON events(partition)",
	"CREATE INDEX idx_events_worker ON events(worker_id)",
	"CREATE INDEX idx_events_worker_ts ON events(worker_id, ts)",
	"CREATE INDEX idx_states_worker ON worker_states(worker_id)",
	"CREATE INDEX idx_states_updated ON worker_states(updated_at)",
}

// Column is one column of a table: its name, its declared SQLite type, and
// its constraints as PRAGMA table_info reports them (Default is the
// default's SQL text, "" for none).
type Column struct {
	Name       string
	Type       string
	NotNull    bool
	Default    string
	PrimaryKey bool
}

// EventColumns is the 20-column event-row shape, in table order.
var EventColumns = []Column{
	{Name: "id", Type: "INTEGER", PrimaryKey: true},
	{Name: "ts", Type: "REAL", NotNull: true},
	{Name: "dt", Type: "TEXT", NotNull: true},
	{Name: "event", Type: "TEXT", NotNull: true},
	{Name: "partition", Type: "INTEGER"},
	{Name: "offset", Type: "INTEGER"},
	{Name: "task_id", Type: "TEXT"},
	{Name: "args", Type: "TEXT"},
	{Name: "stdout_size", Type: "INTEGER", Default: "0"},
	{Name: "stdout", Type: "TEXT"},
	{Name: "stderr", Type: "TEXT"},
	{Name: "exit_code", Type: "INTEGER"},
	{Name: "duration", Type: "REAL"},
	{Name: "output_topic", Type: "TEXT"},
	{Name: "metadata", Type: "TEXT"},
	{Name: "pid", Type: "INTEGER"},
	{Name: "labels", Type: "TEXT"},
	{Name: "origin", Type: "TEXT", NotNull: true, Default: "'kafka'"},
	{Name: "client_name", Type: "TEXT"},
	{Name: "request_id", Type: "TEXT"},
}

// WorkerConfigColumns is the 18 columns of worker_config, in table order.
var WorkerConfigColumns = []Column{
	{Name: "id", Type: "INTEGER", PrimaryKey: true},
	{Name: "worker_name", Type: "TEXT", NotNull: true},
	{Name: "cluster_name", Type: "TEXT"},
	{Name: "ip_address", Type: "TEXT"},
	{Name: "debug_port", Type: "INTEGER"},
	{Name: "debug_url", Type: "TEXT"},
	{Name: "kafka_brokers", Type: "TEXT"},
	{Name: "source_topic", Type: "TEXT"},
	{Name: "consumer_group", Type: "TEXT"},
	{Name: "binary_path", Type: "TEXT"},
	{Name: "max_executors", Type: "INTEGER"},
	{Name: "task_timeout_seconds", Type: "INTEGER"},
	{Name: "max_retries", Type: "INTEGER"},
	{Name: "window_size", Type: "INTEGER"},
	{Name: "sinks_json", Type: "TEXT"},
	{Name: "env_vars_json", Type: "TEXT"},
	{Name: "created_at", Type: "REAL", NotNull: true},
	{Name: "created_at_dt", Type: "TEXT", NotNull: true},
}

// WorkerStateColumns is the 18 columns of worker_state, in table order.
var WorkerStateColumns = []Column{
	{Name: "id", Type: "INTEGER", PrimaryKey: true},
	{Name: "uptime_seconds", Type: "REAL"},
	{Name: "assigned_partitions", Type: "TEXT"},
	{Name: "partition_count", Type: "INTEGER"},
	{Name: "pool_active", Type: "INTEGER"},
	{Name: "pool_max", Type: "INTEGER"},
	{Name: "total_queued", Type: "INTEGER"},
	{Name: "consumed_count", Type: "INTEGER"},
	{Name: "completed_count", Type: "INTEGER"},
	{Name: "failed_count", Type: "INTEGER"},
	{Name: "produced_count", Type: "INTEGER"},
	{Name: "committed_count", Type: "INTEGER"},
	{Name: "paused", Type: "INTEGER"},
	{Name: "health_state", Type: "TEXT"},
	{Name: "loop_lag_ms", Type: "REAL"},
	{Name: "throughput", Type: "TEXT"},
	{Name: "updated_at", Type: "REAL", NotNull: true},
	{Name: "updated_at_dt", Type: "TEXT", NotNull: true},
}
