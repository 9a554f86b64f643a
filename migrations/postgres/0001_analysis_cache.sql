-- The analysis cache on PostgreSQL: the same table as SQLite's (migrations/sqlite/0001), for several servers
-- sharing one cache.
--
-- One row per (game, normalised position, MultiPV count, engine version); the engine version is part of the key
-- so that a new engine never serves an older engine's scores as its own. Scalar results are columns; the lines
-- are a JSON array in `lines` (text: the store decodes it itself and removes a row it cannot decode).
-- `revision` grows by one at each overwrite, so that a row found undecodable can be removed without touching a
-- newer result written to it in the meantime. Integers are 64-bit and never negative.
CREATE TABLE analysis_cache (
    id          BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
