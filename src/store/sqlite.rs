//! The SQLite backend: every SQL statement and every SQLite-specific setting of the store is in this file, so
//! that another backend (PostgreSQL, for several servers sharing one cache) is a sibling of it.
//!
//! Two pools over one file: a writer pool of one connection (SQLite has one writer at a time; queuing writes in
//! the pool is cheaper and fairer than letting connections spin on the busy handler) and a reader pool of a few
//! connections, which read concurrently under WAL. An in-memory database has one pool of one connection kept
//! open for the life of the store (it would vanish with its last connection).

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::migrate::{MigrateError, Migrator};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Executor, Row};
use tracing::{debug, warn};

use super::codec::{self, Raw};
use super::jobs::{JOB_COLUMNS, JobGameRow, JobRow, JobStatus, NewJob, PositionRow, job_row};
use super::keys::{KEY_COLUMNS, KeyRow, NewKey, key_row};
use super::{CacheKey, CachedAnalysis, StoreError};

static MIGRATOR: Migrator = sqlx::migrate!("./migrations/sqlite");

/// How long SQLite itself waits for a lock held by another connection or process.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a caller waits for a free connection before the operation fails.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);
/// Reader connections (reads run concurrently under WAL; the machine has few cores).
const READERS: u32 = 4;

const SELECT: &str = "SELECT id, revision, depth, seldepth, nodes, time_ms, bestmove, lines FROM analysis_cache \
     WHERE game = ? AND position = ? AND multipv = ? AND engine = ?";

/// Insert, or overwrite only with a strictly deeper result (or, when asked, one as deep: a refresh). The comparison is in the statement itself, so
/// concurrent writers of one key cannot lose the deepest result.
const UPSERT: &str = "INSERT INTO analysis_cache \
     (game, position, multipv, engine, depth, seldepth, nodes, time_ms, bestmove, lines, updated_ms) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
     ON CONFLICT (game, position, multipv, engine) DO UPDATE SET \
     depth = excluded.depth, seldepth = excluded.seldepth, nodes = excluded.nodes, time_ms = excluded.time_ms, \
     bestmove = excluded.bestmove, lines = excluded.lines, updated_ms = excluded.updated_ms, \
     revision = analysis_cache.revision + 1 \
     WHERE excluded.depth > analysis_cache.depth OR (? AND excluded.depth = analysis_cache.depth)";

/// Remove a row found undecodable, only if nobody rewrote it since it was read.
const DELETE_CORRUPT: &str = "DELETE FROM analysis_cache WHERE id = ? AND revision = ?";

pub(crate) struct SqliteBackend {
    read: SqlitePool,
    write: SqlitePool,
    memory: bool,
    location: String,
    /// The database file (none in memory).
    path: Option<PathBuf>,
}

/// What a target string names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A file, given as a path or inside a `sqlite:` URL (with its URL options).
    File { url: Option<String>, path: PathBuf },
    /// A private in-memory database (`sqlite::memory:`, `:memory:`, or a URL with `mode=memory`).
    Memory { url: String },
}

impl Target {
    pub(crate) fn parse(target: &str) -> Target {
        if target == ":memory:" {
            return Target::Memory { url: "sqlite::memory:".into() };
        }
        let Some(rest) = target.strip_prefix("sqlite:") else {
            return Target::File { url: None, path: PathBuf::from(target) };
        };
        let rest = rest.strip_prefix("//").unwrap_or(rest);
        let (database, params) = rest.split_once('?').unwrap_or((rest, ""));
        if database == ":memory:" || params.split('&').any(|param| param == "mode=memory") {
            Target::Memory { url: target.into() }
        } else {
            // The file the URL names, percent-decoded as the SQLite driver decodes it (`my%20db.db` is `my db.db`).
            Target::File { url: Some(target.into()), path: percent_decoded(database) }
        }
    }
}

/// `%XX` sequences as the bytes they stand for; a `%` not followed by two hex digits stays as it is.
fn percent_decoded(text: &str) -> PathBuf {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    #[cfg(unix)]
    return PathBuf::from(<std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(out));
    #[cfg(not(unix))]
    return PathBuf::from(String::from_utf8_lossy(&out).into_owned());
}

fn open_error(location: &str, source: sqlx::Error) -> StoreError {
    StoreError::Open { path: location.to_string(), source }
}

/// A query error, with a closed pool reported as [`StoreError::Closed`].
fn query_error(error: sqlx::Error) -> StoreError {
    match error {
        sqlx::Error::PoolClosed => StoreError::Closed,
        error => StoreError::Query(error),
    }
}

/// Whether a query error is SQLite's store being unavailable for a while rather than refusing this query for
/// good: the file locked by another program past the busy wait, a full disk, an I/O error, a file that cannot
/// be opened (its directory moved), no connection free in time.
pub(crate) fn is_outage(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) => true,
        // SQLITE_BUSY, _LOCKED, _IOERR, _FULL, _CANTOPEN, with their extended codes (the low byte).
        sqlx::Error::Database(db) => db
            .code()
            .and_then(|code| code.parse::<i64>().ok())
            .is_some_and(|c| matches!(c & 0xff, 5 | 6 | 10 | 13 | 14)),
        _ => false,
    }
}

pub(crate) fn now_ms() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

fn to_i64(value: u32) -> i64 {
    i64::from(value)
}

impl SqliteBackend {
    pub(crate) async fn open(target: &str) -> Result<SqliteBackend, StoreError> {
        let parsed = Target::parse(target);
        let (options, memory, location) = match &parsed {
            Target::Memory { url } => {
                let options = SqliteConnectOptions::from_str(url).map_err(|e| open_error(target, e))?;
                (options, true, target.to_string())
            }
            Target::File { url, path } => {
                let location = path.display().to_string();
                check_directory(path).map_err(|e| open_error(&location, e))?;
                let options = match url {
                    Some(url) => SqliteConnectOptions::from_str(url).map_err(|e| open_error(&location, e))?,
                    None => SqliteConnectOptions::new().filename(path),
                };
                (options.journal_mode(SqliteJournalMode::Wal), false, location)
            }
        };
        let options = options
            .create_if_missing(true)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);

        let mut writer = SqlitePoolOptions::new().max_connections(1).acquire_timeout(ACQUIRE_TIMEOUT);
        if memory {
            writer = writer.min_connections(1).idle_timeout(None).max_lifetime(None);
        }
        let write = writer.connect_with(options.clone()).await.map_err(|e| open_error(&location, e))?;

        if let Err(error) = MIGRATOR.run(&write).await {
            write.close().await;
            return Err(match error {
                MigrateError::VersionMissing(version) => StoreError::NewerSchema { path: location, version },
                // A file that is not a database may only be found out here, at its first real read.
                MigrateError::Execute(source) if is_not_a_database(&source) => open_error(&location, source),
                error => StoreError::Migrate(error),
            });
        }

        let read = if memory {
            write.clone()
        } else {
            let readers = SqlitePoolOptions::new().max_connections(READERS).acquire_timeout(ACQUIRE_TIMEOUT);
            match readers.connect_with(options.create_if_missing(false).pragma("query_only", "ON")).await {
                Ok(pool) => pool,
                Err(error) => {
                    write.close().await;
                    return Err(open_error(&location, error));
                }
            }
        };
        debug!(location = %location, memory, "analysis store open");
        let path = match parsed {
            Target::File { path, .. } => Some(path),
            Target::Memory { .. } => None,
        };
        Ok(SqliteBackend { read, write, memory, location, path })
    }

    /// Holds the right to run the annotation jobs of this database file, for as long as the returned file is
    /// open: an exclusive lock on `<database>-jobs.lock` beside it (never on the database file itself, whose
    /// POSIX locks SQLite holds and any close of another descriptor of it would drop). The holder's process id
    /// is written in it for the next one's error. The lock goes with the process, however it ends. `None` in
    /// memory, where no other process can see the jobs.
    pub(crate) fn hold_jobs(&self) -> Result<Option<std::fs::File>, StoreError> {
        use std::io::{Read as _, Seek as _, Write as _};
        let Some(path) = &self.path else { return Ok(None) };
        // One lock however the file is named (a relative path, a link to it); it exists once open.
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let mut name = path.as_os_str().to_owned();
        name.push("-jobs.lock");
        let lock_path = PathBuf::from(name);
        let cannot =
            |e: std::io::Error| StoreError::Open { path: lock_path.display().to_string(), source: sqlx::Error::Io(e) };
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(cannot)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                // A process id is a few digits: more is not one, and is not read.
                let _ = std::io::Read::take(&mut file, 64).read_to_string(&mut holder);
                let holder = holder.trim();
                let holder = if !holder.is_empty() && holder.len() <= 20 && holder.bytes().all(|b| b.is_ascii_digit()) {
                    format!("process {holder}")
                } else {
                    "another process".to_string()
                };
                return Err(StoreError::InUse { path: self.location.clone(), holder });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(cannot(e)),
        }
        file.set_len(0).and_then(|()| file.rewind()).map_err(cannot)?;
        write!(file, "{}", std::process::id()).and_then(|()| file.flush()).map_err(cannot)?;
        Ok(Some(file))
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
        let row = sqlx::query(SELECT)
            .bind(&key.game)
            .bind(&key.position)
            .bind(to_i64(key.multipv))
            .bind(engine)
            .fetch_optional(&self.read)
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
        // Remove it so that the next result for this key can be stored; it could never be served anyway.
        if let (Some(id), Some(revision)) = (id, revision)
            && let Err(error) = sqlx::query(DELETE_CORRUPT).bind(id).bind(revision).execute(&self.write).await
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
            .bind(now_ms())
            .bind(replace_equal)
            .execute(&self.write)
            .await
            .map_err(query_error)?;
        Ok(result.rows_affected() > 0)
    }

    /// Rows of the analysis cache by engine and game, in that order.
    pub(crate) async fn cache_engines(&self) -> Result<Vec<(String, String, i64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT engine, game, COUNT(*) FROM analysis_cache GROUP BY engine, game ORDER BY engine, game",
        )
        .fetch_all(&self.read)
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
            .fetch_one(&self.read)
            .await
            .map_err(query_error)?;
        let low: Option<i64> = row.try_get(0).map_err(query_error)?;
        let high: Option<i64> = row.try_get(1).map_err(query_error)?;
        Ok(low.zip(high))
    }

    /// Delete the cached results of `engine` whose ids are above `after` and at most `upto`; how many.
    pub(crate) async fn delete_cache_rows(&self, engine: &str, after: i64, upto: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM analysis_cache WHERE engine = ? AND id > ? AND id <= ?")
            .bind(engine)
            .bind(after)
            .bind(upto)
            .execute(&self.write)
            .await
            .map_err(query_error)?;
        Ok(done.rows_affected())
    }

    /// One trivial query through a reader: the database answers.
    pub(crate) async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.read).await.map_err(query_error)?;
        Ok(())
    }

    /// Let readers finish, fold the write-ahead log into the database file, and close every connection.
    pub(crate) async fn close(&self) {
        if !self.memory {
            self.read.close().await;
            if let Err(error) = self.write.execute("PRAGMA wal_checkpoint(TRUNCATE)").await {
                debug!(store = %self.location, %error, "checkpoint at close failed");
            }
        }
        self.write.close().await;
        debug!(store = %self.location, "analysis store closed");
    }

    // ---- annotation jobs ----

    /// Create a job and its games in one transaction.
    pub(crate) async fn create_job(&self, engine: &str, job: &NewJob) -> Result<(), StoreError> {
        let now = now_ms();
        let mut tx = self.write.begin().await.map_err(query_error)?;
        sqlx::query(
            "INSERT INTO annotation_jobs (id, game, status, settings, engine, error, created_ms, updated_ms, key_name) \
             VALUES (?, ?, 'queued', ?, ?, NULL, ?, ?, ?)",
        )
        .bind(&job.id)
        .bind(&job.game)
        .bind(&job.settings)
        .bind(engine)
        .bind(now)
        .bind(now)
        .bind(&job.owner)
        .execute(&mut *tx)
        .await
        .map_err(query_error)?;
        for (idx, game) in job.games.iter().enumerate() {
            sqlx::query("INSERT INTO annotation_games (job_id, idx, record, error, positions) VALUES (?, ?, ?, ?, ?)")
                .bind(&job.id)
                .bind(i64::try_from(idx).unwrap_or(i64::MAX))
                .bind(&game.record)
                .bind(&game.error)
                .bind(to_i64(game.positions))
                .execute(&mut *tx)
                .await
                .map_err(query_error)?;
        }
        tx.commit().await.map_err(query_error)?;
        Ok(())
    }

    pub(crate) async fn job(&self, id: &str) -> Result<Option<JobRow>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {JOB_COLUMNS} FROM annotation_jobs WHERE id = ?")))
            .bind(id)
            .fetch_optional(&self.read)
            .await
            .map_err(query_error)?;
        row.map(|row| job_row(&row, id, false)).transpose()
    }

    /// The jobs made with key `owner`, newest first, at most `limit`.
    pub(crate) async fn jobs_of(&self, owner: &str, limit: u32) -> Result<Vec<JobRow>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {JOB_COLUMNS} FROM annotation_jobs WHERE key_name = ? ORDER BY created_ms DESC, id DESC LIMIT ?"
        )))
        .bind(owner)
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await
        .map_err(query_error)?;
        rows.iter().map(|row| job_row(row, &format!("of key {owner}"), false)).collect()
    }

    /// Remove a job with its games and results; true when there was one.
    pub(crate) async fn delete_job(&self, id: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM annotation_jobs WHERE id = ?")
            .bind(id)
            .execute(&self.write)
            .await
            .map_err(query_error)?;
        Ok(done.rows_affected() > 0)
    }

    /// Remove the jobs that are over (done, failed, cancelled) and unchanged since `before_ms`; how many.
    pub(crate) async fn delete_jobs_over_before(&self, before_ms: i64) -> Result<u64, StoreError> {
        let done = sqlx::query(
            "DELETE FROM annotation_jobs WHERE status IN ('done', 'failed', 'cancelled') AND updated_ms < ?",
        )
        .bind(before_ms)
        .execute(&self.write)
        .await
        .map_err(query_error)?;
        Ok(done.rows_affected())
    }

    pub(crate) async fn job_games(&self, id: &str) -> Result<Vec<JobGameRow>, StoreError> {
        let rows =
            sqlx::query("SELECT idx, record, error, positions FROM annotation_games WHERE job_id = ? ORDER BY idx")
                .bind(id)
                .fetch_all(&self.read)
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
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM annotation_positions WHERE job_id = ?")
            .bind(id)
            .fetch_one(&self.read)
            .await
            .map_err(query_error)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    pub(crate) async fn job_positions(&self, id: &str) -> Result<Vec<PositionRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT game_idx, ply, result FROM annotation_positions WHERE job_id = ? ORDER BY game_idx, ply",
        )
        .bind(id)
        .fetch_all(&self.read)
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

    pub(crate) async fn delete_position(&self, id: &str, game_idx: u32, ply: u32) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM annotation_positions WHERE job_id = ? AND game_idx = ? AND ply = ?")
            .bind(id)
            .bind(to_i64(game_idx))
            .bind(to_i64(ply))
            .execute(&self.write)
            .await
            .map_err(query_error)?;
        Ok(done.rows_affected() > 0)
    }

    /// Write one position's result unless it is already there; true when written.
    pub(crate) async fn put_position(
        &self,
        id: &str,
        game_idx: u32,
        ply: u32,
        result: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO annotation_positions (job_id, game_idx, ply, result, created_ms) VALUES (?, ?, ?, ?, ?) \
             ON CONFLICT (job_id, game_idx, ply) DO NOTHING",
        )
        .bind(id)
        .bind(to_i64(game_idx))
        .bind(to_i64(ply))
        .bind(result)
        .bind(now_ms())
        .execute(&self.write)
        .await
        .map_err(query_error)?;
        if done.rows_affected() > 0 {
            sqlx::query("UPDATE annotation_jobs SET updated_ms = ? WHERE id = ?")
                .bind(now_ms())
                .bind(id)
                .execute(&self.write)
                .await
                .map_err(query_error)?;
        }
        Ok(done.rows_affected() > 0)
    }

    /// Set a job's status if it is now one of `from`; true when changed.
    pub(crate) async fn set_job_status(
        &self,
        id: &str,
        from: &[JobStatus],
        to: JobStatus,
        error: Option<&str>,
    ) -> Result<bool, StoreError> {
        // `from` is a handful of fixed words, not input: building the IN list is safe.
        let list: Vec<String> = from.iter().map(|s| format!("'{}'", s.as_str())).collect();
        let sql = format!(
            "UPDATE annotation_jobs SET status = ?, error = ?, updated_ms = ? WHERE id = ? AND status IN ({})",
            if list.is_empty() { "NULL".to_string() } else { list.join(", ") }
        );
        let done = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(to.as_str())
            .bind(error)
            .bind(now_ms())
            .bind(id)
            .execute(&self.write)
            .await
            .map_err(query_error)?;
        Ok(done.rows_affected() > 0)
    }

    /// Ids of the jobs in one of `statuses`, oldest first.
    pub(crate) async fn jobs_with_status(&self, statuses: &[JobStatus]) -> Result<Vec<String>, StoreError> {
        let list: Vec<String> = statuses.iter().map(|s| format!("'{}'", s.as_str())).collect();
        if list.is_empty() {
            return Ok(Vec::new());
        }
        let sql =
            format!("SELECT id FROM annotation_jobs WHERE status IN ({}) ORDER BY created_ms, id", list.join(", "));
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch_all(&self.read).await.map_err(query_error)?;
        rows.iter().map(|row| row.try_get::<String, _>("id").map_err(query_error)).collect()
    }

    // ---- API keys ----

    /// Insert a key; false when the name is taken.
    pub(crate) async fn create_key(&self, key: &NewKey) -> Result<bool, StoreError> {
        let quota = key.quota_positions.map(|q| i64::try_from(q).unwrap_or(i64::MAX));
        let done = sqlx::query(
            "INSERT INTO api_keys (name, hash, rate, burst, quota_positions, created_ms, revoked_ms) \
             VALUES (?, ?, ?, ?, ?, ?, NULL) ON CONFLICT (name) DO NOTHING",
        )
        .bind(&key.name)
        .bind(&key.hash)
        .bind(key.rate)
        .bind(i64::from(key.burst))
        .bind(quota)
        .bind(now_ms())
        .execute(&self.write)
        .await
        .map_err(query_error)?;
        Ok(done.rows_affected() > 0)
    }

    /// Every key by name, or the one with digest `hash`.
    pub(crate) async fn keys(&self, hash: Option<&str>) -> Result<Vec<KeyRow>, StoreError> {
        let rows = match hash {
            Some(hash) => sqlx::query(sqlx::AssertSqlSafe(format!("{KEY_COLUMNS} WHERE hash = ?"))).bind(hash),
            None => sqlx::query(sqlx::AssertSqlSafe(format!("{KEY_COLUMNS} ORDER BY name"))),
        }
        .fetch_all(&self.read)
        .await
        .map_err(query_error)?;
        rows.iter().map(key_row).collect()
    }

    /// Mark a key revoked; false when unknown or already revoked.
    pub(crate) async fn revoke_key(&self, name: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("UPDATE api_keys SET revoked_ms = ? WHERE name = ? AND revoked_ms IS NULL")
            .bind(now_ms())
            .bind(name)
            .execute(&self.write)
            .await
            .map_err(query_error)?;
        Ok(done.rows_affected() > 0)
    }

    /// Charge `positions` to a key's day if it stays within `quota` (one conditional upsert); whether it was
    /// charged, and the day's total after.
    pub(crate) async fn refund_key_quota(&self, name: &str, day: i64, positions: u64) -> Result<(), StoreError> {
        sqlx::query("UPDATE api_key_usage SET positions = MAX(positions - ?, 0) WHERE name = ? AND day = ?")
            .bind(i64::try_from(positions).unwrap_or(i64::MAX))
            .bind(name)
            .bind(day)
            .execute(&self.write)
            .await
            .map_err(query_error)?;
        Ok(())
    }

    pub(crate) async fn charge_key_quota(
        &self,
        name: &str,
        day: i64,
        positions: u64,
        quota: u64,
    ) -> Result<(bool, u64), StoreError> {
        let positions = i64::try_from(positions).unwrap_or(i64::MAX);
        let quota = i64::try_from(quota).unwrap_or(i64::MAX);
        let charged = if positions > quota {
            false
        } else {
            sqlx::query(
                "INSERT INTO api_key_usage (name, day, positions) VALUES (?, ?, ?) \
                 ON CONFLICT (name, day) DO UPDATE SET positions = api_key_usage.positions + excluded.positions \
                 WHERE api_key_usage.positions + excluded.positions <= ?",
            )
            .bind(name)
            .bind(day)
            .bind(positions)
            .bind(quota)
            .execute(&self.write)
            .await
            .map_err(query_error)?
            .rows_affected()
                > 0
        };
        let used: Option<i64> = sqlx::query_scalar("SELECT positions FROM api_key_usage WHERE name = ? AND day = ?")
            .bind(name)
            .bind(day)
            .fetch_optional(&self.write)
            .await
            .map_err(query_error)?;
        Ok((charged, used.map_or(0, |u| u64::try_from(u).unwrap_or(0))))
    }

    #[cfg(test)]
    pub(crate) fn writer(&self) -> &SqlitePool {
        &self.write
    }
}

/// A missing directory is a clear error naming it (SQLite itself only says "unable to open database file").
fn check_directory(path: &Path) -> Result<(), sqlx::Error> {
    // SQLite opens an empty name as a private temporary database for each connection: the writer would migrate
    // its own and every reader would see another, empty one, and nothing would be kept.
    if path.as_os_str().is_empty() {
        let why = "no file named (an empty --db or KIBITZ_DB; `:memory:` is the store kept in memory)";
        return Err(sqlx::Error::Io(std::io::Error::new(std::io::ErrorKind::InvalidInput, why)));
    }
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() && !parent.is_dir() => Err(sqlx::Error::Io(
            std::io::Error::new(std::io::ErrorKind::NotFound, format!("directory {} does not exist", parent.display())),
        )),
        _ => Ok(()),
    }?;
    check_one_name(path)
}

/// Refuse a database file that has several names (hard links): SQLite names its write-ahead log, its
/// shared-memory index and its journal after the name a program opens it by, so two programs (or two
/// servers) opening it by two names would each keep their own log beside the same database and corrupt it;
/// and the annotation jobs' lock ([`SqliteBackend::hold_jobs`]), named after the path, would let both run
/// every job. A symbolic link is one file with one name: it is followed, and fine.
fn check_one_name(path: &Path) -> Result<(), sqlx::Error> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if let Ok(meta) = std::fs::metadata(path)
            && meta.is_file()
            && meta.nlink() > 1
        {
            let why = format!(
                "the file has {} names (hard links): SQLite names its write-ahead log after the name it is opened \
                 by, so two programs opening it by two names would corrupt it. Give it one name (a symbolic link is \
                 fine)",
                meta.nlink()
            );
            return Err(sqlx::Error::Io(std::io::Error::new(std::io::ErrorKind::InvalidInput, why)));
        }
    }
    Ok(())
}

fn is_not_a_database(error: &sqlx::Error) -> bool {
    // SQLITE_NOTADB is 26.
    matches!(error, sqlx::Error::Database(db) if db.code().as_deref() == Some("26"))
}

#[cfg(test)]
mod tests {
    use super::Target;
    use std::path::PathBuf;

    #[test]
    fn targets() {
        let file =
            |url: Option<&str>, path: &str| Target::File { url: url.map(str::to_string), path: PathBuf::from(path) };
        assert_eq!(Target::parse("./kibitz.db"), file(None, "./kibitz.db"));
        assert_eq!(Target::parse("/tmp/x.db"), file(None, "/tmp/x.db"));
        assert_eq!(Target::parse("sqlite:///tmp/x.db"), file(Some("sqlite:///tmp/x.db"), "/tmp/x.db"));
        assert_eq!(Target::parse("sqlite://x.db?mode=rwc"), file(Some("sqlite://x.db?mode=rwc"), "x.db"));
        assert_eq!(Target::parse("sqlite:x.db"), file(Some("sqlite:x.db"), "x.db"));
        // The driver percent-decodes the file name: so does the path kibitz checks and locks.
        assert_eq!(Target::parse("sqlite:///tmp/my%20db.db"), file(Some("sqlite:///tmp/my%20db.db"), "/tmp/my db.db"));
        assert_eq!(Target::parse("sqlite:a%2x%41.db"), file(Some("sqlite:a%2x%41.db"), "a%2xA.db"));
        for memory in ["sqlite::memory:", ":memory:", "sqlite://:memory:", "sqlite://x?mode=memory"] {
            assert!(matches!(Target::parse(memory), Target::Memory { .. }), "{memory}");
        }
    }
}
