-- Annotation jobs on PostgreSQL: the tables of SQLite's migrations/sqlite/0002, plus the lease that lets several
-- servers share one queue.
--
-- A server runs a job only while it holds the job's lease: `owner` (the server's node id) and `lease_until_ms`
-- (the database's clock, milliseconds since the epoch). The owner renews the lease while it runs the job; a
-- server that dies stops renewing, the lease runs out, and another server claims the job (`SELECT ... FOR
-- UPDATE SKIP LOCKED`) and resumes it from the positions already written. `owner` is NULL for a job nobody holds.
CREATE TABLE annotation_jobs (
    id              TEXT    PRIMARY KEY,
    game            TEXT    NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    settings        TEXT    NOT NULL,
    engine          TEXT    NOT NULL,
    error           TEXT,
    created_ms      BIGINT  NOT NULL,
    updated_ms      BIGINT  NOT NULL,
    owner           TEXT,
    lease_until_ms  BIGINT  NOT NULL DEFAULT 0
);

CREATE INDEX annotation_jobs_status ON annotation_jobs (status, created_ms);

-- One row per game of a job, in the order of the submitted text. A game that could not be read has no
-- record and an error (index, line, token, message as JSON); it has no positions.
CREATE TABLE annotation_games (
    job_id      TEXT    NOT NULL REFERENCES annotation_jobs (id) ON DELETE CASCADE,
    idx         BIGINT  NOT NULL CHECK (idx >= 0),
    record      TEXT,
    error       TEXT,
    positions   BIGINT  NOT NULL CHECK (positions >= 0),
    PRIMARY KEY (job_id, idx)
);

-- One row per evaluated position: `ply` is the number of moves played from the game's start (0 = before the
-- first move). The key makes each position's result exist at most once, however often (and by however many
-- servers) a job is resumed: writes are `ON CONFLICT DO NOTHING`.
CREATE TABLE annotation_positions (
    job_id      TEXT    NOT NULL,
    game_idx    BIGINT  NOT NULL CHECK (game_idx >= 0),
    ply         BIGINT  NOT NULL CHECK (ply >= 0),
    result      TEXT    NOT NULL,
    created_ms  BIGINT  NOT NULL,
    PRIMARY KEY (job_id, game_idx, ply),
    FOREIGN KEY (job_id, game_idx) REFERENCES annotation_games (job_id, idx) ON DELETE CASCADE
);
