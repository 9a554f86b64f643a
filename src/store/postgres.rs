//! The PostgreSQL backend: the sibling of `sqlite.rs` for several servers sharing one cache and one annotation
//! job queue. Every SQL statement and every PostgreSQL-specific setting of the store is in this file.
//!
//! One pool of a few connections. When the database goes away, operations fail after [`ACQUIRE_TIMEOUT`]
//! (the callers answer 503 and `/readyz` fails); the pool reconnects by itself when it comes back, since every
//! connection is tested before it is handed out and a broken one is replaced.
//!
//! Jobs carry a lease (owner node id, expiry by the database's clock) so that several servers can share the
//! queue: see `migrations/postgres/0002_annotation_jobs.sql`.

use std::str::FromStr;
use std::time::{Duration, Instant};

use sqlx::migrate::{MigrateError, Migrator};
use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{Postgres, Row, Transaction};
use tracing::{debug, warn};

use super::codec::{self, Raw};
use super::jobs::{JOB_COLUMNS, JobGameRow, JobRow, JobStatus, NewJob, PositionRow, job_row};
use super::keys::{KEY_COLUMNS, KeyRow, NewKey, key_row};
use super::{CacheKey, CachedAnalysis, StoreError};

static MIGRATOR: Migrator = sqlx::migrate!("./migrations/postgres");

/// How long a caller waits for a connection (including reconnecting) before the operation fails: short, so
/// that an outage is answered 503 quickly instead of holding requests.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);
/// Connections of one server.
const CONNECTIONS: u32 = 8;
/// Milliseconds since the epoch by the database's clock (one clock for every server's leases).
macro_rules! db_now_ms {
    () => {
        "(extract(epoch from clock_timestamp()) * 1000)::bigint"
    };
}

const SELECT: &str = "SELECT id, revision, depth, seldepth, nodes, time_ms, bestmove, lines FROM analysis_cache \
     WHERE game = $1 AND position = $2 AND multipv = $3 AND engine = $4";

/// Insert, or overwrite only with a strictly deeper result (or, when asked, one as deep: a refresh); the comparison is in the statement, so concurrent
/// writers of one key (on any server) cannot lose the deepest result.
const UPSERT: &str = "INSERT INTO analysis_cache \
     (game, position, multipv, engine, depth, seldepth, nodes, time_ms, bestmove, lines, updated_ms) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
     ON CONFLICT (game, position, multipv, engine) DO UPDATE SET \
     depth = excluded.depth, seldepth = excluded.seldepth, nodes = excluded.nodes, time_ms = excluded.time_ms, \
     bestmove = excluded.bestmove, lines = excluded.lines, updated_ms = excluded.updated_ms, \
     revision = analysis_cache.revision + 1 \
     WHERE excluded.depth > analysis_cache.depth OR ($12 AND excluded.depth = analysis_cache.depth)";

const DELETE_CORRUPT: &str = "DELETE FROM analysis_cache WHERE id = $1 AND revision = $2";

/// Take the oldest job nobody holds (no owner, or a lease run out) but those of `$3`, skipping rows another
/// server is claiming at this moment.
const CLAIM: &str = concat!(
    "UPDATE annotation_jobs SET owner = $1, waiting = NULL, lease_until_ms = ",
    db_now_ms!(),
    " + $2 WHERE id = (SELECT id FROM annotation_jobs WHERE status IN ('queued', 'running') \
     AND NOT (id = ANY($3)) AND (owner IS NULL OR lease_until_ms < ",
    db_now_ms!(),
    ") ORDER BY created_ms, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id"
);

const RENEW: &str = concat!(
    "UPDATE annotation_jobs SET lease_until_ms = ",
    db_now_ms!(),
    " + $3 WHERE id = $1 AND owner = $2 RETURNING status"
);

/// Let a job go, saying why it waits (`$3`, NULL when it waits for nothing but a server's room).
const RELEASE: &str =
    "UPDATE annotation_jobs SET owner = NULL, lease_until_ms = 0, waiting = $3 WHERE id = $1 AND owner = $2";

pub(crate) struct PostgresBackend {
    pool: PgPool,
    location: String,
    breaker: Breaker,
}

/// The breaker's first break after the database failed to give a connection; doubled at each failure while
/// the outage lasts.
const FIRST_BREAK: Duration = Duration::from_secs(1);
/// The breaker's longest break.
const LONGEST_BREAK: Duration = Duration::from_secs(8);

/// A circuit breaker in front of the pool. When the database is away every caller would wait
/// [`ACQUIRE_TIMEOUT`] for a connection, one after the other: an analysis its lookup and its write (six
/// seconds), every job's lease renewal, every key check. Once a connection could not be had, callers are told at
/// once that the database is unreachable for a while (the break); when the break is over, one caller tries
/// (the others are still told at once until it has its answer), and its success closes the breaker, its
/// failure starts a longer break. The readiness probe always tries ([`PostgresBackend::ping`]).
#[derive(Default)]
struct Breaker {
    state: std::sync::Mutex<BreakerState>,
}

#[derive(Default)]
struct BreakerState {
    /// Until when callers are told the database is unreachable; `None` while the breaker is closed.
    open_until: Option<Instant>,
    /// The next break's length (zero: the first break's).
    next: Duration,
}

impl Breaker {
    fn state(&self) -> std::sync::MutexGuard<'_, BreakerState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether a caller may try the database at `now`. A caller let through after a break is the one trying:
    /// the others are told the database is unreachable until it has its answer (at most the pool's wait).
    fn admit(&self, now: Instant) -> Result<(), StoreError> {
        let mut state = self.state();
        match state.open_until {
            None => Ok(()),
            Some(until) if now < until => Err(StoreError::Unreachable { again_in: until - now }),
            Some(_) => {
                state.open_until = Some(now + ACQUIRE_TIMEOUT + FIRST_BREAK);
                Ok(())
            }
        }
    }

    /// What getting a connection at `now` gave: a success closes the breaker, an outage opens it.
    fn record<T>(&self, outcome: &Result<T, sqlx::Error>, now: Instant) {
        let mut state = self.state();
        match outcome {
            Ok(_) => *state = BreakerState::default(),
            Err(error) if is_outage(error) => {
                let length = state.next.max(FIRST_BREAK);
                if state.open_until.is_none() {
                    warn!(%error, "the database does not answer; callers are told so at once for a while");
                }
                state.open_until = Some(now + length);
                state.next = (length * 2).min(LONGEST_BREAK);
            }
            // A refusal that says nothing of the database being away (a bad statement): no break.
            Err(_) => {}
        }
    }
}

/// Whether an error in getting a connection means the database cannot be reached (as opposed to a refusal
/// by a database that answers).
fn is_outage(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::Tls(_) => true,
        // Connection exceptions (class 08), and the server shutting down or starting (57P01-57P03).
        sqlx::Error::Database(error) => {
            error.code().is_some_and(|code| code.starts_with("08") || ["57P01", "57P02", "57P03"].contains(&&*code))
        }
        _ => false,
    }
}

/// Whether `target` names a PostgreSQL database.
pub(crate) fn is_postgres(target: &str) -> bool {
    target.starts_with("postgres://") || target.starts_with("postgresql://")
}

/// The URL without its password (for logs and messages).
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

fn open_error(location: &str, source: sqlx::Error) -> StoreError {
    StoreError::Open { path: location.to_string(), source }
}

fn query_error(error: sqlx::Error) -> StoreError {
    match error {
        sqlx::Error::PoolClosed => StoreError::Closed,
        error => StoreError::Query(error),
    }
}

fn to_i64(value: u32) -> i64 {
    i64::from(value)
}

fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 4).max(1)
}

fn statuses(list: &[JobStatus]) -> Vec<String> {
    list.iter().map(|s| s.as_str().to_string()).collect()
}

impl PostgresBackend {
    pub(crate) async fn open(target: &str) -> Result<PostgresBackend, StoreError> {
        let location = redact(target);
        let options = PgConnectOptions::from_str(target).map_err(|e| open_error(&location, e))?;
        let pool = PgPoolOptions::new()
            .max_connections(CONNECTIONS)
            .min_connections(0)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .idle_timeout(Some(Duration::from_secs(60)))
            .test_before_acquire(true)
            .connect_with(options)
            .await
            .map_err(|e| open_error(&location, e))?;
        // Servers starting together: the migrator holds an advisory lock, so one of them migrates.
        if let Err(error) = MIGRATOR.run(&pool).await {
            pool.close().await;
            return Err(match error {
                MigrateError::VersionMissing(version) => StoreError::NewerSchema { path: location, version },
                error => StoreError::Migrate(error),
            });
        }
        debug!(location = %location, "analysis store open (PostgreSQL)");
        Ok(PostgresBackend { pool, location, breaker: Breaker::default() })
    }

    pub(crate) fn location(&self) -> &str {
        &self.location
    }

    /// The stored result of `key`; one that does not decode, or that `valid` refuses, is removed and reported
    /// as [`StoreError::Corrupt`].
    pub(crate) async fn fetch(
        &self,
        engine: &str,
        key: &CacheKey,
        valid: &(dyn Fn(&CachedAnalysis) -> Result<(), String> + Sync),
    ) -> Result<Option<CachedAnalysis>, StoreError> {
        let mut conn = self.conn().await?;
        let row = sqlx::query(SELECT)
            .bind(&key.game)
            .bind(&key.position)
            .bind(to_i64(key.multipv))
            .bind(engine)
            .fetch_optional(&mut *conn)
            .await
            .map_err(query_error)?;
        let Some(row) = row else { return Ok(None) };
        let raw = (|| -> Result<Raw, sqlx::Error> {
            Ok(Raw {
                depth: row.try_get("depth")?,
                seldepth: row.try_get("seldepth")?,
                nodes: row.try_get("nodes")?,
                time_ms: row.try_get("time_ms")?,
                bestmove: row.try_get("bestmove")?,
                lines: row.try_get("lines")?,
            })
        })();
        let problem =
            match raw.map_err(|error| error.to_string()).and_then(codec::decode).and_then(|v| valid(&v).map(|()| v)) {
                Ok(value) => return Ok(Some(value)),
                Err(problem) => problem,
            };
        let id: Option<i64> = row.try_get("id").ok();
        let revision: Option<i64> = row.try_get("revision").ok();
        let what = format!(
            "analysis_cache row {} (game {}, multipv {}): {problem}",
            id.map_or_else(|| "?".to_string(), |id| id.to_string()),
            key.game,
            key.multipv
        );
        warn!(store = %self.location, %what, "removing an undecodable or invalid analysis row");
        if let (Some(id), Some(revision)) = (id, revision)
            && let Err(error) = sqlx::query(DELETE_CORRUPT).bind(id).bind(revision).execute(&mut *conn).await
        {
            warn!(store = %self.location, %error, "could not remove the undecodable row");
        }
        Err(StoreError::Corrupt { what })
    }

    pub(crate) async fn upsert(
        &self,
        engine: &str,
        key: &CacheKey,
        value: &CachedAnalysis,
        replace_equal: bool,
    ) -> Result<bool, StoreError> {
        let encoded = codec::encode(value)?;
        let result = sqlx::query(UPSERT)
            .bind(&key.game)
            .bind(&key.position)
            .bind(to_i64(key.multipv))
            .bind(engine)
            .bind(encoded.depth)
            .bind(encoded.seldepth)
            .bind(encoded.nodes)
            .bind(encoded.time_ms)
            .bind(encoded.bestmove)
            .bind(encoded.lines)
            .bind(super::sqlite::now_ms())
            .bind(replace_equal)
            .execute(&mut *self.conn().await?)
            .await
            .map_err(query_error)?;
        Ok(result.rows_affected() > 0)
    }

    /// Rows of the analysis cache by engine and game, in that order.
    pub(crate) async fn cache_engines(&self) -> Result<Vec<(String, String, i64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT engine, game, COUNT(*) FROM analysis_cache GROUP BY engine, game ORDER BY engine, game",
        )
        .fetch_all(&mut *self.conn().await?)
        .await
        .map_err(query_error)?;
        rows.iter()
            .map(|row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)))
            .collect::<Result<_, sqlx::Error>>()
            .map_err(query_error)
    }

    /// The lowest and highest id of the analysis cache's rows (none when it is empty).
    pub(crate) async fn cache_ids(&self) -> Result<Option<(i64, i64)>, StoreError> {
        let row = sqlx::query("SELECT MIN(id), MAX(id) FROM analysis_cache")
            .fetch_one(&mut *self.conn().await?)
            .await
            .map_err(query_error)?;
        let low: Option<i64> = row.try_get(0).map_err(query_error)?;
        let high: Option<i64> = row.try_get(1).map_err(query_error)?;
        Ok(low.zip(high))
    }

    /// Delete the cached results of `engine` whose ids are above `after` and at most `upto`; how many.
    pub(crate) async fn delete_cache_rows(&self, engine: &str, after: i64, upto: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM analysis_cache WHERE engine = $1 AND id > $2 AND id <= $3")
            .bind(engine)
            .bind(after)
            .bind(upto)
            .execute(&mut *self.conn().await?)
            .await
            .map_err(query_error)?;
        Ok(done.rows_affected())
    }

    /// Ask the database to answer. Unlike every other operation, asked even while the breaker is open (it is
    /// the readiness probe): its answer closes the breaker as soon as the database is back.
    pub(crate) async fn ping(&self) -> Result<(), StoreError> {
        let acquired = self.pool.acquire().await;
        self.breaker.record(&acquired, Instant::now());
        sqlx::query("SELECT 1").execute(&mut *acquired.map_err(query_error)?).await.map_err(query_error)?;
        Ok(())
    }

    /// A connection, unless the breaker says the database is unreachable; its acquisition tells the breaker.
    async fn conn(&self) -> Result<PoolConnection<Postgres>, StoreError> {
        self.breaker.admit(Instant::now())?;
        let acquired = self.pool.acquire().await;
        self.breaker.record(&acquired, Instant::now());
        acquired.map_err(query_error)
    }

    /// A transaction, unless the breaker says the database is unreachable; its start tells the breaker.
    async fn begin(&self) -> Result<Transaction<'static, Postgres>, StoreError> {
        self.breaker.admit(Instant::now())?;
        let begun = self.pool.begin().await;
        self.breaker.record(&begun, Instant::now());
        begun.map_err(query_error)
    }

    pub(crate) async fn close(&self) {
        self.pool.close().await;
        debug!(store = %self.location, "analysis store closed");
    }

    // ---- annotation jobs ----

    async fn insert_job(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        engine: &str,
        job: &NewJob,
        owner: Option<(&str, Duration)>,
    ) -> Result<(), StoreError> {
        let now = super::sqlite::now_ms();
        let (owner, lease) = match owner {
            Some((node, lease)) => (Some(node), lease_ms(lease)),
            None => (None, 0),
        };
        sqlx::query(concat!(
            "INSERT INTO annotation_jobs \
             (id, game, status, settings, engine, error, created_ms, updated_ms, owner, lease_until_ms, key_name) \
             VALUES ($1, $2, 'queued', $3, $4, NULL, $5, $6, $7, CASE WHEN $7::text IS NULL THEN 0 ELSE ",
            db_now_ms!(),
            " + $8 END, $9)"
        ))
        .bind(&job.id)
        .bind(&job.game)
        .bind(&job.settings)
        .bind(engine)
        .bind(now)
        .bind(now)
        .bind(owner)
        .bind(lease)
        .bind(&job.owner)
        .execute(&mut **tx)
        .await
        .map_err(query_error)?;
        for (idx, game) in job.games.iter().enumerate() {
            sqlx::query(
                "INSERT INTO annotation_games (job_id, idx, record, error, positions) VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(&job.id)
            .bind(i64::try_from(idx).unwrap_or(i64::MAX))
            .bind(&game.record)
            .bind(&game.error)
            .bind(to_i64(game.positions))
            .execute(&mut **tx)
            .await
            .map_err(query_error)?;
        }
        Ok(())
    }

    /// Create a job and its games in one transaction, held by `owner` when given.
    pub(crate) async fn create_job(
        &self,
        engine: &str,
        job: &NewJob,
        owner: Option<(&str, Duration)>,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin().await?;
        self.insert_job(&mut tx, engine, job, owner).await?;
        tx.commit().await.map_err(query_error)?;
        Ok(())
    }

    pub(crate) async fn job(&self, id: &str) -> Result<Option<JobRow>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {JOB_COLUMNS}, waiting FROM annotation_jobs WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&mut *self.conn().await?)
        .await
        .map_err(query_error)?;
        row.map(|row| job_row(&row, id, true)).transpose()
    }

    /// The jobs made with key `owner`, newest first, at most `limit`.
    pub(crate) async fn jobs_of(&self, owner: &str, limit: u32) -> Result<Vec<JobRow>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {JOB_COLUMNS}, waiting FROM annotation_jobs WHERE key_name = $1 \
             ORDER BY created_ms DESC, id DESC LIMIT $2"
        )))
        .bind(owner)
        .bind(i64::from(limit))
        .fetch_all(&mut *self.conn().await?)
        .await
        .map_err(query_error)?;
        rows.iter().map(|row| job_row(row, &format!("of key {owner}"), true)).collect()
    }

    /// Remove a job with its games and results; true when there was one.
    pub(crate) async fn delete_job(&self, id: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM annotation_jobs WHERE id = $1")
            .bind(id)
            .execute(&mut *self.conn().await?)
            .await
            .map_err(query_error)?;
        Ok(done.rows_affected() > 0)
    }

    /// Remove the jobs that are over (done, failed, cancelled) and unchanged since `before_ms`; how many.
    pub(crate) async fn delete_jobs_over_before(&self, before_ms: i64) -> Result<u64, StoreError> {
        let done = sqlx::query(
            "DELETE FROM annotation_jobs WHERE status IN ('done', 'failed', 'cancelled') AND updated_ms < $1",
        )
        .bind(before_ms)
        .execute(&mut *self.conn().await?)
        .await
        .map_err(query_error)?;
        Ok(done.rows_affected())
    }

    pub(crate) async fn job_games(&self, id: &str) -> Result<Vec<JobGameRow>, StoreError> {
        let rows =
            sqlx::query("SELECT idx, record, error, positions FROM annotation_games WHERE job_id = $1 ORDER BY idx")
                .bind(id)
                .fetch_all(&mut *self.conn().await?)
                .await
                .map_err(query_error)?;
        let corrupt = |e: String| StoreError::Corrupt { what: format!("annotation job {id} game: {e}") };
        rows.iter()
            .map(|row| {
                let idx: i64 = row.try_get("idx").map_err(|e| corrupt(e.to_string()))?;
                let positions: i64 = row.try_get("positions").map_err(|e| corrupt(e.to_string()))?;
                Ok(JobGameRow {
                    idx: u32::try_from(idx).map_err(|_| corrupt(format!("index {idx}")))?,
                    record: row.try_get("record").map_err(|e| corrupt(e.to_string()))?,
                    error: row.try_get("error").map_err(|e| corrupt(e.to_string()))?,
                    positions: u32::try_from(positions).map_err(|_| corrupt(format!("positions {positions}")))?,
                })
            })
            .collect()
    }

    pub(crate) async fn position_count(&self, id: &str) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM annotation_positions WHERE job_id = $1")
            .bind(id)
            .fetch_one(&mut *self.conn().await?)
            .await
            .map_err(query_error)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    pub(crate) async fn job_positions(&self, id: &str) -> Result<Vec<PositionRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT game_idx, ply, result FROM annotation_positions WHERE job_id = $1 ORDER BY game_idx, ply",
        )
        .bind(id)
        .fetch_all(&mut *self.conn().await?)
        .await
        .map_err(query_error)?;
        let corrupt = |e: String| StoreError::Corrupt { what: format!("annotation job {id} position: {e}") };
        rows.iter()
            .map(|row| {
                let game_idx: i64 = row.try_get("game_idx").map_err(|e| corrupt(e.to_string()))?;
                let ply: i64 = row.try_get("ply").map_err(|e| corrupt(e.to_string()))?;
                Ok(PositionRow {
                    game_idx: u32::try_from(game_idx).map_err(|_| corrupt(format!("game {game_idx}")))?,
                    ply: u32::try_from(ply).map_err(|_| corrupt(format!("ply {ply}")))?,
                    result: row.try_get("result").map_err(|e| corrupt(e.to_string()))?,
                })
            })
            .collect()
    }

    /// Write one position's result unless it is already there (by any server); true when written.
    pub(crate) async fn delete_position(&self, id: &str, game_idx: u32, ply: u32) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM annotation_positions WHERE job_id = $1 AND game_idx = $2 AND ply = $3")
            .bind(id)
            .bind(to_i64(game_idx))
            .bind(to_i64(ply))
            .execute(&mut *self.conn().await?)
            .await
            .map_err(query_error)?;
        Ok(done.rows_affected() > 0)
    }

    pub(crate) async fn put_position(
        &self,
        id: &str,
        game_idx: u32,
        ply: u32,
        result: &str,
    ) -> Result<bool, StoreError> {
        let now = super::sqlite::now_ms();
        let mut tx = self.begin().await?;
        let done = sqlx::query(
            "INSERT INTO annotation_positions (job_id, game_idx, ply, result, created_ms) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (job_id, game_idx, ply) DO NOTHING",
        )
        .bind(id)
        .bind(to_i64(game_idx))
        .bind(to_i64(ply))
        .bind(result)
        .bind(now)
        .execute(&mut *tx)
        .await
        .map_err(query_error)?;
        if done.rows_affected() > 0 {
            sqlx::query("UPDATE annotation_jobs SET updated_ms = $1 WHERE id = $2")
                .bind(now)
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(query_error)?;
        }
        tx.commit().await.map_err(query_error)?;
        Ok(done.rows_affected() > 0)
    }

    pub(crate) async fn set_job_status(
        &self,
        id: &str,
        from: &[JobStatus],
        to: JobStatus,
        error: Option<&str>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE annotation_jobs SET status = $1, error = $2, updated_ms = $3 WHERE id = $4 AND status = ANY($5)",
        )
        .bind(to.as_str())
        .bind(error)
        .bind(super::sqlite::now_ms())
        .bind(id)
        .bind(statuses(from))
        .execute(&mut *self.conn().await?)
        .await
        .map_err(query_error)?;
        Ok(done.rows_affected() > 0)
    }

    pub(crate) async fn jobs_with_status(&self, list: &[JobStatus]) -> Result<Vec<String>, StoreError> {
        let rows = sqlx::query("SELECT id FROM annotation_jobs WHERE status = ANY($1) ORDER BY created_ms, id")
            .bind(statuses(list))
            .fetch_all(&mut *self.conn().await?)
            .await
            .map_err(query_error)?;
        rows.iter().map(|row| row.try_get::<String, _>("id").map_err(query_error)).collect()
    }

    // ---- API keys (the same statements as SQLite's, with PostgreSQL's placeholders) ----

    /// Insert a key; false when the name is taken.
    pub(crate) async fn create_key(&self, key: &NewKey) -> Result<bool, StoreError> {
        let quota = key.quota_positions.map(|q| i64::try_from(q).unwrap_or(i64::MAX));
        let done = sqlx::query(
            "INSERT INTO api_keys (name, hash, rate, burst, quota_positions, created_ms, revoked_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, NULL) ON CONFLICT (name) DO NOTHING",
        )
        .bind(&key.name)
        .bind(&key.hash)
        .bind(key.rate)
        .bind(i64::from(key.burst))
        .bind(quota)
        .bind(super::sqlite::now_ms())
        .execute(&mut *self.conn().await?)
        .await
        .map_err(query_error)?;
        Ok(done.rows_affected() > 0)
    }

    /// Every key by name, or the one with digest `hash`.
    pub(crate) async fn keys(&self, hash: Option<&str>) -> Result<Vec<KeyRow>, StoreError> {
        let rows = match hash {
            Some(hash) => sqlx::query(sqlx::AssertSqlSafe(format!("{KEY_COLUMNS} WHERE hash = $1"))).bind(hash),
            None => sqlx::query(sqlx::AssertSqlSafe(format!("{KEY_COLUMNS} ORDER BY name"))),
        }
        .fetch_all(&mut *self.conn().await?)
        .await
        .map_err(query_error)?;
        rows.iter().map(key_row).collect()
    }

    /// Mark a key revoked; false when unknown or already revoked.
    pub(crate) async fn revoke_key(&self, name: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("UPDATE api_keys SET revoked_ms = $1 WHERE name = $2 AND revoked_ms IS NULL")
            .bind(super::sqlite::now_ms())
            .bind(name)
            .execute(&mut *self.conn().await?)
            .await
            .map_err(query_error)?;
        Ok(done.rows_affected() > 0)
    }

    /// Charge `positions` to a key's day if it stays within `quota` (one conditional upsert, atomic across
    /// servers); whether it was charged, and the day's total after.
    pub(crate) async fn charge_key_quota(
        &self,
        name: &str,
        day: i64,
        positions: u64,
        quota: u64,
    ) -> Result<(bool, u64), StoreError> {
        let positions = i64::try_from(positions).unwrap_or(i64::MAX);
        let quota = i64::try_from(quota).unwrap_or(i64::MAX);
        let charged = positions <= quota
            && sqlx::query(
                "INSERT INTO api_key_usage (name, day, positions) VALUES ($1, $2, $3) \
                 ON CONFLICT (name, day) DO UPDATE SET positions = api_key_usage.positions + excluded.positions \
                 WHERE api_key_usage.positions + excluded.positions <= $4",
            )
            .bind(name)
            .bind(day)
            .bind(positions)
            .bind(quota)
            .execute(&mut *self.conn().await?)
            .await
            .map_err(query_error)?
            .rows_affected()
                > 0;
        let used: Option<i64> = sqlx::query_scalar("SELECT positions FROM api_key_usage WHERE name = $1 AND day = $2")
            .bind(name)
            .bind(day)
            .fetch_optional(&mut *self.conn().await?)
            .await
            .map_err(query_error)?;
        Ok((charged, used.map_or(0, |u| u64::try_from(u).unwrap_or(0))))
    }

    pub(crate) async fn refund_key_quota(&self, name: &str, day: i64, positions: u64) -> Result<(), StoreError> {
        sqlx::query("UPDATE api_key_usage SET positions = GREATEST(positions - $3, 0) WHERE name = $1 AND day = $2")
            .bind(name)
            .bind(day)
            .bind(i64::try_from(positions).unwrap_or(i64::MAX))
            .execute(&mut *self.conn().await?)
            .await
            .map_err(query_error)?;
        Ok(())
    }

    /// Take the oldest queued or running job nobody holds, for `owner`, for `lease`.
    pub(crate) async fn claim_job(
        &self,
        owner: &str,
        lease: Duration,
        skip: &[String],
    ) -> Result<Option<String>, StoreError> {
        let row = sqlx::query(CLAIM)
            .bind(owner)
            .bind(lease_ms(lease))
            .bind(skip)
            .fetch_optional(&mut *self.conn().await?)
            .await
            .map_err(query_error)?;
        row.map(|row| row.try_get::<String, _>("id").map_err(query_error)).transpose()
    }

    /// Extend `owner`'s lease on a job; the job's status, or `None` when `owner` does not hold it any more.
    pub(crate) async fn renew_job(
        &self,
        id: &str,
        owner: &str,
        lease: Duration,
    ) -> Result<Option<JobStatus>, StoreError> {
        let row = sqlx::query(RENEW)
            .bind(id)
            .bind(owner)
            .bind(lease_ms(lease))
            .fetch_optional(&mut *self.conn().await?)
            .await
            .map_err(query_error)?;
        let Some(row) = row else { return Ok(None) };
        let status: String = row.try_get("status").map_err(query_error)?;
        status.parse::<JobStatus>().map(Some).map_err(|e| StoreError::Corrupt { what: format!("job {id}: {e}") })
    }

    /// Give up `owner`'s lease on a job (another server may claim it at once), noting why it waits; true when
    /// it was held.
    pub(crate) async fn release_job(&self, id: &str, owner: &str, waiting: Option<&str>) -> Result<bool, StoreError> {
        let done = sqlx::query(RELEASE)
            .bind(id)
            .bind(owner)
            .bind(waiting)
            .execute(&mut *self.conn().await?)
            .await
            .map_err(query_error)?;
        Ok(done.rows_affected() > 0)
    }

    #[cfg(test)]
    pub(crate) fn pool(&self) -> &PgPool {
        &self.pool
    }
}

#[cfg(test)]
mod tests {
    use super::{Breaker, Duration, Instant, StoreError, is_postgres, redact};

    #[test]
    fn urls() {
        assert!(is_postgres("postgres://u@h/db") && is_postgres("postgresql://h/db"));
        assert!(!is_postgres("./kibitz.db") && !is_postgres("sqlite://x.db"));
        assert_eq!(redact("postgres://u:secret@h:5432/db?x=1"), "postgres://u:***@h:5432/db?x=1");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("postgres://h/db"), "postgres://h/db");
    }

    #[test]
    fn the_breaker_answers_at_once_during_an_outage_and_lets_one_caller_try_after_each_break() {
        let breaker = Breaker::default();
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let down: Result<(), sqlx::Error> = Err(sqlx::Error::PoolTimedOut);
        let up: Result<(), sqlx::Error> = Ok(());
        let unreachable = |r: Result<(), StoreError>| matches!(r, Err(StoreError::Unreachable { .. }));

        assert!(breaker.admit(at(0)).is_ok());
        breaker.record(&Err::<(), _>(sqlx::Error::RowNotFound), at(0));
        assert!(breaker.admit(at(1)).is_ok(), "a refusal by a database that answers opens nothing");
        breaker.record(&down, at(0));
        // The first break: told at once, with the time left.
        match breaker.admit(at(400)) {
            Err(StoreError::Unreachable { again_in }) => assert_eq!(again_in, Duration::from_millis(600)),
            other => panic!("{other:?}"),
        }
        // After it, one caller tries; the others are told at once until its answer.
        assert!(breaker.admit(at(1000)).is_ok());
        assert!(unreachable(breaker.admit(at(1001))));
        assert!(unreachable(breaker.admit(at(3999))));
        // It failed: a break twice as long.
        breaker.record(&down, at(4000));
        assert!(unreachable(breaker.admit(at(5999))));
        assert!(breaker.admit(at(6000)).is_ok());
        breaker.record(&down, at(9000));
        assert!(unreachable(breaker.admit(at(12_999))));
        // The breaks stop growing at the longest.
        for n in 0..6 {
            let now = 20_000 + n * 20_000;
            assert!(breaker.admit(at(now)).is_ok());
            breaker.record(&down, at(now));
        }
        assert!(unreachable(breaker.admit(at(120_000 + 7_999))));
        assert!(breaker.admit(at(120_000 + 8_000)).is_ok());
        // The database answers (the readiness probe, or the caller that tried): everyone is let through, and
        // the next outage starts again from the first break.
        breaker.record(&up, at(130_000));
        assert!(breaker.admit(at(130_001)).is_ok());
        assert!(breaker.admit(at(130_002)).is_ok());
        breaker.record(&down, at(140_000));
        assert!(unreachable(breaker.admit(at(140_999))));
        assert!(breaker.admit(at(141_000)).is_ok());
    }
}
