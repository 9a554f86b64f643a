-- API keys (issue 15): a client's key is shown once when it is made; the store keeps only its SHA-256 digest
-- (64 hex digits), so a stolen database does not give working keys. `rate` is the key's token-bucket refill in
-- cost units per second and `burst` the bucket's size; `quota_positions` the positions its annotation jobs may
-- evaluate per UTC day (NULL: no quota). A revoked key keeps its row (and its name) with `revoked_ms` set.
CREATE TABLE api_keys (
    name             TEXT    PRIMARY KEY,
    hash             TEXT    NOT NULL UNIQUE,
    rate             DOUBLE PRECISION NOT NULL CHECK (rate > 0),
    burst            BIGINT  NOT NULL CHECK (burst > 0),
    quota_positions  BIGINT  CHECK (quota_positions >= 0),
    created_ms       BIGINT  NOT NULL,
    revoked_ms       BIGINT
);

-- Positions charged to a key's daily quota: one row per key and UTC day (days since 1970-01-01). The charge is
-- one conditional upsert, so concurrent submissions never overdraw the quota.
CREATE TABLE api_key_usage (
    name       TEXT    NOT NULL REFERENCES api_keys (name) ON DELETE CASCADE,
    day        BIGINT  NOT NULL,
    positions  BIGINT  NOT NULL CHECK (positions >= 0),
    PRIMARY KEY (name, day)
);

-- The key that created an annotation job (its name; `key_name`, as `owner` on PostgreSQL is the server holding
-- the job's lease); NULL for a job made without a key, which anyone who
-- knows its id may read. Other keys are told such a job does not exist.
ALTER TABLE annotation_jobs ADD COLUMN key_name TEXT;
