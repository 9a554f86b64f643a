-- The analysis cache: the deepest result the engine found for one position.
--
-- One row per (game, normalised position, MultiPV count, engine version). The engine version is part of the
-- key so that a new engine never serves an older engine's scores as its own; rows of other versions are simply
-- not seen by it. Scalar results are columns; the lines (moves, score, depth of each) are a JSON array in
-- `lines`. `revision` grows by one at each overwrite, so that a row found undecodable can be removed without
-- touching a newer result written to it in the meantime. Integers are 64-bit and never negative.
--
-- Numbering: 0002 is kept for annotation jobs.
CREATE TABLE analysis_cache (
    id          INTEGER PRIMARY KEY,
    game        TEXT    NOT NULL,
    position    TEXT    NOT NULL,
    multipv     BIGINT  NOT NULL CHECK (multipv >= 0),
    engine      TEXT    NOT NULL,
    depth       BIGINT  NOT NULL CHECK (depth >= 0),
    seldepth    BIGINT  NOT NULL CHECK (seldepth >= 0),
    nodes       BIGINT  NOT NULL CHECK (nodes >= 0),
    time_ms     BIGINT  NOT NULL CHECK (time_ms >= 0),
    bestmove    TEXT,
    lines       TEXT    NOT NULL,
    revision    BIGINT  NOT NULL DEFAULT 1,
    updated_ms  BIGINT  NOT NULL
);

-- The lookup and the upsert both go through the full key.
CREATE UNIQUE INDEX analysis_cache_key ON analysis_cache (game, position, multipv, engine);
