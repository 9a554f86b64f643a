-- Annotation jobs: a batch of games whose every position is evaluated, written as each position finishes so
-- that a server stopped (or killed) mid-job resumes it on restart and redoes at most the positions in flight.
--
-- The store knows no game: records and results are JSON written by the annotation module (positions and moves
-- in the game's main notation). `status` is one of queued, running, done, failed, cancelled.
CREATE TABLE annotation_jobs (
    id          TEXT    PRIMARY KEY,
    game        TEXT    NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    settings    TEXT    NOT NULL,
    engine      TEXT    NOT NULL,
    error       TEXT,
    created_ms  BIGINT  NOT NULL,
    updated_ms  BIGINT  NOT NULL
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
-- first move). The key makes each position's result exist at most once, however often a job is resumed.
CREATE TABLE annotation_positions (
    job_id      TEXT    NOT NULL,
    game_idx    BIGINT  NOT NULL CHECK (game_idx >= 0),
    ply         BIGINT  NOT NULL CHECK (ply >= 0),
    result      TEXT    NOT NULL,
    created_ms  BIGINT  NOT NULL,
    PRIMARY KEY (job_id, game_idx, ply),
    FOREIGN KEY (job_id, game_idx) REFERENCES annotation_games (job_id, idx) ON DELETE CASCADE
);
