-- table events ON events
CREATE TABLE events (
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
);

-- index idx_events_dt ON events
CREATE INDEX idx_events_dt ON events(dt);

-- index idx_events_event ON events
CREATE INDEX idx_events_event ON events(event);

-- index idx_events_partition ON events
CREATE INDEX idx_events_partition ON events(partition);

-- index idx_events_task_id ON events
CREATE INDEX idx_events_task_id ON events(task_id);

-- index idx_events_ts ON events
CREATE INDEX idx_events_ts ON events(ts);

-- index idx_events_worker ON events
CREATE INDEX idx_events_worker ON events(worker_id);

-- index idx_events_worker_ts ON events
CREATE INDEX idx_events_worker_ts ON events(worker_id, ts);

-- index idx_states_updated ON worker_states
CREATE INDEX idx_states_updated ON worker_states(updated_at);

-- index idx_states_worker ON worker_states
CREATE INDEX idx_states_worker ON worker_states(worker_id);

-- table sqlite_sequence ON sqlite_sequence
CREATE TABLE sqlite_sequence(name,seq);

-- table worker_states ON worker_states
CREATE TABLE worker_states (
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
);

-- table workers ON workers
CREATE TABLE workers (
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
);
