-- table events ON events
CREATE TABLE events (
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
);

-- index idx_events_dt ON events
CREATE INDEX idx_events_dt ON events(dt);

-- index idx_events_labels ON events
CREATE INDEX idx_events_labels ON events(labels) WHERE labels IS NOT NULL;

-- index idx_events_origin ON events
CREATE INDEX idx_events_origin ON events(origin);

-- index idx_events_partition_offset ON events
CREATE INDEX idx_events_partition_offset ON events(partition, offset);

-- index idx_events_request_id ON events
CREATE INDEX idx_events_request_id ON events(request_id) WHERE request_id IS NOT NULL;

-- index idx_events_task_id ON events
CREATE INDEX idx_events_task_id ON events(task_id);

-- index idx_events_ts ON events
CREATE INDEX idx_events_ts ON events(ts);

-- index idx_events_type ON events
CREATE INDEX idx_events_type ON events(event);

-- index idx_worker_state_updated ON worker_state
CREATE INDEX idx_worker_state_updated ON worker_state(updated_at);

-- table sqlite_sequence ON sqlite_sequence
CREATE TABLE sqlite_sequence(name,seq);

-- table worker_config ON worker_config
CREATE TABLE worker_config (
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
);

-- table worker_state ON worker_state
CREATE TABLE worker_state (
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
);
