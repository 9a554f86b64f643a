//! Pools of external engine processes, and the registry of a deployment's engines ([`Engines`]).
//!
//! Each configured engine gets one pool per game it analyses. A pool keeps up to `processes` processes: it
//! starts them when the server starts ([`Engines::warm`]), hands one out per search, takes it back after, and
//! replaces one that failed (died, hung, flooded its output, answered garbage or an illegal move) with a fresh
//! process, counting the failure and the restart. A search runs on a thread of its own and is controlled
//! through the same [`JobHandle`] as a search on kibitz's worker pool: `stop` asks for the answer now, dropping
//! the handle cancels it, and the process goes back to its pool either way.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::EngineError;
use super::checkers_protocol::checkers_launch;
use super::config::{EngineSpec, Protocol};
use super::driver::{Driver, Launch, uci_launch};
use super::hub::hub_launch;
use super::uhp::uhp_launch;
use crate::game::Game;
use crate::games::GameKind;
use crate::games::{checkers::Checkers, chess::Chess, draughts::Draughts, hive::Hive, xiangqi::Xiangqi};
use crate::pool::JobHandle;
use crate::search::{Done, Event, Info, Limits};

/// How long a search waits for a free process of its engine before it is refused as busy.
const CHECKOUT_WAIT: Duration = Duration::from_secs(30);

/// Searches that may wait for a process, per process of the engine.
const WAITING_PER_PROCESS: usize = 16;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counters of one engine (for one game), for `/metrics` and `GET /v1/engines`.
#[derive(Debug, Default)]
pub struct EngineStats {
    /// Searches answered.
    pub searches: AtomicU64,
    /// Searches (or starts) that failed: the process was killed.
    pub failures: AtomicU64,
    /// Processes started to replace one that failed.
    pub restarts: AtomicU64,
    /// Processes started in all.
    pub started: AtomicU64,
}

/// One search for an engine pool.
pub struct ExternalSearch<G: Game> {
    pub root: G,
    /// The moves from `root` to the position searched (the engine sees them, for repetitions).
    pub moves: Vec<G::Move>,
    pub limits: Limits,
    pub multipv: u32,
}

struct State<G: Game> {
    idle: Vec<Box<dyn Driver<G>>>,
    /// Processes handed out or being started.
    out: usize,
    /// Searches waiting for a process.
    waiting: usize,
    /// The engine's own name and version, once a process has said it.
    id: Option<String>,
    /// The last start failure, for `engines check` and `GET /v1/engines`.
    last_error: Option<String>,
    closed: bool,
    /// Threads starting processes in the background (replacements, warming) and not yet done with them: a
    /// shutdown waits for them, so that no process they start outlives it.
    background: usize,
}

/// The processes of one engine for one game.
pub struct EnginePool<G: Game> {
    spec: Arc<EngineSpec>,
    launch: Launch<G>,
    state: Mutex<State<G>>,
    freed: Condvar,
    stats: Arc<EngineStats>,
    /// The stop flags of the searches running on this pool's threads ([`EnginePool::run`]), so that a server
    /// stopping can stop them ([`PoolControl::stop_searches`]); flags of finished searches are pruned as new
    /// ones come.
    running: Mutex<Vec<std::sync::Weak<std::sync::atomic::AtomicBool>>>,
}

impl<G: Game> EnginePool<G> {
    pub fn new(spec: Arc<EngineSpec>, launch: Launch<G>) -> Arc<Self> {
        Arc::new(EnginePool {
            spec,
            launch,
            state: Mutex::new(State {
                idle: Vec::new(),
                out: 0,
                waiting: 0,
                id: None,
                last_error: None,
                closed: false,
                background: 0,
            }),
            freed: Condvar::new(),
            stats: Arc::new(EngineStats::default()),
            running: Mutex::new(Vec::new()),
        })
    }

    pub fn spec(&self) -> &EngineSpec {
        &self.spec
    }

    pub fn stats(&self) -> &Arc<EngineStats> {
        &self.stats
    }

    /// The engine's own name and version, once one of its processes has started.
    pub fn id(&self) -> Option<String> {
        lock(&self.state).id.clone()
    }

    /// Start one process now (counted as handed out until it is given back).
    fn launch_one(&self) -> Result<Box<dyn Driver<G>>, EngineError> {
        self.stats.started.fetch_add(1, Ordering::Relaxed);
        match (self.launch)(&self.spec) {
            Ok(driver) => {
                let mut state = lock(&self.state);
                state.id = Some(driver.id().to_string());
                state.last_error = None;
                Ok(driver)
            }
            Err(e) => {
                self.stats.failures.fetch_add(1, Ordering::Relaxed);
                let mut state = lock(&self.state);
                state.last_error = Some(e.to_string());
                state.out -= 1;
                drop(state);
                self.freed.notify_one();
                Err(e)
            }
        }
    }

    /// A process for one search: an idle one, a new one while fewer than `processes` run, or the next one
    /// given back (waiting at most `wait`).
    pub fn checkout(&self, wait: Duration) -> Result<Box<dyn Driver<G>>, EngineError> {
        let deadline = Instant::now() + wait;
        let mut state = lock(&self.state);
        let mut counted = false;
        let result = loop {
            if state.closed {
                break Err(EngineError::Dead { engine: self.spec.name.clone() });
            }
            if let Some(driver) = state.idle.pop() {
                state.out += 1;
                break Ok(Some(driver));
            }
            if state.out < self.spec.processes {
                state.out += 1;
                break Ok(None);
            }
            if !counted {
                if state.waiting >= self.spec.processes * WAITING_PER_PROCESS {
                    break Err(self.busy());
                }
                state.waiting += 1;
                counted = true;
            }
            let now = Instant::now();
            if now >= deadline {
                break Err(self.busy());
            }
            state = match self.freed.wait_timeout(state, deadline - now) {
                Ok((guard, _)) => guard,
                Err(e) => e.into_inner().0,
            };
        };
        if counted {
            state.waiting -= 1;
        }
        drop(state);
        match result? {
            Some(driver) => Ok(driver),
            None => self.launch_one(),
        }
    }

    fn busy(&self) -> EngineError {
        EngineError::Busy { engine: self.spec.name.clone(), processes: self.spec.processes }
    }

    /// Take a process back after a search. A dead one is replaced by a fresh process, started on a thread of
    /// its own (the failure and the restart are counted).
    pub fn give_back(self: &Arc<Self>, driver: Box<dyn Driver<G>>) {
        if !driver.is_dead() {
            let mut state = lock(&self.state);
            state.out -= 1;
            if state.closed {
                drop(state);
                driver.shut_down();
            } else {
                state.idle.push(driver);
                drop(state);
                self.freed.notify_one();
            }
            return;
        }
        drop(driver);
        self.stats.failures.fetch_add(1, Ordering::Relaxed);
        if lock(&self.state).closed {
            lock(&self.state).out -= 1;
            return;
        }
        let pool = Arc::clone(self);
        lock(&self.state).background += 1;
        let started = std::thread::Builder::new().name(format!("engine-restart {}", self.spec.name)).spawn(move || {
            pool.stats.restarts.fetch_add(1, Ordering::Relaxed);
            // The slot stays counted as handed out while the replacement starts.
            if let Ok(driver) = pool.launch_one() {
                pool.give_back(driver);
            }
            pool.background_done();
        });
        if started.is_err() {
            let mut state = lock(&self.state);
            state.out -= 1;
            state.background -= 1;
            drop(state);
            self.freed.notify_all();
        }
    }

    /// A background start is over, its process idle or shut down.
    fn background_done(&self) {
        lock(&self.state).background -= 1;
        self.freed.notify_all();
    }

    /// Start processes until `processes` are up (on a thread of its own; failures are logged and counted).
    pub fn warm(self: &Arc<Self>) {
        let pool = Arc::clone(self);
        lock(&self.state).background += 1;
        let started = std::thread::Builder::new().name(format!("engine-warm {}", self.spec.name)).spawn(move || {
            loop {
                {
                    let mut state = lock(&pool.state);
                    if state.closed || state.out + state.idle.len() >= pool.spec.processes {
                        break;
                    }
                    state.out += 1;
                }
                match pool.launch_one() {
                    Ok(driver) => pool.give_back(driver),
                    Err(e) => {
                        tracing::warn!(engine = %pool.spec.name, error = %e, "engine did not start");
                        break;
                    }
                }
            }
            pool.background_done();
        });
        if started.is_err() {
            self.background_done();
        }
    }

    /// Run one search on a process of this pool, on a thread of its own. Progress and the answer go to
    /// `sink`; `on_end` is told how it ended (an error names the engine). The handle controls the search as
    /// one of the worker pool's.
    pub fn run(
        self: &Arc<Self>,
        search: ExternalSearch<G>,
        mut sink: impl FnMut(Event<G::Move>) + Send + 'static,
        on_end: impl FnOnce(Result<Done<G::Move>, EngineError>) + Send + 'static,
    ) -> Result<JobHandle, EngineError> {
        let (handle, control) = JobHandle::external();
        {
            let mut running = lock(&self.running);
            running.retain(|flag| flag.strong_count() > 0);
            running.push(Arc::downgrade(&control.stop_flag()));
        }
        let pool = Arc::clone(self);
        // A search is counted as its answer is handed on, so whoever receives the answer already sees it counted.
        let counter = Arc::clone(self);
        let limits = search.limits.clone();
        let mut sink = move |mut event: Event<G::Move>| {
            match &mut event {
                Event::Done(done) => {
                    counter.stats.searches.fetch_add(1, Ordering::Relaxed);
                    believable(done, &limits);
                }
                Event::Info(info) => believable_info(info),
            }
            sink(event)
        };
        let spawned = std::thread::Builder::new().name(format!("engine-search {}", self.spec.name)).spawn(move || {
            let stop = control.stop_flag();
            let outcome = pool.checkout(CHECKOUT_WAIT).and_then(|mut driver| {
                let result = if control.is_cancelled() {
                    Err(EngineError::Cancelled { engine: pool.spec.name.clone() })
                } else {
                    driver.search(&search.root, &search.moves, &search.limits, search.multipv, &stop, &mut sink)
                };
                let result = result.map(|mut done| {
                    believable(&mut done, &search.limits);
                    done
                });
                pool.give_back(driver);
                result
            });
            on_end(outcome);
            drop(control);
        });
        spawned.map_err(|source| EngineError::Spawn { engine: self.spec.name.clone(), source })?;
        Ok(handle)
    }

    /// One search, waited for on this thread (for `engines check` and matches).
    pub fn search_now(
        self: &Arc<Self>,
        search: &ExternalSearch<G>,
        stop: &std::sync::atomic::AtomicBool,
        sink: &mut dyn FnMut(Event<G::Move>),
    ) -> Result<Done<G::Move>, EngineError> {
        let mut driver = self.checkout(CHECKOUT_WAIT)?;
        let mut sink = |mut event: Event<G::Move>| {
            match &mut event {
                Event::Done(done) => believable(done, &search.limits),
                Event::Info(info) => believable_info(info),
            }
            sink(event)
        };
        let result = driver.search(&search.root, &search.moves, &search.limits, search.multipv, stop, &mut sink);
        let result = result.map(|mut done| {
            believable(&mut done, &search.limits);
            done
        });
        self.give_back(driver);
        if result.is_ok() {
            self.stats.searches.fetch_add(1, Ordering::Relaxed);
        }
        result
    }
}

/// Options that change how fast an engine finds its answers, not what it judges: left out of [`settings_tag`].
const SPEED_OPTIONS: [&str; 4] = ["hash", "threads", "ponder", "move overhead"];

/// A digest of what decides an engine's answers beside its id: its arguments, its options but those of
/// [`SPEED_OPTIONS`] (in name order), and its program file's size and time of change (a program that names
/// itself by its file, as Checkers Protocol engines do, is upgraded in place).
fn settings_tag(spec: &EngineSpec) -> String {
    let mut text = String::new();
    for arg in &spec.args {
        text.push_str(arg);
        text.push('\0');
    }
    text.push('\u{1}');
    let mut options: Vec<(String, &str)> = spec
        .options
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.as_str()))
        .filter(|(n, _)| !SPEED_OPTIONS.contains(&n.as_str()))
        .collect();
    options.sort();
    for (name, value) in options {
        text.push_str(&format!("{name}={value}\0"));
    }
    let program = match &spec.dir {
        Some(dir) if spec.program.is_relative() && spec.program.components().count() > 1 => dir.join(&spec.program),
        _ => spec.program.clone(),
    };
    if let Ok(meta) = std::fs::metadata(&program) {
        let changed = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        text.push_str(&format!("\u{1}{} {}", meta.len(), changed.map_or(0, |d| d.as_nanos())));
    }
    format!("[{:016x}]", crate::fnv1a64(text.as_bytes()))
}

/// The deepest depth an engine's answer is believed to have reached when no depth was asked: a claim beyond it
/// (four billion, say) would be cached as answering every deeper request after it.
const MOST_DEPTH: u32 = 255;
/// The largest count (nodes, milliseconds) passed on: every JSON reader holds it exactly (2^53 - 1).
const MOST_COUNT: u64 = (1 << 53) - 1;

/// An engine's answer as far as it can be believed: no deeper than the depth asked (or [`MOST_DEPTH`]), and
/// its counts within [`MOST_COUNT`] (found by an audit: an engine's `depth 4294967295` was cached, and counts
/// of 2^64 - 1 went out as JSON numbers no client reads exactly).
fn believable<M>(done: &mut Done<M>, limits: &Limits) {
    let asked = limits.depth.unwrap_or(MOST_DEPTH).min(MOST_DEPTH);
    done.depth = done.depth.min(asked);
    done.seldepth = done.seldepth.min(MOST_DEPTH);
    for line in &mut done.lines {
        line.depth = line.depth.min(asked);
        line.seldepth = line.seldepth.min(MOST_DEPTH);
    }
    for count in [&mut done.nodes, &mut done.nps, &mut done.time_ms, &mut done.neval] {
        *count = (*count).min(MOST_COUNT);
    }
}

/// [`believable`] for a progress report.
fn believable_info<M>(info: &mut Info<M>) {
    info.depth = info.depth.min(MOST_DEPTH);
    info.seldepth = info.seldepth.min(MOST_DEPTH);
    for count in [&mut info.nodes, &mut info.nps, &mut info.time_ms, &mut info.neval] {
        *count = (*count).min(MOST_COUNT);
    }
}

/// What the registry needs of a pool without knowing its game.
pub trait PoolControl: Send + Sync {
    fn id(&self) -> Option<String>;
    fn last_error(&self) -> Option<String>;
    /// Processes (idle, handed out or starting).
    fn processes(&self) -> (usize, usize);
    fn warm(&self);
    /// Stop every idle process and refuse new searches; processes in use stop when given back.
    fn shutdown(&self);
    /// Ask every running search of the pool for its answer now (a server stopping: they answer with what they
    /// have, as kibitz's own do).
    fn stop_searches(&self);
}

impl<G: Game> PoolControl for Arc<EnginePool<G>> {
    fn id(&self) -> Option<String> {
        EnginePool::id(self)
    }

    fn last_error(&self) -> Option<String> {
        lock(&self.state).last_error.clone()
    }

    fn processes(&self) -> (usize, usize) {
        let state = lock(&self.state);
        (state.idle.len(), state.out)
    }

    fn warm(&self) {
        EnginePool::warm(self);
    }

    fn stop_searches(&self) {
        for flag in lock(&self.running).iter().filter_map(std::sync::Weak::upgrade) {
            flag.store(true, Ordering::Relaxed);
        }
    }

    fn shutdown(&self) {
        let idle: Vec<_> = {
            let mut state = lock(&self.state);
            state.closed = true;
            state.idle.drain(..).collect()
        };
        self.freed.notify_all();
        for driver in idle {
            driver.shut_down();
        }
        // A process being started in the background (a replacement, warming) is shut down as soon as its start
        // ends, the pool being closed: wait for that (a start is bounded by the handshake and ready timeouts),
        // so that it does not outlive a match or a server that exits next.
        let timeouts = &self.spec.timeouts;
        let deadline = Instant::now() + timeouts.handshake + timeouts.ready + Duration::from_secs(2);
        let mut state = lock(&self.state);
        while state.background > 0 {
            let now = Instant::now();
            if now >= deadline {
                tracing::warn!(engine = %self.spec.name, "an engine process still starting at shutdown was not waited for");
                break;
            }
            state = match self.freed.wait_timeout(state, deadline - now) {
                Ok((guard, _)) => guard,
                Err(e) => e.into_inner().0,
            };
        }
    }
}

/// One configured engine for one game.
pub struct ExternalEngine {
    pub name: String,
    pub game: GameKind,
    pub spec: Arc<EngineSpec>,
    pub stats: Arc<EngineStats>,
    /// Whether it answers its game's requests that name no engine.
    pub default: bool,
    /// A digest of what else decides its answers ([`settings_tag`]), beside its name and id in the cache.
    settings: String,
    /// The `Arc<EnginePool<G>>` of its game.
    pool: Box<dyn Any + Send + Sync>,
    control: Box<dyn PoolControl>,
}

impl std::fmt::Debug for ExternalEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalEngine").field("name", &self.name).field("game", &self.game).finish_non_exhaustive()
    }
}

impl PartialEq for ExternalEngine {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.game == other.game
    }
}

impl Eq for ExternalEngine {}

impl std::hash::Hash for ExternalEngine {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        self.game.hash(state);
    }
}

impl ExternalEngine {
    fn new<G: Game>(spec: &Arc<EngineSpec>, game: GameKind, launch: Launch<G>) -> ExternalEngine {
        let pool = EnginePool::new(Arc::clone(spec), launch);
        ExternalEngine {
            name: spec.name.clone(),
            game,
            spec: Arc::clone(spec),
            stats: Arc::clone(pool.stats()),
            default: spec.default_for.contains(&game),
            settings: settings_tag(spec),
            pool: Box::new(Arc::clone(&pool)),
            control: Box::new(pool),
        }
    }

    /// The pool of game `G` (`None` when this engine analyses another game).
    pub fn pool<G: Game>(&self) -> Option<&Arc<EnginePool<G>>> {
        self.pool.downcast_ref::<Arc<EnginePool<G>>>()
    }

    /// The engine's own name and version, once a process has started.
    pub fn id(&self) -> Option<String> {
        self.control.id()
    }

    /// How answers name this engine: its configured name and its own id (once a process has said it).
    pub fn cache_name(&self) -> Option<String> {
        self.id().map(|id| format!("{} ({id})", self.name))
    }

    /// What the cache stores this engine's results under: [`ExternalEngine::cache_name`] and the digest of its
    /// settings, so that a new version of an engine, another program under the same name, or the same program
    /// set to play otherwise (found by an audit: a Stockfish limited to `UCI_Elo` 1350 and one at full strength
    /// under one name shared their results) never serves another's results.
    pub fn cache_key_name(&self) -> Option<String> {
        self.cache_name().map(|name| format!("{name} {}", self.settings))
    }

    pub fn last_error(&self) -> Option<String> {
        self.control.last_error()
    }

    /// Processes idle, and handed out or starting.
    pub fn processes(&self) -> (usize, usize) {
        self.control.processes()
    }

    pub fn protocol(&self) -> Protocol {
        self.spec.protocol
    }
}

/// A configured engine that cannot be built.
#[derive(Debug, thiserror::Error)]
#[error("engine `{engine}`: kibitz has no {protocol} client for {game}")]
pub struct NoClient {
    pub engine: String,
    pub protocol: &'static str,
    pub game: GameKind,
}

/// The external engines of a deployment, one entry per engine and game. Cheap to clone; empty without an
/// engines file.
#[derive(Clone, Default, Debug)]
pub struct Engines {
    list: Arc<Vec<Arc<ExternalEngine>>>,
}

impl Engines {
    /// The pools of the configured engines (no process is started yet: see [`Engines::warm`]).
    pub fn new(specs: Vec<EngineSpec>) -> Result<Engines, NoClient> {
        let mut list = Vec::new();
        for spec in specs {
            let spec = Arc::new(spec);
            for &game in &spec.games {
                list.push(Arc::new(build(&spec, game)?));
            }
        }
        Ok(Engines { list: Arc::new(list) })
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn list(&self) -> &[Arc<ExternalEngine>] {
        &self.list
    }

    /// The engine of this name for `game`.
    pub fn get(&self, name: &str, game: GameKind) -> Option<&Arc<ExternalEngine>> {
        self.list.iter().find(|e| e.game == game && e.name.eq_ignore_ascii_case(name))
    }

    /// Whether an engine of this name exists for some game.
    pub fn knows(&self, name: &str) -> bool {
        self.list.iter().any(|e| e.name.eq_ignore_ascii_case(name))
    }

    /// The engine answering `game`'s requests that name none, if the file gives one.
    pub fn default_for(&self, game: GameKind) -> Option<&Arc<ExternalEngine>> {
        self.list.iter().find(|e| e.game == game && e.default)
    }

    /// Start every engine's processes in the background.
    pub fn warm(&self) {
        for engine in self.list.iter() {
            engine.control.warm();
        }
    }

    /// Ask every engine's running searches for their answers now.
    pub fn stop_searches(&self) {
        for engine in self.list.iter() {
            engine.control.stop_searches();
        }
    }

    /// Stop every engine's processes.
    pub fn shutdown(&self) {
        for engine in self.list.iter() {
            engine.control.shutdown();
        }
    }
}

/// The pool of `spec` for `game`, with its protocol's client.
fn build(spec: &Arc<EngineSpec>, game: GameKind) -> Result<ExternalEngine, NoClient> {
    Ok(match (spec.protocol, game) {
        (Protocol::Uci, GameKind::Chess) => ExternalEngine::new::<Chess>(spec, game, uci_launch::<Chess>),
        (Protocol::Uci, GameKind::Xiangqi) => ExternalEngine::new::<Xiangqi>(spec, game, uci_launch::<Xiangqi>),
        (Protocol::Uhp, GameKind::Hive) => ExternalEngine::new::<Hive>(spec, game, uhp_launch),
        (Protocol::Hub, GameKind::Draughts) => ExternalEngine::new::<Draughts>(spec, game, hub_launch),
        (Protocol::Checkers, GameKind::Checkers) => ExternalEngine::new::<Checkers>(spec, game, checkers_launch),
        (protocol, game) => return Err(NoClient { engine: spec.name.clone(), protocol: protocol.name(), game }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Score;
    use crate::search::Line;

    /// Found by an audit: an engine's `depth 4294967295` under a time limit was cached as answering every
    /// deeper request, and counts of 2^64 - 1 were sent as JSON numbers no client reads exactly.
    #[test]
    fn an_engines_claims_are_bounded() {
        let line = Line { pv: vec![1u8], score: Score::Cp(3), depth: u32::MAX, seldepth: u32::MAX };
        let mut done = Done {
            best: Some(1u8),
            ponder: None,
            lines: vec![line],
            depth: u32::MAX,
            seldepth: u32::MAX,
            nodes: u64::MAX,
            nps: u64::MAX,
            time_ms: u64::MAX,
            neval: 0,
            game_end: None,
        };
        let mut by_time = done.clone();
        believable(&mut by_time, &Limits::movetime(Duration::from_millis(100)));
        assert_eq!((by_time.depth, by_time.seldepth, by_time.lines[0].depth), (MOST_DEPTH, MOST_DEPTH, MOST_DEPTH));
        assert_eq!((by_time.nodes, by_time.nps, by_time.time_ms), (MOST_COUNT, MOST_COUNT, MOST_COUNT));
        believable(&mut done, &Limits::depth(12));
        assert_eq!((done.depth, done.lines[0].depth), (12, 12));
    }
}
