-- table cache_entries ON cache_entries
CREATE TABLE cache_entries (
    key               TEXT    NOT NULL PRIMARY KEY,
    scope             TEXT    NOT NULL CHECK(scope IN ('local','cluster','global')),
    value             TEXT    NOT NULL,
    size_bytes        INTEGER NOT NULL,
    created_at_ms     INTEGER NOT NULL,
    updated_at_ms     INTEGER NOT NULL,
    expires_at_ms     INTEGER,
    origin_worker_id  TEXT    NOT NULL
);

-- index idx_cache_expires ON cache_entries
CREATE INDEX idx_cache_expires
    ON cache_entries(expires_at_ms) WHERE expires_at_ms IS NOT NULL;

-- index idx_cache_scope_updated ON cache_entries
CREATE INDEX idx_cache_scope_updated
    ON cache_entries(scope, updated_at_ms);

-- index sqlite_autoindex_cache_entries_1 ON cache_entries
NULL;
