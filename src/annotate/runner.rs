//! Annotation jobs: created in the store in one transaction, then run by a task per job that evaluates the
//! positions not evaluated yet, each game from its last position back to its first, and writes each result
//! as it finishes. On start the server resumes every job left queued or running; positions already written
//! are never evaluated again, so a killed server redoes at most the positions that were in flight.
//!
//! On a shared store (PostgreSQL, several servers) a server runs a job only while it holds the job's lease in
//! the store: the server that accepts a job holds it from the start and renews it every third of the lease;
//! every server polls the store for jobs nobody holds (a lease that ran out: its server died) and resumes them
//! from the positions already written. A renewal also reads the job's status, so a job cancelled through
//! any server stops on the one running it; a server that finds it lost the lease stops the job without
//! touching it. A server shutting down releases its leases, so another server takes the jobs at once.
//!
//! Jobs share the pool with interactive requests: their searches are submitted one at a time per job, at
//! low priority, and at most `max_in_flight` of them at once over all jobs (default: one fewer than the
//! workers), so a big batch leaves a worker to web clients and never fills the pool's queue. A full queue
//! is waited out, not reported as an error.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use tokio::sync::{Notify, Semaphore, watch};
use tokio::task::JoinSet;
use tracing::{Instrument, debug, info, info_span, warn};

use super::{PositionEval, Settings, StoredRecord};
use crate::analysis::{Analysis, AnalysisError, EngineChoice, Request, satisfies};
use crate::game::{Game, GameRecord, RecordError};
use crate::games::GameKind;
use crate::pool::PoolError;
use crate::store::{JobStatus, NewJob, NewJobGame, Store, StoreError};
use crate::with_game;

/// Limits of the annotation runner.
#[derive(Clone, Debug)]
pub struct AnnotatorConfig {
    /// Searches of annotation jobs running or queued in the pool at once, over all jobs.
    pub max_in_flight: usize,
    /// Most positions one job may hold.
    pub max_positions: usize,
    /// Wait before submitting again when the pool's queue is full.
    pub busy_retry: Duration,
    /// This server's name in job leases (unique per process).
    pub node: String,
    /// How long a job's lease lasts without renewal (shared stores): after a server dies, its jobs wait this
    /// long before another server resumes them.
    pub lease: Duration,
    /// How often a server looks for jobs nobody holds (shared stores).
    pub poll: Duration,
    /// How long a job that is over (done, failed, cancelled) is kept after its last change; `None`: for ever.
    pub keep: Option<Duration>,
}

impl AnnotatorConfig {
    /// The defaults for a pool of `workers` threads.
    pub fn for_workers(workers: usize) -> Self {
        AnnotatorConfig {
            max_in_flight: workers.saturating_sub(1).max(1),
            max_positions: 200_000,
            busy_retry: Duration::from_millis(200),
            node: new_node_id(),
            lease: DEFAULT_LEASE,
            poll: DEFAULT_POLL,
            keep: None,
        }
    }
}

/// The default job lease.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);
/// The default interval between looks for jobs nobody holds.
pub const DEFAULT_POLL: Duration = Duration::from_secs(2);
/// How long a server passes over a job it cannot run (before it reads the job again).
const RECHECK_UNRUNNABLE: Duration = Duration::from_secs(60);
/// How often jobs kept past [`AnnotatorConfig::keep`] are looked for and removed.
const SWEEP_EVERY: Duration = Duration::from_secs(600);
/// Longest a removal waits for this server's task of the job to end (it stops at once on being cancelled,
/// but for a search in progress that takes a moment).
const REMOVE_WAIT: Duration = Duration::from_secs(5);

/// A node id for job leases: the host's name (when known) and 64 random bits.
fn new_node_id() -> String {
    let host = std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_string()).unwrap_or_default();
    let random = &new_job_id()[..16];
    if host.is_empty() || !host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') {
        random.to_string()
    } else {
        format!("{host}-{random}")
    }
}

/// A job's progress, as its watchers see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Progress {
    pub status: &'static str,
    /// Positions evaluated.
    pub done: u64,
    /// Positions to evaluate.
    pub total: u64,
}

/// A job accepted.
#[derive(Clone, Debug)]
pub struct Submitted {
    pub id: String,
    /// Games in the submission (including those that could not be read).
    pub games: usize,
    /// Positions to evaluate.
    pub positions: u64,
    /// The games that could not be read.
    pub errors: Vec<RecordError>,
}

/// Why a job was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error("no game could be read: {0}")]
    NoGames(RecordError),
    #[error("the text holds no game")]
    Empty,
    #[error("the games hold {positions} positions; at most {max} are accepted in one job")]
    TooManyPositions { positions: u64, max: usize },
    #[error("the server is shutting down")]
    ShuttingDown,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What watchers and cancellers of a running job hold.
struct Control {
    cancel: watch::Sender<bool>,
    progress: watch::Sender<Progress>,
}

struct Inner {
    analysis: Analysis,
    store: Store,
    config: AnnotatorConfig,
    permits: Semaphore,
    running: Mutex<HashMap<String, Arc<Control>>>,
    shutdown: watch::Sender<bool>,
    /// Job tasks running.
    tasks: watch::Sender<usize>,
    /// Told when a job task ends: the claim loop looks for a job at once.
    room: Notify,
}

/// The annotation runner. Cheap to clone.
#[derive(Clone)]
pub struct Annotator {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Annotator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Annotator").field("config", &self.inner.config).finish()
    }
}

/// A fresh job id: a version 4 UUID (122 random bits from the operating system's generator), so that an id
/// cannot be guessed from another. Ids made before (32 hex digits) stay readable: the store takes any text.
fn new_job_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

impl Annotator {
    pub fn new(analysis: Analysis, store: Store, config: AnnotatorConfig) -> Self {
        let permits = Semaphore::new(config.max_in_flight.max(1));
        Annotator {
            inner: Arc::new(Inner {
                analysis,
                store,
                config,
                permits,
                running: Mutex::new(HashMap::new()),
                shutdown: watch::Sender::new(false),
                tasks: watch::Sender::new(0),
                room: Notify::new(),
            }),
        }
    }

    pub fn config(&self) -> &AnnotatorConfig {
        &self.inner.config
    }

    /// Create a job from the records read out of a submission and start it. `owner` is the API key (its
    /// name) that made it: only that key may see it; `None`, anyone who has the id.
    pub async fn submit<G: Game>(
        &self,
        records: Vec<Result<GameRecord<G>, RecordError>>,
        settings: Settings,
        owner: Option<String>,
    ) -> Result<Submitted, SubmitError> {
        if *self.inner.shutdown.borrow() {
            return Err(SubmitError::ShuttingDown);
        }
        if records.is_empty() {
            return Err(SubmitError::Empty);
        }
        let mut games = Vec::with_capacity(records.len());
        let mut errors = Vec::new();
        let mut positions = 0u64;
        for record in &records {
            match record {
                Ok(record) => {
                    let stored = StoredRecord::of(record).map_err(|message| StoreError::Corrupt {
                        what: format!("a game could not be written for storage: {message}"),
                    })?;
                    let count = record.moves.len() as u64 + 1;
                    positions += count;
                    games.push(NewJobGame {
                        record: Some(serde_json::to_string(&stored).map_err(StoreError::Encode)?),
                        error: None,
                        positions: u32::try_from(count).unwrap_or(u32::MAX),
                    });
                }
                Err(error) => {
                    errors.push(error.clone());
                    games.push(NewJobGame {
                        record: None,
                        error: Some(serde_json::to_string(&ErrorJson::of(error)).map_err(StoreError::Encode)?),
                        positions: 0,
                    });
                }
            }
        }
        if errors.len() == records.len() {
            return Err(SubmitError::NoGames(errors.swap_remove(0)));
        }
        if positions > self.inner.config.max_positions as u64 {
            return Err(SubmitError::TooManyPositions { positions, max: self.inner.config.max_positions });
        }
        let id = new_job_id();
        let job = NewJob {
            id: id.clone(),
            game: G::NAME.to_string(),
            settings: serde_json::to_string(&settings).map_err(StoreError::Encode)?,
            games,
            owner,
        };
        let config = &self.inner.config;
        // On a shared store a server takes no more jobs at once than it has searches in flight (as when it
        // claims them): a job beyond that is left in the store to the first server with room, this one or
        // another, rather than run here beside the others while other servers idle.
        if !self.inner.store.is_shared() || self.running_jobs() < config.max_in_flight.max(1) {
            self.inner.store.create_job_claimed(&job, &config.node, config.lease).await?;
            info!(job = %id, game = G::NAME, games = records.len(), positions, "annotation job created");
            self.spawn(id.clone(), G::NAME);
        } else {
            self.inner.store.create_job(&job).await?;
            info!(
                job = %id, game = G::NAME, games = records.len(), positions,
                "annotation job created; left to the first server with room"
            );
        }
        Ok(Submitted { id, games: records.len(), positions, errors })
    }

    /// Start every job a previous run left queued or running. Returns how many. On a shared store, start
    /// looking for jobs nobody holds instead (now and every `poll`), until the shutdown; returns 0.
    pub async fn resume(&self) -> Result<usize, StoreError> {
        if let Some(keep) = self.inner.config.keep {
            let this = self.clone();
            tokio::spawn(async move { this.sweep_loop(keep).await });
        }
        if self.inner.store.is_shared() {
            let this = self.clone();
            tokio::spawn(async move { this.claim_loop().await });
            return Ok(0);
        }
        let ids = self.inner.store.jobs_with_status(&[JobStatus::Queued, JobStatus::Running]).await?;
        let mut started = 0;
        for id in ids {
            let Some(job) = self.inner.store.job(&id).await? else { continue };
            match job.game.parse::<GameKind>() {
                Ok(kind) => {
                    info!(job = %id, game = %job.game, "resuming annotation job");
                    self.spawn(id, kind.name());
                    started += 1;
                }
                Err(e) => {
                    let why = format!("cannot resume: {e}");
                    let _ = self
                        .inner
                        .store
                        .set_job_status(&id, &[JobStatus::Queued, JobStatus::Running], JobStatus::Failed, Some(&why))
                        .await;
                }
            }
        }
        Ok(started)
    }

    /// Claim and start jobs nobody holds while this server has room (no more jobs than searches in flight),
    /// every `poll` and whenever one of its jobs ends, until the shutdown. A job this server cannot run (its
    /// external engine is not configured here) is let go at once for a server that can, and passed over for
    /// [`RECHECK_UNRUNNABLE`].
    async fn claim_loop(&self) {
        let inner = &self.inner;
        let mut shutdown = inner.shutdown.subscribe();
        let mut unrunnable: HashMap<String, Instant> = HashMap::new();
        loop {
            unrunnable.retain(|_, since| since.elapsed() < RECHECK_UNRUNNABLE);
            let mut skip: Vec<String> = unrunnable.keys().cloned().collect();
            while self.running_jobs() < inner.config.max_in_flight.max(1) && !*shutdown.borrow() {
                let id = match inner.store.claim_job(&inner.config.node, inner.config.lease, &skip).await {
                    Ok(Some(id)) => id,
                    Ok(None) => break,
                    Err(error) => {
                        debug!(%error, "cannot look for annotation jobs to resume");
                        break;
                    }
                };
                let job = match inner.store.job(&id).await {
                    Ok(Some(job)) => job,
                    Ok(None) => continue,
                    Err(error) => {
                        debug!(%error, job = %id, "cannot read a claimed job; it is released");
                        let _ = inner.store.release_job(&id, &inner.config.node, None).await;
                        break;
                    }
                };
                match job.game.parse::<GameKind>() {
                    Ok(kind) => {
                        if let Some(missing) = self.missing_engine(kind, &job.settings) {
                            info!(job = %id, engine = %missing, "this server lacks the job's engine; it is left to a server that has it");
                            let why = format!(
                                "node `{}` has no {} engine `{missing}`: the job waits for a node that has it",
                                inner.config.node,
                                kind.name()
                            );
                            let _ = inner.store.release_job(&id, &inner.config.node, Some(&why)).await;
                            unrunnable.insert(id.clone(), Instant::now());
                            skip.push(id);
                            continue;
                        }
                        info!(job = %id, game = %job.game, "taking up annotation job");
                        self.spawn(id, kind.name());
                    }
                    Err(e) => {
                        let why = format!("cannot resume: {e}");
                        let from = [JobStatus::Queued, JobStatus::Running];
                        let _ = inner.store.set_job_status(&id, &from, JobStatus::Failed, Some(&why)).await;
                    }
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(inner.config.poll) => {}
                _ = inner.room.notified() => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
        }
    }

    /// The external engine a job's stored settings name that this server does not have for `kind`; `None`
    /// when it can run the job (settings that do not read are the job's own failure, told when it runs).
    fn missing_engine(&self, kind: GameKind, settings: &str) -> Option<String> {
        let settings: Settings = serde_json::from_str(settings).ok()?;
        let name = settings.engine?;
        self.inner.analysis.choose(kind, Some(&name)).is_err().then_some(name)
    }

    fn running_jobs(&self) -> usize {
        self.inner.running.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Cancel a job: it is marked cancelled and its search stops. False when it is unknown or already over.
    pub async fn cancel(&self, id: &str) -> Result<bool, StoreError> {
        let changed = self
            .inner
            .store
            .set_job_status(id, &[JobStatus::Queued, JobStatus::Running], JobStatus::Cancelled, None)
            .await?;
        if let Some(control) = self.control(id) {
            control.cancel.send_replace(true);
            control.progress.send_modify(|p| p.status = JobStatus::Cancelled.as_str());
        }
        Ok(changed)
    }

    /// Remove a job, its games and its results from the store, cancelling it first if it is not over; false
    /// when there was none. This server's task for it is let end before the removal, so that none of its
    /// writes comes after it (a server sharing the store that runs the job stops when it finds it gone).
    pub async fn remove(&self, id: &str) -> Result<bool, StoreError> {
        self.cancel(id).await?;
        let waited = Instant::now();
        while self.control(id).is_some() && waited.elapsed() < REMOVE_WAIT {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let removed = self.inner.store.delete_job(id).await?;
        if removed {
            info!(job = %id, "annotation job removed");
        }
        Ok(removed)
    }

    /// Remove the jobs over for longer than `keep`, now and every [`SWEEP_EVERY`], until the shutdown.
    async fn sweep_loop(&self, keep: Duration) {
        let mut shutdown = self.inner.shutdown.subscribe();
        loop {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
            let before = i64::try_from(now.saturating_sub(keep).as_millis()).unwrap_or(i64::MAX);
            match self.inner.store.delete_jobs_over_before(before).await {
                Ok(0) => {}
                Ok(removed) => info!(removed, kept_s = keep.as_secs(), "annotation jobs kept past their time removed"),
                Err(error) => warn!(%error, "cannot remove the annotation jobs kept past their time"),
            }
            tokio::select! {
                _ = tokio::time::sleep(SWEEP_EVERY) => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
        }
    }

    /// Progress of a job this server is running now (on a shared store another server may run it: its
    /// progress is then in the store).
    pub fn watch(&self, id: &str) -> Option<watch::Receiver<Progress>> {
        self.control(id).map(|c| c.progress.subscribe())
    }

    /// Stop every job without marking it (they resume at the next start); results arriving after this are
    /// dropped, since a search stopped by the shutdown is shallower than asked.
    pub fn begin_shutdown(&self) {
        self.inner.shutdown.send_replace(true);
    }

    /// Wait up to `timeout` for the job tasks to end (after [`Annotator::begin_shutdown`]); true when none is
    /// left.
    pub async fn wait_stopped(&self, timeout: Duration) -> bool {
        let mut tasks = self.inner.tasks.subscribe();
        tokio::time::timeout(timeout, tasks.wait_for(|n| *n == 0)).await.is_ok_and(|r| r.is_ok())
    }

    fn control(&self, id: &str) -> Option<Arc<Control>> {
        self.inner.running.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned()
    }

    fn spawn(&self, id: String, game: &'static str) {
        let Ok(kind) = game.parse::<GameKind>() else { return };
        let control = Arc::new(Control {
            cancel: watch::Sender::new(false),
            progress: watch::Sender::new(Progress { status: JobStatus::Queued.as_str(), done: 0, total: 0 }),
        });
        {
            let mut running = self.inner.running.lock().unwrap_or_else(|e| e.into_inner());
            if running.contains_key(&id) {
                return;
            }
            running.insert(id.clone(), Arc::clone(&control));
        }
        self.inner.tasks.send_modify(|n| *n += 1);
        let inner = Arc::clone(&self.inner);
        let span = info_span!("annotation", job = %id, game);
        tokio::spawn(
            async move {
                let (mut attempt, mut refusals) = (0, 0);
                let outcome = loop {
                    let outcome = with_game!(kind, G =>
                        leased(&inner, &id, &control, run_job::<G>(&inner, &id, &control)).await);
                    // Removed by a client while it ran (its writes then fail): nothing is left to mark.
                    if matches!(outcome, Some(Err(JobError::Store(_))))
                        && matches!(inner.store.job(&id).await, Ok(None))
                    {
                        info!("the job was removed while it ran");
                        break None;
                    }
                    // On the embedded store no other server resumes a job: a store error is tried again here,
                    // from what is stored. An outage (the file locked by another program past SQLite's own
                    // wait, a full disk) is waited out however long it lasts; a query refused otherwise, a
                    // few times before the job is failed.
                    let local_store_error = match &outcome {
                        Some(Err(JobError::Store(error @ StoreError::Query(_)))) if !inner.store.is_shared() => {
                            Some(inner.store.is_local_outage(error))
                        }
                        _ => None,
                    };
                    if let Some(outage) = local_store_error
                        && (outage || refusals < LOCAL_STORE_ATTEMPTS)
                        && !*inner.shutdown.borrow()
                    {
                        attempt += 1;
                        if !outage {
                            refusals += 1;
                        }
                        if let Some(Err(error)) = &outcome {
                            warn!(%error, attempt, outage, "annotation job: the store failed; trying again");
                        }
                        let wait = (LOCAL_STORE_WAIT * 2u32.pow(attempt.min(5) - 1)).min(LOCAL_STORE_LONGEST_WAIT);
                        let mut shutdown = inner.shutdown.subscribe();
                        tokio::select! {
                            _ = tokio::time::sleep(wait) => {}
                            _ = shutdown.wait_for(|stopping| *stopping) => {}
                        }
                        continue;
                    }
                    break outcome;
                };
                match outcome {
                    None => {}
                    Some(Ok(status)) => {
                        debug!(status = %status, "annotation job task ends");
                        if status == JobStatus::Running {
                            // Stopped by the shutdown: let another server take it at once.
                            let _ = inner.store.release_job(&id, &inner.config.node, None).await;
                        }
                    }
                    // A shared store that failed (an outage): the job is not at fault. Let it go; a server (this
                    // one, polling) resumes it once the store answers again.
                    Some(Err(JobError::Store(error @ (StoreError::Query(_) | StoreError::Unreachable { .. }))))
                        if inner.store.is_shared() && !*inner.shutdown.borrow() =>
                    {
                        warn!(%error, "annotation job stopped: the store failed; it resumes when the store answers");
                        let _ = inner.store.release_job(&id, &inner.config.node, None).await;
                    }
                    Some(Err(error)) => {
                        warn!(%error, "annotation job failed");
                        let why = error.to_string();
                        let from = [JobStatus::Queued, JobStatus::Running];
                        // On the embedded store nobody else would ever mark the job: its failure is stored
                        // however long the store takes to accept it (on a shared one, the lease runs out and
                        // a server takes the job up again).
                        let mut wait = LOCAL_STORE_WAIT;
                        while !*inner.shutdown.borrow() {
                            match inner.store.set_job_status(&id, &from, JobStatus::Failed, Some(&why)).await {
                                Ok(changed) => {
                                    if changed {
                                        control.progress.send_modify(|p| p.status = JobStatus::Failed.as_str());
                                    }
                                    break;
                                }
                                Err(error) if !inner.store.is_shared() => {
                                    warn!(%error, "annotation job: its failure could not be stored; trying again");
                                    let mut shutdown = inner.shutdown.subscribe();
                                    tokio::select! {
                                        _ = tokio::time::sleep(wait) => {}
                                        _ = shutdown.wait_for(|stopping| *stopping) => {}
                                    }
                                    wait = (wait * 2).min(LOCAL_STORE_LONGEST_WAIT);
                                }
                                Err(error) => {
                                    warn!(%error, "annotation job: its failure could not be stored");
                                    break;
                                }
                            }
                        }
                        if *inner.shutdown.borrow() {
                            let _ = inner.store.release_job(&id, &inner.config.node, None).await;
                        }
                    }
                }
                inner.running.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
                inner.tasks.send_modify(|n| *n = n.saturating_sub(1));
                inner.room.notify_one();
            }
            .instrument(span),
        );
    }
}

/// A record error as a job stores and reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ErrorJson {
    pub index: usize,
    pub line: usize,
    pub token: String,
    pub message: String,
}

impl ErrorJson {
    pub fn of(e: &RecordError) -> ErrorJson {
        ErrorJson { index: e.index, line: e.line, token: e.token.clone(), message: e.message.clone() }
    }
}

/// Run `job` while this server holds the job's lease (on a shared store; elsewhere just run it): renew it
/// every third of the lease, pass a cancellation seen in the store on to the job, and drop the job (stopping
/// its searches, touching nothing in the store) when the lease is lost. `None` when it was lost.
async fn leased<F>(inner: &Inner, id: &str, control: &Control, job: F) -> Option<F::Output>
where
    F: std::future::Future,
{
    if !inner.store.is_shared() {
        return Some(job.await);
    }
    let keep = async {
        let config = &inner.config;
        let every = (config.lease / 3).max(Duration::from_millis(50));
        let mut held_since = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(every).await;
            match inner.store.renew_job(id, &config.node, config.lease).await {
                Ok(Some(JobStatus::Cancelled)) => {
                    held_since = tokio::time::Instant::now();
                    if !control.cancel.send_replace(true) {
                        info!("the job was cancelled through another server");
                        control.progress.send_modify(|p| p.status = JobStatus::Cancelled.as_str());
                    }
                }
                Ok(Some(_)) => held_since = tokio::time::Instant::now(),
                Ok(None) => {
                    warn!(
                        "the job's lease is no longer this server's (another server took it, or the job was removed); stopping here"
                    );
                    return;
                }
                // The store is away: the lease may run out meanwhile; past it, another server may have the job.
                Err(error) if held_since.elapsed() >= config.lease => {
                    warn!(%error, "the job's lease could not be renewed in time; stopping here");
                    return;
                }
                Err(error) => debug!(%error, "cannot renew the job's lease; retrying"),
            }
        }
    };
    tokio::select! {
        output = job => Some(output),
        () = keep => None,
    }
}

/// Why a job task stopped early.
#[derive(Debug, thiserror::Error)]
enum JobError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Bad(String),
}

/// Run one job to its end (or until it is cancelled or the server stops). Returns the status it leaves.
async fn run_job<G: Game>(inner: &Arc<Inner>, id: &str, control: &Control) -> Result<JobStatus, JobError> {
    let store = &inner.store;
    let Some(job) = store.job(id).await? else { return Err(JobError::Bad(format!("job {id} vanished"))) };
    if job.status.is_final() {
        return Ok(job.status);
    }
    let settings: Settings =
        serde_json::from_str(&job.settings).map_err(|e| JobError::Bad(format!("stored settings: {e}")))?;
    let games = store.job_games(id).await?;
    // The positions already written (a resumed job); each is checked as its turn comes.
    let written: HashMap<(u32, u32), String> =
        store.job_positions(id).await?.into_iter().map(|p| ((p.game_idx, p.ply), p.result)).collect();
    let total: u64 = games.iter().map(|g| u64::from(g.positions)).sum();
    let mut finished = written.len() as u64;
    control.progress.send_replace(Progress { status: JobStatus::Running.as_str(), done: finished, total });
    store.set_job_status(id, &[JobStatus::Queued], JobStatus::Running, None).await?;

    let limits = settings.limits();
    let engine = match (&settings.engine, G::NAME.parse::<crate::games::GameKind>()) {
        (Some(name), Ok(kind)) => {
            inner.analysis.choose(kind, Some(name)).map_err(|e| JobError::Bad(format!("the job's engine: {e}")))?
        }
        _ => EngineChoice::Own,
    };
    let mut cancel = control.cancel.subscribe();
    let mut shutdown = inner.shutdown.subscribe();
    // Up to `max_in_flight` positions at once (the pool's permits bound all jobs together); each game from
    // its last position back, so the positions searched together are neighbours in one game.
    let width = inner.config.max_in_flight.max(1);
    let mut running: JoinSet<(u32, u32, Evaluated)> = JoinSet::new();
    for game in &games {
        let Some(text) = &game.record else { continue };
        let stored: StoredRecord =
            serde_json::from_str(text).map_err(|e| JobError::Bad(format!("stored game {}: {e}", game.idx)))?;
        let record = stored.replay::<G>().map_err(|e| JobError::Bad(format!("game {}: {e}", game.idx + 1)))?;
        // The positions from the last back, each made from the one after it by taking its move back: one
        // position at a time with the game's history, and the copies in flight (all of a game's positions
        // made at once took memory growing with the square of its length: gigabytes for a legal game of a
        // few thousand plies, and a server that died at every start resuming it).
        let mut game_at = record.start.clone();
        for &m in &record.moves {
            game_at.make(m);
        }
        for ply in (0..=record.moves.len()).rev() {
            if ply < record.moves.len() {
                game_at.unmake();
            }
            let ply = u32::try_from(ply).unwrap_or(u32::MAX);
            if let Some(text) = written.get(&(game.idx, ply)) {
                let checked = serde_json::from_str::<PositionEval>(text)
                    .map_err(|e| e.to_string())
                    .and_then(|eval| eval.check(&game_at));
                let Err(problem) = checked else { continue };
                // Written but unusable (it would only be skipped by every report): evaluated again.
                warn!(job = %id, game = game.idx, ply, %problem, "an annotation result in the store is unusable");
                store.delete_job_position(id, game.idx, ply).await?;
                finished -= 1;
                control.progress.send_modify(|p| p.done = finished);
            }
            while running.len() >= width {
                if let Some(stop) =
                    collect(inner, id, control, &mut running, &mut cancel, &mut shutdown, &mut finished).await?
                {
                    return Ok(stop);
                }
            }
            if *cancel.borrow() {
                return Ok(JobStatus::Cancelled);
            }
            if *shutdown.borrow() {
                return Ok(JobStatus::Running);
            }
            let position = game_at.clone();
            let (task_inner, task_limits, task_settings, task_engine, game_idx) =
                (Arc::clone(inner), limits.clone(), settings.clone(), engine.clone(), game.idx);
            running.spawn(async move {
                let eval = evaluate(&task_inner, &position, &task_limits, &task_settings, task_engine).await;
                (game_idx, ply, eval)
            });
        }
    }
    while !running.is_empty() {
        if let Some(stop) = collect(inner, id, control, &mut running, &mut cancel, &mut shutdown, &mut finished).await?
        {
            return Ok(stop);
        }
    }
    if store.set_job_status(id, &[JobStatus::Running], JobStatus::Done, None).await? {
        control.progress.send_modify(|p| p.status = JobStatus::Done.as_str());
        info!(positions = finished, "annotation job done");
        Ok(JobStatus::Done)
    } else {
        let status = store.job(id).await?.map_or(JobStatus::Cancelled, |j| j.status);
        control.progress.send_modify(|p| p.status = status.as_str());
        Ok(status)
    }
}

/// Wait for one evaluation of `running` and write it; `Some(status)` when the job must stop instead (cancelled,
/// or the server shuts down: dropping the set then cancels the other searches).
async fn collect(
    inner: &Inner,
    id: &str,
    control: &Control,
    running: &mut JoinSet<(u32, u32, Evaluated)>,
    cancel: &mut watch::Receiver<bool>,
    shutdown: &mut watch::Receiver<bool>,
    finished: &mut u64,
) -> Result<Option<JobStatus>, JobError> {
    let joined = tokio::select! {
        joined = running.join_next() => joined,
        _ = cancel.wait_for(|c| *c) => return Ok(Some(JobStatus::Cancelled)),
        _ = shutdown.wait_for(|s| *s) => return Ok(Some(JobStatus::Running)),
    };
    let Some(joined) = joined else { return Ok(None) };
    let (game_idx, ply, eval) = joined.map_err(|e| JobError::Bad(format!("an evaluation failed: {e}")))?;
    let eval = eval.map_err(|why| JobError::Bad(format!("game {}, ply {ply}: {why}", game_idx + 1)))?;
    let Some(eval) = eval else {
        // Stopped by the shutdown: the job resumes at the next start.
        return Ok(Some(JobStatus::Running));
    };
    let json = serde_json::to_string(&eval).map_err(StoreError::Encode)?;
    if inner.store.put_job_position(id, game_idx, ply, &json).await? {
        *finished += 1;
    }
    let done = *finished;
    control.progress.send_modify(|p| p.done = done);
    Ok(None)
}

/// What evaluating one position gave: the evaluation, `None` when the server shuts down first, or why the
/// job cannot go on (its external engine keeps failing, or the search ended without an answer).
type Evaluated = Result<Option<PositionEval>, String>;

/// Attempts at one position when its external engine fails (each failure restarts the engine's process).
const ENGINE_ATTEMPTS: u32 = 3;

/// Runs of a job on the embedded store after the store refused a query (an outage is waited out), and the
/// wait before the first run again (doubling at each, up to [`LOCAL_STORE_LONGEST_WAIT`]).
const LOCAL_STORE_ATTEMPTS: u32 = 3;
const LOCAL_STORE_WAIT: Duration = Duration::from_secs(2);
/// The longest wait between runs of a job, or attempts to store its failure, on the embedded store.
const LOCAL_STORE_LONGEST_WAIT: Duration = Duration::from_secs(30);

/// Evaluate one position through the analysis path: the game's end, the cache, or a search at the job's
/// priority (its result also goes to the cache).
async fn evaluate<G: Game>(
    inner: &Inner,
    position: &G,
    limits: &crate::search::Limits,
    settings: &Settings,
    engine: EngineChoice,
) -> Evaluated {
    if let Some(end) = position.outcome() {
        return Ok(Some(PositionEval::ended(position, end)));
    }
    let request = Request::new(position.clone(), limits.clone()).priority(settings.pool_priority()).engine(engine);
    // A cached result needs no search, so no permit.
    if let Some(key) = request.cache_key()
        && let Some(found) = inner.analysis.lookup_satisfying(&key, position, limits).await
        && satisfies(&found, limits)
    {
        return Ok(Some(PositionEval::searched(&found, true).unwrap_or_else(|| PositionEval::unjudged(&found))));
    }
    let Ok(_permit) = inner.permits.acquire().await else { return Ok(None) };
    let mut failures = 0;
    let answer = loop {
        if *inner.shutdown.borrow() {
            return Ok(None);
        }
        match inner.analysis.analyse(request.clone()).await {
            Ok(answer) => break answer,
            Err(AnalysisError::Busy(PoolError::Busy { .. } | PoolError::ClientBusy { .. })) => {
                tokio::time::sleep(inner.config.busy_retry).await
            }
            Err(AnalysisError::Engine(failure)) if failure.busy => tokio::time::sleep(inner.config.busy_retry).await,
            Err(AnalysisError::Engine(failure)) if failure.unsupported => return Err(failure.to_string()),
            Err(AnalysisError::Engine(failure)) => {
                failures += 1;
                debug!(%failure, failures, "the engine failed an annotation search");
                if failures >= ENGINE_ATTEMPTS {
                    return Err(format!("the engine failed {failures} times: {failure}"));
                }
            }
            Err(AnalysisError::Busy(PoolError::ShuttingDown)) => return Ok(None),
            Err(error) if *inner.shutdown.borrow() => {
                debug!(%error, "annotation search ended without an answer at shutdown");
                return Ok(None);
            }
            // Not the shutdown (which is set before the pool stops): the search itself failed, as it would
            // again at every attempt and every start, so the job fails and says why.
            Err(error) => return Err(format!("the search failed: {error}")),
        }
    };
    if *inner.shutdown.borrow() && !answer.cached {
        return Ok(None);
    }
    let result = &answer.result;
    Ok(Some(PositionEval::searched(result, answer.cached).unwrap_or_else(|| PositionEval::unjudged(result))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::{Pool, PoolConfig};

    /// A server keeping jobs for a while removes those over for longer (at its start and every
    /// [`SWEEP_EVERY`]), and never one that still runs.
    #[tokio::test]
    async fn jobs_over_for_longer_than_kept_are_removed() {
        let store = Store::open("sqlite::memory:").await.expect("store");
        for (id, status) in [("over", JobStatus::Done), ("going", JobStatus::Running)] {
            let job = NewJob {
                id: id.into(),
                game: "chess".into(),
                settings: "{}".into(),
                games: vec![NewJobGame { record: None, error: Some("{}".into()), positions: 0 }],
                owner: None,
            };
            store.create_job(&job).await.expect("job");
            store.set_job_status(id, &[JobStatus::Queued], status, None).await.expect("status");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        let pool = Pool::new(PoolConfig { workers: 1, queue: 4, hash_mb: 1, clock_workers: 0 });
        let analysis = Analysis::new(pool, store.clone());
        let config = AnnotatorConfig { keep: Some(Duration::from_millis(10)), ..AnnotatorConfig::for_workers(1) };
        let annotator = Annotator::new(analysis, store.clone(), config);
        annotator.resume().await.expect("resumes");
        let waited = Instant::now();
        while store.job("over").await.expect("reads").is_some() {
            assert!(waited.elapsed() < Duration::from_secs(30), "the job over was not removed");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        annotator.begin_shutdown();
        // The running one is there still (resumed, it may have ended since, but only just now).
        assert!(store.job("going").await.expect("reads").is_some());
        assert!(annotator.wait_stopped(Duration::from_secs(30)).await);
    }
}
