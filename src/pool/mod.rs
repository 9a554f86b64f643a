//! The worker pool: a fixed set of OS threads that run searches for every client.
//!
//! A job is a position, limits, options and a progress sink. [`Pool::submit`] queues it and returns at once:
//! either a [`JobHandle`] or [`PoolError::Busy`] when the bounded queue is full, so a caller is never left
//! hanging. The sink receives the search's [`Event`]s on the worker thread, ending with [`Event::Done`]; it
//! must not block for long (send into a channel). Dropping the handle cancels the job: a queued job is
//! skipped, a running one stops within milliseconds. [`JobHandle::stop`] instead asks a running search for
//! its answer now (a job stopped before it started still answers, after a minimal search).
//!
//! The pool owns the transposition table shared by all its searches; its size can be changed between jobs.
//!
//! Within a priority, the queue is fair between clients ([`SearchRequest::client`]): each client has its own
//! line, and free workers take the first job of each line in turn, so one client's backlog delays its own
//! later searches, not another client's.
//!
//! Endless searches (until stopped) run in slices and yield their workers to searches waiting, to go on
//! after them: see [`endless`].

mod endless;

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::game::Game;
use crate::search::{self, Event, Limits, SearchOptions, TranspositionTable};

/// Why a job was not accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    #[error("all {workers} search workers are busy and the queue of {capacity} jobs is full")]
    Busy { workers: usize, capacity: usize },
    /// The client has its share of the queue waiting already ([`client_share`]).
    #[error("{waiting} of this client's searches wait already, its share of the queue of {capacity}; end one first")]
    ClientBusy { waiting: usize, capacity: usize },
    #[error("the worker pool is shutting down")]
    ShuttingDown,
}

/// Which queued job a free worker takes first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// Batch work (annotation of collections).
    Low = 0,
    #[default]
    Normal = 1,
    /// A person waiting on a GUI.
    High = 2,
    /// A move in a game being played (a GUIDE or DXP game): it goes first, a clock worker may take it (see
    /// [`PoolConfig::clock_workers`]) unless it is endless, and a fixed time per move counts from submission, as
    /// a clock does: the opponent waits for the move from when it was asked.
    Play = 3,
}

/// How the pool is built.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// Worker threads (each runs one search at a time).
    pub workers: usize,
    /// Jobs that may wait for a worker before submissions are refused.
    pub queue: usize,
    /// Transposition table size in MiB.
    pub hash_mb: usize,
    /// Worker threads beside `workers` that take only the moves of games being played (searches on a game clock,
    /// or at [`Priority::Play`]): a player's move (a GUIDE session's, say) starts at once even while every worker
    /// is busy with other searches, instead of waiting in the queue until its time runs out. Not counted in
    /// [`PoolStats`]' workers and busy.
    pub clock_workers: usize,
}

impl Default for PoolConfig {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        PoolConfig { workers: cores, queue: 64, hash_mb: 64, clock_workers: 0 }
    }
}

/// A search to run.
pub struct SearchRequest<G: Game> {
    pub game: G,
    pub limits: Limits,
    pub options: SearchOptions,
    pub priority: Priority,
    /// Who asked (an API key, an address, a protocol session); jobs without one share one line.
    pub client: Option<Arc<str>>,
}

/// What the pool is doing, for health checks and metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolStats {
    pub workers: usize,
    pub busy: usize,
    /// Searches waiting for a worker (at most the queue's capacity).
    pub queued: usize,
    /// Endless searches that yielded their worker and wait for their next slice (not counted in `queued`).
    pub paused: usize,
    pub capacity: usize,
    pub completed: u64,
    pub nodes: u64,
}

#[derive(Default)]
struct JobState {
    /// What the running search polls: its answer is wanted now, or (with `preempt`) it is to yield.
    stop: Arc<AtomicBool>,
    /// The client asked for the answer now (`stop` alone may be the slicer's).
    asked: AtomicBool,
    /// The slicer asked the endless search to yield its worker and go on later.
    preempt: AtomicBool,
    /// The endless search has yielded and waits in the queue to go on.
    paused: AtomicBool,
    /// The client is gone: skip the job if it has not started, stop it if it has.
    cancelled: AtomicBool,
    /// The search runs until stopped (and so in slices, see [`endless`]).
    endless: bool,
    priority: Priority,
    finished: Mutex<bool>,
    finished_cond: Condvar,
}

impl JobState {
    /// The client wants the answer now, or none at all.
    fn is_stopping(&self) -> bool {
        self.asked.load(Ordering::SeqCst) || self.cancelled.load(Ordering::SeqCst)
    }

    /// The client wants the answer now.
    fn ask_stop(&self) {
        self.asked.store(true, Ordering::SeqCst);
        self.stop.store(true, Ordering::SeqCst);
    }

    fn finish(&self) {
        *lock(&self.finished) = true;
        self.finished_cond.notify_all();
    }
}

/// What a run of a job did: the nodes it searched, and whether it yielded its worker to go on later.
struct Ran {
    nodes: u64,
    yielded: bool,
}

/// A job's search, run once (or, for an endless search, once a slice until it no longer yields).
type Work = Box<dyn FnMut(&Arc<TranspositionTable>) -> Ran + Send>;

struct Queued {
    work: Work,
    state: Arc<JobState>,
    /// The search plays a game's move, on a clock or at [`Priority::Play`] (a clock worker may take it).
    clock: bool,
    /// Who asked: the line a yielded endless search goes back to.
    client: Option<Arc<str>>,
}

impl Queued {
    fn is_paused(&self) -> bool {
        self.state.paused.load(Ordering::SeqCst)
    }
}

/// The places in a queue of `capacity` that one client's searches may hold at once: a quarter, at least one.
pub fn client_share(capacity: usize) -> usize {
    (capacity / 4).max(1)
}

/// One priority's queue: a line per client, served in turn (round robin).
#[derive(Default)]
struct Fair {
    lines: VecDeque<(Option<Arc<str>>, VecDeque<Queued>)>,
    len: usize,
}

impl Fair {
    fn push(&mut self, client: Option<Arc<str>>, job: Queued) {
        self.len += 1;
        match self.lines.iter_mut().find(|(c, _)| *c == client) {
            Some((_, line)) => line.push_back(job),
            None => self.lines.push_back((client, VecDeque::from([job]))),
        }
    }

    /// The first job of the line whose turn it is; that line goes to the back.
    fn pop(&mut self) -> Option<Queued> {
        self.pop_where(|_| true)
    }

    /// Take out every job passing `wanted`, whatever its turn.
    fn take_where(&mut self, wanted: impl Fn(&Queued) -> bool) -> Vec<Queued> {
        let mut taken = Vec::new();
        for (_, line) in self.lines.iter_mut() {
            let (out, kept): (VecDeque<Queued>, VecDeque<Queued>) = std::mem::take(line).into_iter().partition(&wanted);
            *line = kept;
            taken.extend(out);
        }
        self.lines.retain(|(_, line)| !line.is_empty());
        self.len -= taken.len();
        taken
    }

    /// The first job passing `wanted` of the first line (in turn) that holds one; that line goes to the back.
    fn pop_where(&mut self, wanted: impl Fn(&Queued) -> bool) -> Option<Queued> {
        let at = self.lines.iter().position(|(_, line)| line.iter().any(&wanted))?;
        let (client, mut line) = self.lines.remove(at)?;
        let job = line.iter().position(&wanted).and_then(|i| line.remove(i));
        if !line.is_empty() {
            self.lines.push_back((client, line));
        }
        if job.is_some() {
            self.len -= 1;
        }
        job
    }

    /// Take out the jobs cancelled while they waited (they would only be skipped when their turn came, holding
    /// places in the queue meanwhile).
    fn remove_cancelled(&mut self) -> Vec<Queued> {
        self.take_where(|q| q.state.cancelled.load(Ordering::Relaxed))
    }

    /// Jobs waiting that nobody has cancelled: new ones, and (`paused`) endless searches waiting for their next
    /// slice.
    fn live(&self, paused: bool) -> usize {
        self.jobs().filter(|q| !q.state.cancelled.load(Ordering::Relaxed) && q.is_paused() == paused).count()
    }

    /// Jobs of `client` holding places in the queue (waiting, not cancelled, not endless searches between
    /// slices).
    fn waiting_of(&self, client: &Arc<str>) -> usize {
        self.lines
            .iter()
            .filter(|(c, _)| c.as_ref() == Some(client))
            .flat_map(|(_, line)| line)
            .filter(|q| !q.state.cancelled.load(Ordering::Relaxed) && !q.is_paused())
            .count()
    }

    /// Endless searches waiting for their next slice.
    fn paused(&self) -> usize {
        self.jobs().filter(|q| q.is_paused()).count()
    }

    fn jobs(&self) -> impl Iterator<Item = &Queued> {
        self.lines.iter().flat_map(|(_, line)| line)
    }

    fn drain(&mut self) -> impl Iterator<Item = Queued> + '_ {
        self.len = 0;
        self.lines.drain(..).flat_map(|(_, line)| line)
    }
}

#[derive(Default)]
struct Queues {
    by_priority: [Fair; 4],
    shutdown: bool,
}

impl Queues {
    fn len(&self) -> usize {
        self.by_priority.iter().map(|f| f.len).sum()
    }

    /// The places taken in the queue: every job waiting but the endless searches waiting for their next slice
    /// (admitted already, they take turns on the workers rather than wait for one).
    fn taken(&self) -> usize {
        self.len() - self.by_priority.iter().map(Fair::paused).sum::<usize>()
    }

    fn pop(&mut self) -> Option<Queued> {
        self.by_priority.iter_mut().rev().find_map(Fair::pop)
    }

    /// The next move of a game being played, for a clock worker.
    fn pop_clock(&mut self) -> Option<Queued> {
        self.by_priority.iter_mut().rev().find_map(|f| f.pop_where(|q| q.clock))
    }
}

struct Inner {
    queues: Mutex<Queues>,
    work_ready: Condvar,
    capacity: usize,
    workers: usize,
    /// Worker threads that take only searches on a game clock (see [`PoolConfig::clock_workers`]).
    clock_workers: usize,
    busy: AtomicUsize,
    completed: AtomicU64,
    nodes: AtomicU64,
    tt: RwLock<Arc<TranspositionTable>>,
    running: Mutex<Vec<endless::Slice>>,
    /// Wakes the slicer ([`endless::slicer`]): a search was queued or an endless one started.
    slicer_wake: Condvar,
    slices: endless::Slices,
}

/// Lock a mutex, recovering the data if a panicking thread poisoned it (the pool's state stays consistent
/// because every critical section is a few plain assignments).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The pool. Cloning it is cheap and shares the same workers; when the last clone is dropped the pool shuts
/// down (running searches are stopped, the workers joined).
#[derive(Clone)]
pub struct Pool {
    owner: Arc<Owner>,
}

struct Owner {
    inner: Arc<Inner>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl Owner {
    fn shutdown(&self) {
        {
            let mut queues = lock(&self.inner.queues);
            queues.shutdown = true;
            for q in queues.by_priority.iter_mut() {
                for job in q.drain() {
                    job.state.finish();
                }
            }
        }
        for job in lock(&self.inner.running).iter() {
            job.state.cancelled.store(true, Ordering::Relaxed);
            job.state.stop.store(true, Ordering::Relaxed);
        }
        self.inner.work_ready.notify_all();
        self.inner.slicer_wake.notify_all();
        let threads: Vec<JoinHandle<()>> = lock(&self.threads).drain(..).collect();
        let me = std::thread::current().id();
        for t in threads {
            // A sink that drops the last pool clone runs on a worker: that worker cannot join itself.
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}

/// A submitted job. Dropping it cancels the job; [`JobHandle::detach`] lets it run to its end instead.
pub struct JobHandle {
    state: Arc<JobState>,
    detached: bool,
}

impl JobHandle {
    /// Ask the search for its best answer now; its sink still receives `Done`.
    pub fn stop(&self) {
        self.state.ask_stop();
    }

    /// Stop the search and drop its answer: a queued job never starts, a running one ends within
    /// milliseconds (its sink may still get a last `Done`).
    pub fn cancel(&self) {
        self.state.cancelled.store(true, Ordering::SeqCst);
        self.state.ask_stop();
    }

    /// Wait up to `timeout` for the job to finish; true when it has.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut finished = lock(&self.state.finished);
        while !*finished {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            finished = match self.state.finished_cond.wait_timeout(finished, deadline - now) {
                Ok((guard, _)) => guard,
                Err(e) => e.into_inner().0,
            };
        }
        true
    }

    /// A handle that can only ask for the answer now, usable from anywhere (a timer thread, say).
    pub fn stopper(&self) -> Stopper {
        Stopper(Arc::clone(&self.state))
    }

    /// A handle for a search run elsewhere (an external engine's): the [`JobControl`] side tells that search
    /// when it is asked to stop or cancelled, and marks it finished when dropped.
    pub fn external() -> (JobHandle, JobControl) {
        let state = Arc::new(JobState::default());
        (JobHandle { state: Arc::clone(&state), detached: false }, JobControl { state })
    }

    /// Let the job run to its end even when this handle is dropped.
    pub fn detach(mut self) {
        self.detached = true;
    }
}

/// The running side of a [`JobHandle::external`] job. Dropping it marks the job finished.
pub struct JobControl {
    state: Arc<JobState>,
}

impl JobControl {
    /// Set when the handle asks for the answer now (or cancels).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.state.stop)
    }

    /// The handle was dropped or cancelled: the answer is not wanted.
    pub fn is_cancelled(&self) -> bool {
        self.state.cancelled.load(Ordering::Relaxed)
    }
}

impl Drop for JobControl {
    fn drop(&mut self) {
        self.state.finish();
    }
}

/// Asks one job for its answer now ([`JobHandle::stop`]); cloning it is cheap, dropping it does nothing.
#[derive(Clone)]
pub struct Stopper(Arc<JobState>);

impl Stopper {
    pub fn stop(&self) {
        self.0.ask_stop();
    }
}

impl Drop for JobHandle {
    fn drop(&mut self) {
        if !self.detached {
            self.cancel();
        }
    }
}

impl Pool {
    pub fn new(config: PoolConfig) -> Self {
        Pool::with_slices(config, endless::Slices::default())
    }

    /// A pool whose endless searches run in slices of these lengths (tests).
    fn with_slices(config: PoolConfig, slices: endless::Slices) -> Self {
        let workers = config.workers.max(1);
        let clock_workers = config.clock_workers;
        let inner = Arc::new(Inner {
            queues: Mutex::new(Queues::default()),
            work_ready: Condvar::new(),
            capacity: config.queue,
            workers,
            clock_workers,
            busy: AtomicUsize::new(0),
            completed: AtomicU64::new(0),
            nodes: AtomicU64::new(0),
            tt: RwLock::new(Arc::new(TranspositionTable::new(config.hash_mb))),
            running: Mutex::new(Vec::new()),
            slicer_wake: Condvar::new(),
            slices,
        });
        let mut threads: Vec<JoinHandle<()>> = (0..workers + clock_workers)
            .map(|i| {
                let inner = Arc::clone(&inner);
                let (name, clock_only) = if i < workers {
                    (format!("kibitz-worker-{i}"), false)
                } else {
                    (format!("kibitz-clock-{i}"), true)
                };
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || worker(&inner, clock_only))
                    .expect("the operating system refused to start a worker thread")
            })
            .collect();
        let slicer = Arc::clone(&inner);
        threads.push(
            std::thread::Builder::new()
                .name("kibitz-slicer".into())
                .spawn(move || endless::slicer(&slicer))
                .expect("the operating system refused to start the slicer thread"),
        );
        Pool { owner: Arc::new(Owner { inner, threads: Mutex::new(threads) }) }
    }

    fn inner(&self) -> &Inner {
        &self.owner.inner
    }

    /// Queue a search. `sink` receives its events on a worker thread, the last being `Done`. A search on a
    /// game clock (and a game's move at a fixed time, [`Priority::Play`]) has its time left counted from here,
    /// not from when a worker takes it: the time it waits in the queue is the player's time too.
    pub fn submit<G: Game>(
        &self,
        request: SearchRequest<G>,
        mut sink: impl FnMut(Event<G::Move>) + Send + 'static,
    ) -> Result<JobHandle, PoolError> {
        let priority = request.priority;
        let endless = request.limits.infinite;
        let state = Arc::new(JobState { endless, priority, ..JobState::default() });
        let client = request.client.clone();
        // A clock worker never takes an endless search: nothing would free it for the next game's move.
        let clock = (request.limits.clock.is_some() || priority == Priority::Play) && !endless;
        let submitted = Instant::now();
        let work: Work = if endless {
            endless::resumable(request.game, request.limits, request.options, Arc::clone(&state), sink)
        } else {
            let stop = Arc::clone(&state.stop);
            Box::new(move |tt| {
                let limits = waited(&request.limits, priority, submitted.elapsed());
                let done = search::search(&request.game, &limits, &request.options, tt, &stop, &mut sink);
                Ran { nodes: done.nodes, yielded: false }
            })
        };
        let mut queues = lock(&self.inner().queues);
        if queues.shutdown {
            return Err(PoolError::ShuttingDown);
        }
        let idle = self.inner().workers.saturating_sub(self.inner().busy.load(Ordering::Relaxed));
        if queues.taken() >= self.inner().capacity + idle {
            // Jobs cancelled while waiting hold no place: a GUI stepping through a game quickly cancels each
            // search it starts, and must not find the queue full of searches nobody wants.
            for job in queues.by_priority.iter_mut().flat_map(Fair::remove_cancelled) {
                job.state.finish();
            }
        }
        if queues.taken() >= self.inner().capacity + idle {
            return Err(PoolError::Busy { workers: self.inner().workers, capacity: self.inner().capacity });
        }
        // One client's backlog must leave room in the queue for the others' (found by an audit: one address's
        // 72 endless analyses over 9 sockets filled the whole queue, and everyone else got 503).
        if let Some(id) = &client {
            let waiting: usize = queues.by_priority.iter().map(|f| f.waiting_of(id)).sum();
            if waiting >= client_share(self.inner().capacity) {
                return Err(PoolError::ClientBusy { waiting, capacity: self.inner().capacity });
            }
        }
        let job = Queued { work, state: Arc::clone(&state), clock, client: client.clone() };
        queues.by_priority[priority as usize].push(client, job);
        drop(queues);
        self.inner().slicer_wake.notify_one();
        // With clock workers every waiting worker is woken: one woken alone might be a clock worker that cannot
        // take this job.
        if self.inner().clock_workers > 0 && !clock {
            self.inner().work_ready.notify_all();
        } else {
            self.inner().work_ready.notify_one();
        }
        Ok(JobHandle { state, detached: false })
    }

    /// Replace the transposition table with one of `mb` MiB (running searches keep the old one).
    pub fn set_hash_mb(&self, mb: usize) {
        let table = Arc::new(TranspositionTable::new(mb));
        *self.inner().tt.write().unwrap_or_else(|e| e.into_inner()) = table;
    }

    /// Forget all cached search results (a new game).
    pub fn clear_hash(&self) {
        self.table().clear();
    }

    /// The current transposition table.
    pub fn table(&self) -> Arc<TranspositionTable> {
        Arc::clone(&self.inner().tt.read().unwrap_or_else(|e| e.into_inner()))
    }

    pub fn stats(&self) -> PoolStats {
        let (queued, paused) = {
            let queues = lock(&self.inner().queues);
            let count = |paused| queues.by_priority.iter().map(|f| f.live(paused)).sum();
            (count(false), count(true))
        };
        PoolStats {
            workers: self.inner().workers,
            busy: self.inner().busy.load(Ordering::Relaxed),
            // Searches cancelled while they wait (their clients gone) keep their places until a worker or a full
            // queue takes them out; they are not waiting for anything.
            queued,
            paused,
            capacity: self.inner().capacity,
            completed: self.inner().completed.load(Ordering::Relaxed),
            nodes: self.inner().nodes.load(Ordering::Relaxed),
        }
    }

    /// Stop every running search, drop the queued ones and join the workers. Idempotent.
    pub fn shutdown(&self) {
        self.owner.shutdown();
    }
}

/// A worker's loop: it runs the queued jobs, or with `clock_only` only those on a game clock.
fn worker(inner: &Inner, clock_only: bool) {
    loop {
        // A clock worker is not one of the `workers` the stats count.
        let counted = !clock_only;
        let (mut job, skipped) = {
            let mut queues = lock(&inner.queues);
            loop {
                if queues.shutdown {
                    return;
                }
                if let Some(job) = if clock_only { queues.pop_clock() } else { queues.pop() } {
                    // Running from here, under the queue's lock: the slicer and a shutdown see every job either
                    // queued or running, and the slicer cannot miss the start of an endless one.
                    let skipped = job.state.cancelled.load(Ordering::Relaxed);
                    if !skipped {
                        if counted {
                            inner.busy.fetch_add(1, Ordering::Relaxed);
                        }
                        let slice = endless::Slice { state: Arc::clone(&job.state), started: Instant::now() };
                        lock(&inner.running).push(slice);
                        if job.state.endless {
                            inner.slicer_wake.notify_one();
                        }
                    }
                    break (job, skipped);
                }
                queues = match inner.work_ready.wait(queues) {
                    Ok(g) => g,
                    Err(e) => e.into_inner(),
                };
            }
        };
        if skipped {
            job.state.finish();
            continue;
        }
        let tt = Arc::clone(&inner.tt.read().unwrap_or_else(|e| e.into_inner()));
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| (job.work)(&tt)));
        let yielded = match outcome {
            Ok(ran) => {
                inner.nodes.fetch_add(ran.nodes, Ordering::Relaxed);
                ran.yielded
            }
            Err(_) => {
                tracing::error!("a search panicked; the worker goes on");
                false
            }
        };
        if yielded {
            // Back to the end of its client's line, taken out of the running ones under the queue's lock so
            // that the slicer never sees it in neither.
            let mut queues = lock(&inner.queues);
            lock(&inner.running).retain(|s| !Arc::ptr_eq(&s.state, &job.state));
            if counted {
                inner.busy.fetch_sub(1, Ordering::Relaxed);
            }
            if queues.shutdown {
                drop(queues);
                job.state.finish();
            } else {
                // At batch priority: what made it yield goes first (see [`endless`]).
                let client = job.client.clone();
                job.state.paused.store(true, Ordering::SeqCst);
                queues.by_priority[Priority::Low as usize].push(client, job);
                drop(queues);
                inner.slicer_wake.notify_one();
            }
            continue;
        }
        lock(&inner.running).retain(|s| !Arc::ptr_eq(&s.state, &job.state));
        if counted {
            inner.busy.fetch_sub(1, Ordering::Relaxed);
        }
        inner.completed.fetch_add(1, Ordering::Relaxed);
        job.state.finish();
    }
}

/// `limits` for a search that waited `waited` in the queue: a game clock, and the fixed time of a game's move
/// ([`Priority::Play`]), have that much less left (a millisecond at least, so that a move is still made); other
/// limits are the search's own time (an analysis asked for two seconds gets them).
fn waited(limits: &Limits, priority: Priority, waited: Duration) -> Limits {
    let mut limits = limits.clone();
    let less = |time: Duration| time.saturating_sub(waited).max(Duration::from_millis(1));
    if let Some(clock) = &mut limits.clock {
        clock.remaining = less(clock.remaining);
    }
    if priority == Priority::Play
        && let Some(movetime) = &mut limits.movetime
    {
        *movetime = less(*movetime);
    }
    limits
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;
    use crate::game::Game;
    use crate::search::testgames::Nim;
    use crate::search::{Clock, Done, Info};

    /// A pool whose endless searches never yield during a test: they block workers as the tests want.
    fn pool(workers: usize, queue: usize) -> Pool {
        Pool::with_slices(PoolConfig { workers, queue, hash_mb: 1, clock_workers: 0 }, UNSLICED)
    }

    const UNSLICED: endless::Slices =
        endless::Slices { short: Duration::from_secs(3600), long: Duration::from_secs(3600) };

    /// A pool whose endless searches yield after short slices.
    fn sliced(workers: usize, queue: usize) -> Pool {
        let slices = endless::Slices { short: Duration::from_millis(100), long: Duration::from_millis(400) };
        Pool::with_slices(PoolConfig { workers, queue, hash_mb: 1, clock_workers: 0 }, slices)
    }

    #[test]
    fn a_clock_worker_takes_a_clock_search_while_every_worker_is_busy() {
        let clocked = Pool::with_slices(PoolConfig { workers: 1, queue: 4, hash_mb: 1, clock_workers: 1 }, UNSLICED);
        let running = clocked.submit(request("100001", Limits::infinite(), Priority::Play), |_| {}).expect("runs");
        let deadline = Instant::now() + WAIT;
        while clocked.stats().busy == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        // A search without a clock waits for the worker: the clock worker does not take it.
        let waiting = clocked.submit(request("9", Limits::depth(3), Priority::High), |_| {}).expect("queued");
        let clock = Clock { remaining: Duration::from_secs(5), increment: Duration::ZERO, moves_to_go: None };
        let (tx, rx) = mpsc::channel();
        let on_clock = clocked
            .submit(request("9", Limits { clock: Some(clock), ..Limits::default() }, Priority::Normal), move |e| {
                let _ = tx.send(e);
            })
            .expect("queued");
        assert!(on_clock.wait_timeout(WAIT), "the clock search ran beside the busy worker");
        assert!(rx.try_iter().any(|e| matches!(e, Event::Done(d) if d.best.is_some())));
        // A game's move at a fixed time or depth is a move someone waits for too: the clock worker takes it.
        for limits in [Limits::movetime(Duration::from_millis(20)), Limits::depth(3)] {
            let (tx, rx) = mpsc::channel();
            let played = clocked
                .submit(request("9", limits.clone(), Priority::Play), move |e| {
                    let _ = tx.send(e);
                })
                .expect("queued");
            assert!(played.wait_timeout(WAIT), "{limits:?}: the game's move ran beside the busy worker");
            assert!(rx.try_iter().any(|e| matches!(e, Event::Done(d) if d.best.is_some())));
        }
        assert!(!waiting.wait_timeout(Duration::from_millis(50)), "the other search still waits");
        assert_eq!(clocked.stats().queued, 1);
        assert_eq!(clocked.stats().busy, 1, "the clock worker is not counted");
        // An endless search is no game's move, whatever its priority: it waits for a worker.
        let endless = clocked.submit(request("9", Limits::infinite(), Priority::Play), |_| {}).expect("queued");
        assert!(!endless.wait_timeout(Duration::from_millis(50)), "the endless search waits");
        assert_eq!(clocked.stats().queued, 2);
        drop(endless);
        running.stop();
        assert!(waiting.wait_timeout(WAIT));
        // Without a clock worker the clock search waits as any other.
        let plain = pool(1, 4);
        let running = plain.submit(request("100001", Limits::infinite(), Priority::Play), |_| {}).expect("runs");
        let deadline = Instant::now() + WAIT;
        while plain.stats().busy == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let on_clock =
            plain.submit(request("9", Limits { clock: Some(clock), ..Limits::default() }, Priority::High), |_| {});
        assert!(!on_clock.expect("queued").wait_timeout(Duration::from_millis(50)));
        running.stop();
    }

    #[test]
    fn a_clock_counts_the_time_a_search_waited_for_a_worker() {
        let clock = Clock { remaining: Duration::from_secs(10), increment: Duration::ZERO, moves_to_go: None };
        let limits = Limits { clock: Some(clock), movetime: Some(Duration::from_secs(2)), ..Limits::default() };
        let after = waited(&limits, Priority::High, Duration::from_secs(3));
        assert_eq!(after.clock.map(|c| c.remaining), Some(Duration::from_secs(7)));
        assert_eq!(after.movetime, Some(Duration::from_secs(2)), "an analysis's move time is the search's own");
        let late = waited(&limits, Priority::High, Duration::from_secs(30));
        assert_eq!(late.clock.map(|c| c.remaining), Some(Duration::from_millis(1)), "still a move to make");
        assert_eq!(waited(&Limits::depth(3), Priority::Play, Duration::from_secs(3)), Limits::depth(3));
        // A game's move at a fixed time is due that long after it was asked for.
        let fixed = Limits::movetime(Duration::from_secs(2));
        assert_eq!(
            waited(&fixed, Priority::Play, Duration::from_millis(500)).movetime,
            Some(Duration::from_millis(1500))
        );
        assert_eq!(waited(&fixed, Priority::Play, Duration::from_secs(3)).movetime, Some(Duration::from_millis(1)));
        assert_eq!(waited(&fixed, Priority::Normal, Duration::from_secs(3)), fixed);
    }

    #[test]
    fn jobs_cancelled_while_queued_hold_no_place_in_the_queue() {
        let pool = pool(1, 2);
        let running = pool.submit(request("100001", Limits::infinite(), Priority::Normal), |_| {}).expect("runs");
        let deadline = Instant::now() + WAIT;
        while pool.stats().busy == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        // Two queued jobs, both cancelled at once (dropped) while the worker is still busy.
        for _ in 0..2 {
            drop(pool.submit(request("5", Limits::depth(3), Priority::Normal), |_| {}).expect("queued"));
        }
        // They wait for nothing, and are not counted as waiting (the queue-depth metric).
        assert_eq!(pool.stats().queued, 0);
        // The queue is not full of them: the next jobs are taken.
        let (tx, rx) = mpsc::channel();
        let next = pool
            .submit(request("9", Limits::depth(3), Priority::Normal), move |e| {
                let _ = tx.send(e);
            })
            .expect("the cancelled jobs made room");
        let also = pool.submit(request("9", Limits::depth(3), Priority::Normal), |_| {}).expect("and for two");
        running.stop();
        assert!(next.wait_timeout(WAIT) && also.wait_timeout(WAIT));
        assert!(rx.try_iter().any(|e| matches!(e, Event::Done(_))));
    }

    /// Many clients at once, every priority, game clocks, fixed times, depths and endless searches, some
    /// cancelled while queued or running, on workers and clock workers: every search ends, and the pool is idle
    /// and empty afterwards (no job lost between the queues and the workers, none left running).
    #[test]
    fn every_search_of_a_busy_mixed_load_ends() {
        let pool = Pool::new(PoolConfig { workers: 2, queue: 64, hash_mb: 1, clock_workers: 1 });
        let most_queued = Arc::new(AtomicUsize::new(0));
        let clients: Vec<_> = (0..4u64)
            .map(|c| {
                let (pool, most_queued) = (pool.clone(), Arc::clone(&most_queued));
                std::thread::spawn(move || {
                    let mut rng = crate::matchplay::Rng(c + 1);
                    let mut kept = Vec::new();
                    for _ in 0..40 {
                        let priority = [Priority::Low, Priority::Normal, Priority::High, Priority::Play][rng.below(4)];
                        let limits = match rng.below(4) {
                            0 => Limits::depth(1 + rng.below(3) as u32),
                            1 => Limits::movetime(Duration::from_millis(1 + rng.below(20) as u64)),
                            2 => Limits {
                                clock: Some(Clock {
                                    remaining: Duration::from_millis(50 + rng.below(200) as u64),
                                    increment: Duration::ZERO,
                                    moves_to_go: None,
                                }),
                                ..Limits::default()
                            },
                            _ => Limits::infinite(),
                        };
                        let endless = limits.infinite;
                        let mut req = request(["9", "13", "100001"][rng.below(3)], limits, priority);
                        req.client = Some(Arc::from(format!("client {c}")));
                        let (tx, rx) = mpsc::channel();
                        let job = match pool.submit(req, move |e| {
                            if matches!(e, Event::Done(_)) {
                                let _ = tx.send(());
                            }
                        }) {
                            Ok(job) => job,
                            Err(PoolError::Busy { .. }) => continue,
                            Err(e) => panic!("{e}"),
                        };
                        most_queued.fetch_max(pool.stats().queued, Ordering::Relaxed);
                        match rng.below(3) {
                            // Dropped at once: cancelled, queued or running.
                            0 => drop(job),
                            // Asked for its answer soon after (an endless one must be).
                            1 => {
                                std::thread::sleep(Duration::from_millis(rng.below(10) as u64));
                                job.stop();
                                kept.push((job, rx));
                            }
                            _ if endless => job.stop(),
                            _ => kept.push((job, rx)),
                        }
                    }
                    for (job, rx) in kept {
                        assert!(job.wait_timeout(WAIT), "a search never ended");
                        assert!(rx.try_recv().is_ok(), "a search ended without Done");
                    }
                })
            })
            .collect();
        for client in clients {
            client.join().expect("a client");
        }
        assert!(most_queued.load(Ordering::Relaxed) > 0, "the load never queued a search: it tests nothing");
        let deadline = Instant::now() + WAIT;
        while (pool.stats().busy > 0 || !lock(&pool.inner().running).is_empty()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(pool.stats().busy, 0);
        assert!(lock(&pool.inner().running).is_empty(), "a search still runs");
        // Cancelled jobs may still hold places until a worker skips them: a new search gets through, and the
        // queue empties.
        let last = pool.submit(request("9", Limits::depth(2), Priority::Low), |_| {}).expect("accepted");
        assert!(last.wait_timeout(WAIT));
        while pool.stats().queued > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(pool.stats().queued, 0);
    }

    fn request(pile: &str, limits: Limits, priority: Priority) -> SearchRequest<Nim> {
        SearchRequest {
            game: Nim::parse_position(pile, None).expect("pile"),
            limits,
            options: SearchOptions::default(),
            priority,
            client: None,
        }
    }

    const WAIT: Duration = Duration::from_secs(20);

    #[test]
    fn a_job_streams_events_and_finishes_with_done() {
        let pool = pool(2, 4);
        let (tx, rx) = mpsc::channel();
        let handle = pool.submit(request("9", Limits::depth(12), Priority::Normal), move |e| {
            let _ = tx.send(e);
        });
        let handle = handle.expect("accepted");
        assert!(handle.wait_timeout(WAIT));
        let events: Vec<_> = rx.try_iter().collect();
        assert!(events.iter().any(|e| matches!(e, Event::Info(_))));
        match events.last() {
            Some(Event::Done(done)) => assert_eq!(done.best, Some(1)),
            other => panic!("last event {other:?}"),
        }
        let stats = pool.stats();
        assert_eq!((stats.completed, stats.busy, stats.queued), (1, 0, 0));
    }

    #[test]
    fn a_full_queue_answers_busy_at_once_and_dropping_cancels() {
        let pool = pool(1, 1);
        let running = pool.submit(request("100001", Limits::infinite(), Priority::Normal), |_| {});
        let running = running.expect("first job runs");
        // Wait until the worker has taken it, so the next one is queued.
        let deadline = Instant::now() + WAIT;
        while pool.stats().busy == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let queued = pool.submit(request("5", Limits::depth(3), Priority::Normal), |_| {}).expect("queued");
        let refused = pool.submit(request("5", Limits::depth(3), Priority::Normal), |_| {});
        assert!(matches!(refused, Err(PoolError::Busy { workers: 1, capacity: 1 })));
        drop(running);
        assert!(queued.wait_timeout(WAIT), "the cancelled search frees the worker for the queued one");
        assert_eq!(pool.stats().busy, 0);
    }

    #[test]
    fn stop_gives_an_answer_with_a_move() {
        let pool = pool(1, 1);
        let (tx, rx) = mpsc::channel();
        let handle = pool
            .submit(request("100002", Limits::infinite(), Priority::Normal), move |e| {
                if let Event::Done(d) = e {
                    let _ = tx.send(d);
                }
            })
            .expect("accepted");
        std::thread::sleep(Duration::from_millis(20));
        handle.stop();
        let done = rx.recv_timeout(WAIT).expect("done after stop");
        assert!(done.best.is_some_and(|m| (1..=3).contains(&m)));
    }

    #[test]
    fn higher_priority_runs_first() {
        let pool = pool(1, 8);
        let blocker = pool.submit(request("100003", Limits::infinite(), Priority::Normal), |_| {});
        let blocker = blocker.expect("accepted");
        let deadline = Instant::now() + WAIT;
        while pool.stats().busy == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut handles = Vec::new();
        let priorities =
            [("low", Priority::Low), ("play", Priority::Play), ("normal", Priority::Normal), ("high", Priority::High)];
        for (name, priority) in priorities {
            let order = Arc::clone(&order);
            let h = pool.submit(request("7", Limits::depth(2), priority), move |e| {
                if matches!(e, Event::Done(_)) {
                    lock(&order).push(name);
                }
            });
            handles.push(h.expect("queued"));
        }
        blocker.stop();
        for h in &handles {
            assert!(h.wait_timeout(WAIT));
        }
        assert_eq!(*lock(&order), vec!["play", "high", "normal", "low"]);
    }

    #[test]
    fn one_clients_backlog_does_not_starve_another() {
        // A queue of 20: each client may hold 5 of its places.
        let pool = pool(1, 20);
        let blocker = pool.submit(request("100005", Limits::infinite(), Priority::Normal), |_| {});
        let blocker = blocker.expect("accepted");
        let deadline = Instant::now() + WAIT;
        while pool.stats().busy == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut handles = Vec::new();
        // Client a queues five searches, then b queues two: b's wait behind a's first only, then alternate.
        for (name, client) in
            [("a1", "a"), ("a2", "a"), ("a3", "a"), ("a4", "a"), ("a5", "a"), ("b1", "b"), ("b2", "b")]
        {
            let order = Arc::clone(&order);
            let mut req = request("7", Limits::depth(2), Priority::Normal);
            req.client = Some(Arc::from(client));
            let h = pool.submit(req, move |e| {
                if matches!(e, Event::Done(_)) {
                    lock(&order).push(name);
                }
            });
            handles.push(h.expect("queued"));
        }
        // A sixth of a's is refused while the queue has room (found by an audit: one address filled the whole
        // queue and every other client got 503); another client's is not.
        let mut sixth = request("7", Limits::depth(2), Priority::Normal);
        sixth.client = Some(Arc::from("a"));
        assert!(matches!(pool.submit(sixth, |_| {}), Err(PoolError::ClientBusy { waiting: 5, capacity: 20 })));
        let mut other = request("7", Limits::depth(2), Priority::Normal);
        other.client = Some(Arc::from("c"));
        handles.push(pool.submit(other, |_| {}).expect("another client's search is queued"));
        blocker.stop();
        for h in &handles {
            assert!(h.wait_timeout(WAIT));
        }
        assert_eq!(lock(&order)[..7], ["a1", "b1", "a2", "b2", "a3", "a4", "a5"]);
    }

    /// The first event of a job whose events go to `rx`, which must be an `Info`.
    fn first_info(rx: &mpsc::Receiver<Event<u32>>) -> Info<u32> {
        match rx.recv_timeout(WAIT).expect("an event") {
            Event::Info(info) => info,
            Event::Done(done) => panic!("done before any info: {done:?}"),
        }
    }

    #[test]
    fn an_endless_search_yields_to_a_waiting_search_and_goes_on_from_where_it_was() {
        let pool = sliced(1, 4);
        let (tx, rx) = mpsc::channel();
        let endless = pool
            .submit(request("100001", Limits::infinite(), Priority::Normal), move |e| {
                let _ = tx.send(e);
            })
            .expect("runs");
        let first = first_info(&rx);
        // It has the only worker and never stops by itself: the search waiting gets the worker after the
        // endless one's slice (it used to wait until its client gave up).
        let finite = pool.submit(request("9", Limits::depth(3), Priority::Normal), |_| {}).expect("queued");
        assert!(finite.wait_timeout(WAIT), "the waiting search never ran");
        assert!(!endless.wait_timeout(Duration::ZERO), "the endless search was not stopped");
        // And it goes on.
        let deadline = Instant::now() + WAIT;
        while pool.stats().busy == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(pool.stats().busy, 1, "the endless search runs again");
        endless.stop();
        assert!(endless.wait_timeout(WAIT));
        let events: Vec<Event<u32>> = std::iter::once(Event::Info(first)).chain(rx.try_iter()).collect();
        // Its client saw one search: lines never shallower than before, nodes and time never going back, one
        // answer at the end, as deep as what was shown.
        let infos: Vec<&Info<u32>> =
            events.iter().filter_map(|e| if let Event::Info(i) = e { Some(i) } else { None }).collect();
        for pair in infos.windows(2) {
            assert!(pair[1].depth >= pair[0].depth, "depth went back: {:?} then {:?}", pair[0], pair[1]);
            assert!(pair[1].nodes >= pair[0].nodes && pair[1].time_ms >= pair[0].time_ms, "{pair:?}");
        }
        let dones: Vec<&Done<u32>> =
            events.iter().filter_map(|e| if let Event::Done(d) = e { Some(d) } else { None }).collect();
        assert_eq!(dones.len(), 1, "one answer");
        assert!(matches!(events.last(), Some(Event::Done(_))), "the answer comes last");
        let (done, last) = (dones[0], infos.last().expect("infos"));
        assert!(done.best.is_some() && done.depth + 1 >= last.depth, "{done:?} after {last:?}");
        assert!(done.nodes >= last.nodes, "{done:?} after {last:?}");
    }

    #[test]
    fn an_endless_search_stopped_while_paused_answers_what_it_had_without_a_worker() {
        let pool = sliced(1, 4);
        let (tx, rx) = mpsc::channel();
        let endless = pool
            .submit(request("100002", Limits::infinite(), Priority::Normal), move |e| {
                let _ = tx.send(e);
            })
            .expect("runs");
        first_info(&rx);
        // A search that ends, but not by itself during the test.
        let (started_tx, started_rx) = mpsc::channel();
        let finite = pool
            .submit(request("100005", Limits::nodes(u64::MAX), Priority::Normal), move |_| {
                let _ = started_tx.send(());
            })
            .expect("queued");
        started_rx.recv_timeout(WAIT).expect("the waiting search took the worker");
        // The endless search has yielded and waits; it is asked for its answer now, and gives it without
        // waiting for the worker.
        endless.stop();
        assert!(endless.wait_timeout(WAIT), "the stopped search waited for a worker");
        assert!(!finite.wait_timeout(Duration::ZERO), "the other search still has the worker");
        finite.stop();
        assert!(finite.wait_timeout(WAIT));
        let events: Vec<Event<u32>> = rx.try_iter().collect();
        let deepest = events.iter().filter_map(|e| if let Event::Info(i) = e { Some(i.depth) } else { None }).max();
        match events.last() {
            // The answer of the slice it ran, not of a search restarted from nothing at the stop.
            Some(Event::Done(done)) => {
                assert!(done.best.is_some() && done.depth + 1 >= deepest.unwrap_or(0), "{done:?}, {deepest:?}")
            }
            other => panic!("last event {other:?}"),
        }
        assert!(deepest.is_some_and(|d| d > 2), "too shallow to tell a restart: {deepest:?}");
    }

    #[test]
    fn batch_work_waits_longer_behind_an_analysis_and_a_search_of_lower_priority_still_goes_soon() {
        let pool = sliced(1, 4);
        let (tx, rx) = mpsc::channel();
        let endless = pool
            .submit(request("100003", Limits::infinite(), Priority::High), move |e| {
                let _ = tx.send(e);
            })
            .expect("runs");
        first_info(&rx);
        let batch = pool.submit(request("9", Limits::depth(3), Priority::Low), |_| {}).expect("queued");
        // (Waiting less than the long slice: the batch search must not get the worker in the short one.)
        assert!(!batch.wait_timeout(Duration::from_millis(200)), "the batch search took the analysis' worker soon");
        // A search of Normal priority is no batch work: the High analysis yields to it, and it runs before the
        // batch search (the analysis waits behind both at batch priority, then goes on).
        let normal = pool.submit(request("9", Limits::depth(3), Priority::Normal), |_| {}).expect("queued");
        assert!(normal.wait_timeout(WAIT), "the Normal search never ran");
        assert!(batch.wait_timeout(WAIT), "the batch search ran after it");
        assert!(!endless.wait_timeout(Duration::ZERO));
        endless.stop();
        assert!(endless.wait_timeout(WAIT));
    }

    #[test]
    fn endless_searches_take_turns_and_a_search_arriving_later_still_gets_a_worker() {
        // One worker, two endless searches: they take turns in long slices, and a search that ends, arriving
        // while one of them is paused, is not kept waiting by it.
        let pool = sliced(1, 4);
        let (first, second) = two_endless(&pool);
        // The second runs: the first has yielded and waits, paused.
        let finite = pool.submit(request("9", Limits::depth(3), Priority::Normal), |_| {}).expect("queued");
        assert!(finite.wait_timeout(WAIT), "a search arriving while an endless one was paused never ran");
        assert!(!first.wait_timeout(Duration::ZERO) && !second.wait_timeout(Duration::ZERO));
        stop_both(first, second);
    }

    /// Two endless searches on `pool`, once the second has reported (so both have had the worker).
    fn two_endless(pool: &Pool) -> (JobHandle, JobHandle) {
        let (tx, rx) = mpsc::channel();
        let first = pool.submit(request("100001", Limits::infinite(), Priority::Normal), |_| {}).expect("runs");
        let second = pool
            .submit(request("100002", Limits::infinite(), Priority::Normal), move |e| {
                let _ = tx.send(e);
            })
            .expect("queued");
        first_info(&rx);
        (first, second)
    }

    fn stop_both(first: JobHandle, second: JobHandle) {
        for endless in [first, second] {
            endless.stop();
            assert!(endless.wait_timeout(WAIT));
        }
    }

    /// Found by an audit: endless searches waiting for their next slice counted as waiting, in the queue-depth
    /// metric and against the queue's capacity, so that two endless analyses taking turns on one worker made
    /// a one-place queue refuse every other search.
    #[test]
    fn endless_searches_taking_turns_hold_no_place_in_the_queue() {
        let pool = sliced(1, 1);
        let (first, second) = two_endless(&pool);
        // Both have run: on the one worker, one of them at least waits for its next slice.
        let stats = pool.stats();
        assert_eq!(stats.queued, 0, "{stats:?}");
        assert!((1..=2).contains(&stats.paused), "{stats:?}");
        let finite = pool.submit(request("9", Limits::depth(3), Priority::Normal), |_| {}).expect("a place");
        assert!(finite.wait_timeout(WAIT), "the search never ran");
        stop_both(first, second);
    }

    #[test]
    fn shutdown_stops_running_searches() {
        let pool = pool(2, 2);
        let handle = pool.submit(request("100004", Limits::infinite(), Priority::Normal), |_| {}).expect("ok");
        std::thread::sleep(Duration::from_millis(10));
        pool.shutdown();
        assert!(handle.wait_timeout(WAIT));
        assert!(matches!(
            pool.submit(request("5", Limits::depth(1), Priority::Normal), |_| {}),
            Err(PoolError::ShuttingDown)
        ));
    }
}
