//! The analysis cache: the deepest result found for (game, normalised position, MultiPV count), per engine
//! version, in SQLite (one server) or PostgreSQL (several servers sharing it) through sqlx, with a bounded
//! in-memory front for hot positions (per server: a miss there always asks the database).
//!
//! The store knows no game and no rules: positions and moves arrive as already-normalised strings. Lookups
//! only see rows written by the same engine version (given at open), so a new engine never serves an old
//! engine's scores as its own. A deeper result replaces a shallower one; the comparison is made by the database
//! in the write itself, so concurrent writers of one key never lose the deepest result.
//!
//! Reads check memory first, then the database (and fill memory); writes go to the database, then memory.
//! All SQL lives in the backend modules (`sqlite.rs`, `postgres.rs`); this module and its types are
//! backend-neutral. The target picks the backend: `postgres://` or `postgresql://` URLs PostgreSQL, anything
//! else (a path, `sqlite:` URLs) SQLite.
//!
//! Annotation jobs on a shared store (PostgreSQL) are held by leases ([`Store::claim_job`],
//! [`Store::renew_job`], [`Store::release_job`]) so that several servers share one queue; on SQLite the one
//! server owns every job and these calls hold nothing (see [`Store::is_shared`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), kibitz::store::StoreError> {
//! use kibitz::store::{CacheKey, Store};
//! let store = Store::open("./kibitz.db").await?;
//! let key = CacheKey::new("somegame", "normalised position", 1);
//! if let Some(hit) = store.get_analysis(&key).await? {
//!     println!("depth {}", hit.depth);
//! }
//! store.close().await;
//! # Ok(())
//! # }
//! ```

mod codec;
mod jobs;
mod keys;
mod memory;
mod postgres;
mod sqlite;

pub use jobs::{JobGameRow, JobRow, JobStatus, NewJob, NewJobGame, PositionRow};
pub use keys::{KeyRow, NewKey};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tracing::{debug, warn};

use crate::game::Score;
use memory::ClockCache;
use postgres::PostgresBackend;
use sqlite::SqliteBackend;

/// The engine version `Store::open` stores with its results: the crate's version and, after a `+`, a digest of
/// the sources that decide what a search finds (the build script's `KIBITZ_ENGINE_SOURCES`), so that a build
/// whose search, rules or evaluation changed never answers with an earlier build's results, even under the
/// same version number. Only the cache uses it; answers name the engine by [`crate::analysis::ENGINE`].
pub const ENGINE_VERSION: &str = concat!("kibitz ", env!("CARGO_PKG_VERSION"), "+", env!("KIBITZ_ENGINE_SOURCES"));

/// Ids of the analysis cache [`Store::delete_cache_engine`] deletes among at once.
pub const DELETE_BATCH_IDS: i64 = 10_000;

/// How many cached results one engine has for one game ([`Store::cache_engines`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheEngineRows {
    /// The engine as the cache stores it: kibitz's own as [`ENGINE_VERSION`] (with the evaluation's tag for a
    /// game whose evaluation is data), an external engine as its name and version.
    pub engine: String,
    pub game: String,
    pub rows: u64,
}

/// Entries the in-memory front holds by default.
pub const DEFAULT_MEMORY_ENTRIES: usize = 20_000;

/// What a result is cached under. The engine version is not part of it: it is the store's own.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// The game's registry name.
    pub game: String,
    /// The normalised position (after any moves were applied).
    pub position: String,
    /// The number of lines asked for.
    pub multipv: u32,
    /// The engine (name and version) whose result this is; `None`: the store's own engine version.
    pub engine: Option<String>,
}

impl CacheKey {
    /// A key for the store's own engine.
    pub fn new(game: impl Into<String>, position: impl Into<String>, multipv: u32) -> Self {
        CacheKey { game: game.into(), position: position.into(), multipv, engine: None }
    }
}

/// A finished analysis as the cache keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CachedAnalysis {
    pub depth: u32,
    pub seldepth: u32,
    pub nodes: u64,
    pub time_ms: u64,
    pub bestmove: Option<String>,
    /// Best first.
    pub lines: Vec<CachedLine>,
}

/// One line of a cached analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CachedLine {
    pub moves: Vec<String>,
    pub score: CachedScore,
    pub depth: u32,
}

/// A score from the side to move's point of view; serialises as `{"cp": n}` or `{"mate": n}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CachedScore {
    /// Centi-units.
    Cp(i32),
    /// Plies to the end of the game, positive when the side to move wins.
    Mate(i32),
}

impl From<Score> for CachedScore {
    fn from(score: Score) -> Self {
        match score {
            Score::Cp(cp) => CachedScore::Cp(cp),
            Score::Mate(plies) => CachedScore::Mate(plies),
        }
    }
}

impl From<CachedScore> for Score {
    fn from(score: CachedScore) -> Self {
        match score {
            CachedScore::Cp(cp) => Score::Cp(cp),
            CachedScore::Mate(plies) => Score::Mate(plies),
        }
    }
}

impl CachedAnalysis {
    /// No search at all (a finished game).
    pub fn empty() -> CachedAnalysis {
        CachedAnalysis { depth: 0, seldepth: 0, nodes: 0, time_ms: 0, bestmove: None, lines: Vec::new() }
    }
}

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be opened (missing directory, not a SQLite file, bad URL, PostgreSQL not
    /// answering, ...).
    #[error("cannot open the analysis store {path}: {source}")]
    Open {
        path: String,
        #[source]
        source: sqlx::Error,
    },
    /// The schema could not be brought up to date.
    #[error("cannot migrate the analysis store: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The database holds migrations this kibitz does not know: it was written by a newer kibitz.
    #[error("the analysis store {path} was written by a newer kibitz (its schema migration {version} is unknown here)")]
    NewerSchema { path: String, version: i64 },
    /// A query failed.
    #[error("analysis store query failed: {0}")]
    Query(#[source] sqlx::Error),
    /// The database did not answer a moment ago and is not asked again before `again_in` (PostgreSQL's
    /// breaker: callers are answered at once instead of each waiting for a connection).
    #[error("the database does not answer (asked again in {:.1} s)", again_in.as_secs_f64())]
    Unreachable { again_in: std::time::Duration },
    /// A stored row does not decode; it has been removed, so treat the lookup as a miss.
    #[error("corrupt analysis store row: {what}")]
    Corrupt { what: String },
    /// A result could not be encoded for storage.
    #[error("cannot encode an analysis for the store: {0}")]
    Encode(#[source] serde_json::Error),
    /// The store was closed.
    #[error("the analysis store is closed")]
    Closed,
    /// Another process runs the annotation jobs of this SQLite file ([`Store::hold_jobs`]).
    #[error(
        "{holder} (a kibitz server or `kibitz annotate --db`) already runs the annotation jobs of {path}: two \
         would run every job twice. Stop it, give this one its own --db, or annotate through the server \
         (`kibitz annotate --server URL`); servers that share a store share PostgreSQL (README \"Several nodes\")"
    )]
    InUse { path: String, holder: String },
}

/// The right to run a store's annotation jobs ([`Store::hold_jobs`]), given up when dropped.
#[derive(Debug)]
pub struct JobsHold {
    _lock: Option<std::fs::File>,
}

/// Settings of [`Store::open_with`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreConfig {
    /// The engine version stored with each result; lookups see only rows of this version.
    pub engine: String,
    /// Most entries the in-memory front holds (0 disables it).
    pub memory_entries: usize,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig { engine: ENGINE_VERSION.to_string(), memory_entries: DEFAULT_MEMORY_ENTRIES }
    }
}

/// Builds a [`Store`]: `Store::builder(target).engine("x").memory_entries(n).open().await`.
#[derive(Clone, Debug)]
pub struct StoreBuilder {
    target: String,
    config: StoreConfig,
}

impl StoreBuilder {
    pub fn engine(mut self, engine: impl Into<String>) -> Self {
        self.config.engine = engine.into();
        self
    }

    pub fn memory_entries(mut self, entries: usize) -> Self {
        self.config.memory_entries = entries;
        self
    }

    pub async fn open(self) -> Result<Store, StoreError> {
        Store::open_with(&self.target, self.config).await
    }
}

/// Counters for metrics, cumulative since open. `hits` counts every lookup that found a result (from memory or
/// the database), `memory_hits` those of them answered from memory, `misses` lookups that found nothing (or an
/// undecodable row), `writes` results written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    pub hits: u64,
    pub misses: u64,
    pub memory_hits: u64,
    pub writes: u64,
}

/// The analysis cache. Cheap to clone (all clones share one database and one memory front); `Send + Sync`.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

enum Backend {
    Sqlite(SqliteBackend),
    Postgres(PostgresBackend),
}

/// `$backend.$call` on whichever backend the store has.
macro_rules! on_backend {
    ($store:expr, $b:ident => $call:expr) => {
        match &$store.inner.backend {
            Backend::Sqlite($b) => $call,
            Backend::Postgres($b) => $call,
        }
    };
}

struct Inner {
    backend: Backend,
    engine: String,
    memory: Mutex<ClockCache<CacheKey, Arc<CachedAnalysis>>>,
    closed: AtomicBool,
    hits: AtomicU64,
    misses: AtomicU64,
    memory_hits: AtomicU64,
    writes: AtomicU64,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.location())
            .field("engine", &self.inner.engine)
            .field("closed", &self.inner.closed.load(Ordering::Relaxed))
            .finish()
    }
}

impl Store {
    /// Open (creating and migrating) the store at `target` — a file path or a `sqlite:` URL (SQLite), or a
    /// `postgres://`/`postgresql://` URL (PostgreSQL, which several servers may share) — for this kibitz's
    /// engine version, with the default memory front.
    pub async fn open(target: &str) -> Result<Store, StoreError> {
        Store::open_with(target, StoreConfig::default()).await
    }

    /// [`Store::open`] for commands that read or change what a store holds (listing, pruning, revoking): a
    /// SQLite file that does not exist is an error naming it, not a new empty store made at a mistyped path.
    pub async fn open_existing(target: &str) -> Result<Store, StoreError> {
        if !postgres::is_postgres(target)
            && let sqlite::Target::File { path, .. } = sqlite::Target::parse(target)
            && !path.as_os_str().is_empty()
            && !path.exists()
        {
            let location = path.display().to_string();
            let why = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file (nothing is stored there)");
            return Err(StoreError::Open { path: location, source: sqlx::Error::Io(why) });
        }
        Store::open(target).await
    }

    /// A builder for a store with other settings.
    pub fn builder(target: impl Into<String>) -> StoreBuilder {
        StoreBuilder { target: target.into(), config: StoreConfig::default() }
    }

    /// Open (creating and migrating) the store at `target` with `config`.
    pub async fn open_with(target: &str, config: StoreConfig) -> Result<Store, StoreError> {
        let backend = if postgres::is_postgres(target) {
            Backend::Postgres(PostgresBackend::open(target).await?)
        } else {
            Backend::Sqlite(SqliteBackend::open(target).await?)
        };
        Ok(Store {
            inner: Arc::new(Inner {
                backend,
                engine: config.engine,
                memory: Mutex::new(ClockCache::new(config.memory_entries)),
                closed: AtomicBool::new(false),
                hits: AtomicU64::new(0),
                misses: AtomicU64::new(0),
                memory_hits: AtomicU64::new(0),
                writes: AtomicU64::new(0),
            }),
        })
    }

    /// Where the data is (a file path, the in-memory URL, or a PostgreSQL URL without its password).
    pub fn location(&self) -> &str {
        on_backend!(self, backend => backend.location())
    }

    /// Hold the right to run this store's annotation jobs while the returned value lives. A SQLite file's jobs
    /// are one process's (its claims and leases hold nothing): a second server, or `kibitz annotate --db` on
    /// the file a server uses, is refused with [`StoreError::InUse`] naming the holder. PostgreSQL shares its
    /// jobs under leases and an in-memory store is private: always granted. Other processes may still read
    /// and write the cache and the keys (`kibitz cache`, `kibitz keys`).
    pub fn hold_jobs(&self) -> Result<JobsHold, StoreError> {
        match &self.inner.backend {
            Backend::Sqlite(backend) => Ok(JobsHold { _lock: backend.hold_jobs()? }),
            Backend::Postgres(_) => Ok(JobsHold { _lock: None }),
        }
    }

    /// Whether `error`, from this store, is the embedded store unavailable for a while (locked by another
    /// program, a full disk, an I/O error) rather than a query refused for good. Always false on PostgreSQL,
    /// whose outages the leases handle.
    pub fn is_local_outage(&self, error: &StoreError) -> bool {
        match (&self.inner.backend, error) {
            (Backend::Sqlite(_), StoreError::Query(error)) => sqlite::is_outage(error),
            _ => false,
        }
    }

    /// Whether several servers may share this store (PostgreSQL): annotation jobs are then claimed and held
    /// under leases. On SQLite one server owns every job: the lease calls hold nothing.
    pub fn is_shared(&self) -> bool {
        matches!(self.inner.backend, Backend::Postgres(_))
    }

    /// The engine version this store reads and writes.
    pub fn engine(&self) -> &str {
        &self.inner.engine
    }

    /// The deepest stored result for `key` written by this engine version.
    ///
    /// A row that does not decode is reported as [`StoreError::Corrupt`] (and removed, so the next result for
    /// the key can be stored); callers treat it as a miss.
    pub async fn get_analysis(&self, key: &CacheKey) -> Result<Option<CachedAnalysis>, StoreError> {
        self.get_analysis_enough(key, |_| true).await
    }

    /// Like [`Store::get_analysis`], for a caller that can only use a result `enough` accepts (deep enough):
    /// on a shared store a remembered result it rejects is looked up in the database again, since another
    /// server may have stored a deeper one since (memory is per server, the database is everyone's).
    pub async fn get_analysis_enough(
        &self,
        key: &CacheKey,
        enough: impl Fn(&CachedAnalysis) -> bool,
    ) -> Result<Option<CachedAnalysis>, StoreError> {
        self.get_analysis_checked(key, enough, &|_| Ok(())).await
    }

    /// Like [`Store::get_analysis_enough`], for a caller that knows what a result must hold (its moves legal in
    /// the position: the database may have been written by something else): a stored row `valid` refuses is
    /// treated as one that does not decode (removed, [`StoreError::Corrupt`]). What this server remembers in
    /// memory it stored or checked itself.
    pub async fn get_analysis_checked(
        &self,
        key: &CacheKey,
        enough: impl Fn(&CachedAnalysis) -> bool,
        valid: &(dyn Fn(&CachedAnalysis) -> Result<(), String> + Sync),
    ) -> Result<Option<CachedAnalysis>, StoreError> {
        self.check_open()?;
        let inner = &self.inner;
        // Clone the Arc under the lock, the value outside it.
        let remembered = self.memory().get(key).cloned();
        if let Some(found) = remembered
            && (!self.is_shared() || enough(&found))
        {
            inner.memory_hits.fetch_add(1, Ordering::Relaxed);
            inner.hits.fetch_add(1, Ordering::Relaxed);
            debug!(game = %key.game, multipv = key.multipv, depth = found.depth, "store memory hit");
            return Ok(Some(found.as_ref().clone()));
        }
        let engine = key.engine.as_deref().unwrap_or(&inner.engine);
        let fetched = on_backend!(self, backend => backend.fetch(engine, key, valid).await);
        match fetched {
            Ok(Some(found)) => {
                inner.hits.fetch_add(1, Ordering::Relaxed);
                debug!(game = %key.game, multipv = key.multipv, depth = found.depth, "store hit");
                let depth = found.depth;
                self.memory().insert_if(key.clone(), Arc::new(found.clone()), |old| depth > old.depth);
                Ok(Some(found))
            }
            Ok(None) => {
                inner.misses.fetch_add(1, Ordering::Relaxed);
                debug!(game = %key.game, multipv = key.multipv, "store miss");
                Ok(None)
            }
            Err(error @ StoreError::Corrupt { .. }) => {
                inner.misses.fetch_add(1, Ordering::Relaxed);
                Err(error)
            }
            Err(error) => Err(error),
        }
    }

    /// What this server remembers of `key` in memory (it stored or checked it itself), without asking the
    /// database.
    pub fn remembered(&self, key: &CacheKey) -> Option<CachedAnalysis> {
        self.memory().get(key).map(|found| found.as_ref().clone())
    }

    /// Store `value` for `key` unless a result at least as deep is already stored (by this engine version).
    /// Returns whether it was written.
    pub async fn put_analysis(&self, key: &CacheKey, value: &CachedAnalysis) -> Result<bool, StoreError> {
        self.put_analysis_with(key, value, false).await
    }

    /// Store `value` for `key` unless a deeper result is already stored: a search asked to refresh the cache
    /// replaces an entry as deep as its own (a client that refreshes wants the search it asked for kept).
    pub async fn refresh_analysis(&self, key: &CacheKey, value: &CachedAnalysis) -> Result<bool, StoreError> {
        self.put_analysis_with(key, value, true).await
    }

    async fn put_analysis_with(
        &self,
        key: &CacheKey,
        value: &CachedAnalysis,
        replace_equal: bool,
    ) -> Result<bool, StoreError> {
        self.check_open()?;
        let inner = &self.inner;
        let engine = key.engine.as_deref().unwrap_or(&inner.engine);
        let written = on_backend!(self, backend => backend.upsert(engine, key, value, replace_equal).await?);
        let depth = value.depth;
        if written {
            inner.writes.fetch_add(1, Ordering::Relaxed);
            self.memory().insert_if(key.clone(), Arc::new(value.clone()), |old| {
                depth > old.depth || (replace_equal && depth == old.depth)
            });
        } else {
            // The database holds something at least as deep: a remembered entry no deeper than `value` may be
            // stale (another server sharing the database wrote it), so let the next read fetch the stored one.
            self.memory().remove_if(key, |old| old.depth <= depth);
        }
        debug!(game = %key.game, multipv = key.multipv, depth, written, "store put");
        Ok(written)
    }

    // ---- annotation jobs ----

    /// Create a job (status queued) with all its games, in one transaction.
    pub async fn create_job(&self, job: &NewJob) -> Result<(), StoreError> {
        self.check_open()?;
        match &self.inner.backend {
            Backend::Sqlite(backend) => backend.create_job(&self.inner.engine, job).await,
            Backend::Postgres(backend) => backend.create_job(&self.inner.engine, job, None).await,
        }
    }

    /// Create a job like [`Store::create_job`], held by `owner` for `lease` from the start (so that the server
    /// that accepted it runs it, not whichever server polls first). On SQLite the same as `create_job`.
    pub async fn create_job_claimed(&self, job: &NewJob, owner: &str, lease: Duration) -> Result<(), StoreError> {
        self.check_open()?;
        match &self.inner.backend {
            Backend::Sqlite(backend) => backend.create_job(&self.inner.engine, job).await,
            Backend::Postgres(backend) => backend.create_job(&self.inner.engine, job, Some((owner, lease))).await,
        }
    }

    /// Take the oldest queued or running job that no server holds (none did, or its holder's lease ran out),
    /// but those of `skip`, for `owner`, for `lease`; `None` when there is none. Concurrent claimers never get
    /// the same job. On SQLite always `None`: the one server resumes its jobs at start
    /// ([`Store::jobs_with_status`]).
    pub async fn claim_job(&self, owner: &str, lease: Duration, skip: &[String]) -> Result<Option<String>, StoreError> {
        self.check_open()?;
        match &self.inner.backend {
            Backend::Sqlite(_) => Ok(None),
            Backend::Postgres(backend) => backend.claim_job(owner, lease, skip).await,
        }
    }

    /// Extend `owner`'s lease on job `id` to `lease` from now. Returns the job's status, or `None` when
    /// `owner` no longer holds it (its lease ran out and another server took it, or the job is gone): the
    /// runner must then stop without touching the job. On SQLite the job's status (the server holds all).
    pub async fn renew_job(&self, id: &str, owner: &str, lease: Duration) -> Result<Option<JobStatus>, StoreError> {
        self.check_open()?;
        match &self.inner.backend {
            Backend::Sqlite(backend) => Ok(backend.job(id).await?.map(|job| job.status)),
            Backend::Postgres(backend) => backend.renew_job(id, owner, lease).await,
        }
    }

    /// Give up `owner`'s lease on job `id` so that another server may claim it at once (a server shutting
    /// down, one that cannot run it); true when it was held. `waiting` says why the job waits, for its view
    /// (a server lacking its engine), until a server claims it. On SQLite nothing to give up (false).
    pub async fn release_job(&self, id: &str, owner: &str, waiting: Option<&str>) -> Result<bool, StoreError> {
        self.check_open()?;
        match &self.inner.backend {
            Backend::Sqlite(_) => Ok(false),
            Backend::Postgres(backend) => backend.release_job(id, owner, waiting).await,
        }
    }

    /// A job, if it exists.
    pub async fn job(&self, id: &str) -> Result<Option<JobRow>, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.job(id).await)
    }

    /// The jobs made with key `owner`, newest first, at most `limit`.
    pub async fn jobs_of(&self, owner: &str, limit: u32) -> Result<Vec<JobRow>, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.jobs_of(owner, limit).await)
    }

    /// Remove a job with its games and results (a server still running it finds it gone and stops); true
    /// when there was one.
    pub async fn delete_job(&self, id: &str) -> Result<bool, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.delete_job(id).await)
    }

    /// Remove every job that is over (done, failed or cancelled) and has not changed since `before_ms`
    /// (milliseconds since 1970); how many were removed.
    pub async fn delete_jobs_over_before(&self, before_ms: i64) -> Result<u64, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.delete_jobs_over_before(before_ms).await)
    }

    /// A job's games, in order.
    pub async fn job_games(&self, id: &str) -> Result<Vec<JobGameRow>, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.job_games(id).await)
    }

    /// A job's evaluated positions, by game and ply.
    pub async fn job_positions(&self, id: &str) -> Result<Vec<PositionRow>, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.job_positions(id).await)
    }

    /// How many of a job's positions are evaluated (its progress, without reading them).
    pub async fn job_position_count(&self, id: &str) -> Result<u64, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.position_count(id).await)
    }

    /// Remove one position's result of job `id` (found unusable), so that it is evaluated and written again;
    /// true when there was one.
    pub async fn delete_job_position(&self, id: &str, game_idx: u32, ply: u32) -> Result<bool, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.delete_position(id, game_idx, ply).await)
    }

    /// Write one position's result of a job, unless it is already written (then false).
    pub async fn put_job_position(&self, id: &str, game_idx: u32, ply: u32, result: &str) -> Result<bool, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.put_position(id, game_idx, ply, result).await)
    }

    /// Change a job's status to `to` if it is now one of `from` (with an error text for `failed`); true when
    /// it changed.
    pub async fn set_job_status(
        &self,
        id: &str,
        from: &[JobStatus],
        to: JobStatus,
        error: Option<&str>,
    ) -> Result<bool, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.set_job_status(id, from, to, error).await)
    }

    /// Ids of the jobs in one of `statuses`, oldest first (on start: the jobs to resume).
    pub async fn jobs_with_status(&self, statuses: &[JobStatus]) -> Result<Vec<String>, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.jobs_with_status(statuses).await)
    }

    // ---- API keys ----

    /// Store a new key; false when a key of that name exists (revoked or not).
    pub async fn create_key(&self, key: &NewKey) -> Result<bool, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.create_key(key).await)
    }

    /// Every key, revoked ones included, by name.
    pub async fn keys(&self) -> Result<Vec<KeyRow>, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.keys(None).await)
    }

    /// The key whose SHA-256 digest is `hash` (revoked or not), if any.
    pub async fn key_by_hash(&self, hash: &str) -> Result<Option<KeyRow>, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => Ok(backend.keys(Some(hash)).await?.pop()))
    }

    /// Revoke the key `name`; false when there is no such key or it was already revoked.
    pub async fn revoke_key(&self, name: &str) -> Result<bool, StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.revoke_key(name).await)
    }

    /// Add `positions` to what key `name` used on UTC day `day` (days since 1970-01-01) if the total stays
    /// within `quota`. Returns whether it was charged and the positions used that day after the call.
    pub async fn charge_key_quota(
        &self,
        name: &str,
        day: i64,
        positions: u64,
        quota: u64,
    ) -> Result<(bool, u64), StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.charge_key_quota(name, day, positions, quota).await)
    }

    /// Give back `positions` that key `name` was charged on UTC day `day` (a job that was charged, then not
    /// made); the day's use never goes below zero.
    pub async fn refund_key_quota(&self, name: &str, day: i64, positions: u64) -> Result<(), StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.refund_key_quota(name, day, positions).await)
    }

    /// The analysis cache's rows by engine and game (ordered so).
    pub async fn cache_engines(&self) -> Result<Vec<CacheEngineRows>, StoreError> {
        self.check_open()?;
        let rows = on_backend!(self, backend => backend.cache_engines().await)?;
        Ok(rows
            .into_iter()
            .map(|(engine, game, rows)| CacheEngineRows { engine, game, rows: u64::try_from(rows).unwrap_or(0) })
            .collect())
    }

    /// Delete every cached result stored under `engine` (exactly that name, as [`Store::cache_engines`] lists
    /// it); the number of rows deleted. The rows go [`DELETE_BATCH_IDS`] ids at a time, each batch its own
    /// statement, so that servers writing to the same database wait for one batch at most, never for the whole
    /// deletion. This store's in-memory front is emptied too; a running server's is its own.
    pub async fn delete_cache_engine(&self, engine: &str) -> Result<u64, StoreError> {
        self.check_open()?;
        let Some((low, high)) = on_backend!(self, backend => backend.cache_ids().await)? else {
            return Ok(0);
        };
        let mut deleted = 0;
        let mut after = low - 1;
        while after < high {
            let upto = after.saturating_add(DELETE_BATCH_IDS).min(high);
            deleted += on_backend!(self, backend => backend.delete_cache_rows(engine, after, upto).await)?;
            after = upto;
        }
        self.memory().clear();
        Ok(deleted)
    }

    /// Check that the database answers (for readiness probes).
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.check_open()?;
        on_backend!(self, backend => backend.ping().await)
    }

    /// Counters since open.
    pub fn stats(&self) -> StoreStats {
        let inner = &self.inner;
        StoreStats {
            hits: inner.hits.load(Ordering::Relaxed),
            misses: inner.misses.load(Ordering::Relaxed),
            memory_hits: inner.memory_hits.load(Ordering::Relaxed),
            writes: inner.writes.load(Ordering::Relaxed),
        }
    }

    /// Entries in the in-memory front now (never more than `memory_entries`).
    pub fn memory_len(&self) -> usize {
        self.memory().len()
    }

    /// Whether [`Store::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::Acquire)
    }

    /// Finish the operations under way, flush everything to the database file and close it. Every later call
    /// (on any clone) returns [`StoreError::Closed`]. Closing twice is harmless.
    pub async fn close(&self) {
        if self.inner.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.memory().clear();
        on_backend!(self, backend => backend.close().await)
    }

    fn check_open(&self) -> Result<(), StoreError> {
        if self.is_closed() { Err(StoreError::Closed) } else { Ok(()) }
    }

    /// The memory front. A panic while it was held cannot leave it inconsistent (no operation on it panics
    /// midway), so a poisoned lock is taken over rather than propagated.
    fn memory(&self) -> MutexGuard<'_, ClockCache<CacheKey, Arc<CachedAnalysis>>> {
        self.inner.memory.lock().unwrap_or_else(|poisoned| {
            warn!("store memory front lock was poisoned");
            poisoned.into_inner()
        })
    }

    /// Run one raw statement on the database, bypassing the store (tests corrupt rows with it).
    #[cfg(test)]
    async fn raw_execute(&self, sql: String) -> Result<u64, sqlx::Error> {
        let sql = sqlx::AssertSqlSafe(sql);
        match &self.inner.backend {
            Backend::Sqlite(backend) => sqlx::query(sql).execute(backend.writer()).await.map(|r| r.rows_affected()),
            Backend::Postgres(backend) => sqlx::query(sql).execute(backend.pool()).await.map(|r| r.rows_affected()),
        }
    }
}

#[cfg(test)]
mod tests;
