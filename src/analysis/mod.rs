//! The one analysis path. Every request for an evaluation, from REST, the WebSocket, an annotation job or a
//! protocol session, is a [`Request`] handed to [`Analysis`]:
//!
//! * [`Analysis::analyse`] answers from the cache when a stored result is deep enough, joins an identical
//!   search already running, or starts one on the pool; the result is stored before anyone is answered, so a
//!   client that asks again at once finds it cached;
//! * [`Analysis::start`] does the same and streams the search's progress to any number of listeners (the
//!   WebSocket);
//! * [`Analysis::search`] starts a fresh search and hands its events to a sink, with no cache and no sharing:
//!   protocol sessions that play a game need exactly that (`go` in a game), through the same request type.
//!
//! The engine is a parameter of every request ([`EngineChoice`]): kibitz's own search on the worker pool, or
//! an external engine's process from the engines file ([`Engines`]). The pool request ([`SearchRequest`]) and
//! the external search are built here and nowhere else, and so is the cache key, which names the engine and
//! its version so that engines never mix.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use tokio::sync::{broadcast, watch};

use crate::engines::{EngineError, Engines, ExternalEngine, ExternalSearch};
use crate::game::{Game, GameEnd, format_line};
use crate::games::GameKind;
use crate::pool::{JobHandle, Pool, PoolError, Priority, SearchRequest};
use crate::search::{Done, Event, Info, Limits, ScoreBound, SearchOptions};
use crate::store::{CacheKey, CachedAnalysis, CachedLine, Store, StoreError};

/// The name and version of kibitz's own engine, reported with every analysis and stored with every result.
pub const ENGINE: &str = concat!("kibitz ", env!("CARGO_PKG_VERSION"));

/// Progress messages a listener may fall behind by before it misses some (answers are never missed).
const PROGRESS_BACKLOG: usize = 256;

/// Which engine answers a request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum EngineChoice {
    /// kibitz's own search on the worker pool.
    #[default]
    Own,
    /// A configured external engine, on a process of its pool.
    External(Arc<ExternalEngine>),
}

impl EngineChoice {
    /// The engine as answers name it: kibitz's name and version, or an external engine's configured name
    /// followed by its own name and version in parentheses (once a process has said it).
    pub fn label(&self) -> Arc<str> {
        match self {
            EngineChoice::Own => Arc::from(ENGINE),
            EngineChoice::External(e) => Arc::from(e.cache_name().unwrap_or_else(|| e.name.clone())),
        }
    }

    /// What the cache stores this engine's results under: `None` for kibitz's own (the store's version),
    /// `Some(None)` for an external engine whose version is not known yet (nothing can be cached).
    fn cache_engine(&self) -> Option<Option<String>> {
        match self {
            EngineChoice::Own => None,
            EngineChoice::External(e) => Some(e.cache_key_name()),
        }
    }
}

/// Why a request named an engine that cannot answer it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown engine `{name}` for {game} (known: {known})")]
pub struct UnknownEngine {
    pub name: String,
    pub game: GameKind,
    pub known: String,
}

/// An external engine failed the request (it was killed and is being replaced), or is too busy.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct EngineFailure {
    /// The engine's configured name.
    pub engine: String,
    pub message: String,
    /// Every process of the engine is busy (try again later), rather than a failure.
    pub busy: bool,
    /// The engine cannot do what the request asks (several lines, or the game's variant): the request's fault,
    /// not the engine's, which goes on.
    pub unsupported: bool,
}

impl EngineFailure {
    fn of(engine: &ExternalEngine, error: &EngineError) -> EngineFailure {
        EngineFailure {
            engine: engine.name.clone(),
            message: error.to_string(),
            busy: matches!(error, EngineError::Busy { .. }),
            unsupported: matches!(error, EngineError::Unsupported { .. }),
        }
    }
}

/// Whether an analysis may be answered from the cache. Read from a string only (any other JSON value is an
/// error naming the member, not taken for an enum's other forms).
#[derive(Clone, Copy, Debug, Default, serde::Deserialize, PartialEq, Eq)]
#[serde(try_from = "String")]
pub enum CacheMode {
    /// Answer from the cache when it holds a deep enough result, else search (and store).
    #[default]
    Use,
    /// Search even if the cache could answer; store the result.
    Refresh,
    /// Answer only from the cache: [`AnalysisError::NotCached`] when it cannot.
    Only,
}

impl TryFrom<String> for CacheMode {
    type Error = String;

    fn try_from(text: String) -> Result<CacheMode, String> {
        match text.as_str() {
            "use" => Ok(CacheMode::Use),
            "refresh" => Ok(CacheMode::Refresh),
            "only" => Ok(CacheMode::Only),
            _ => Err(format!("unknown variant `{text}`, expected one of `use`, `refresh`, `only`")),
        }
    }
}

/// One request for an evaluation.
#[derive(Clone, Debug)]
pub struct Request<G: Game> {
    /// The position to analyse (with its history: repetitions count).
    pub position: G,
    pub limits: Limits,
    /// Lines wanted (at least 1).
    pub multipv: u32,
    pub engine: EngineChoice,
    pub cache: CacheMode,
    pub priority: Priority,
    /// Threads on this one search.
    pub threads: usize,
    /// Report the move being searched after this long (zero: never).
    pub currmove_after: Duration,
    /// Root moves not to consider (by [`Game::move_key`]).
    pub excluded: Vec<u32>,
    /// Where `position` came from: an earlier position and the moves played from it, so that an external
    /// engine sees the history (repetitions). Without it the engine gets `position` alone.
    pub history: Option<(G, Vec<G::Move>)>,
    /// Who asked (a key or an address): the pool shares its queue fairly between clients.
    pub client: Option<Arc<str>>,
}

impl<G: Game> Request<G> {
    /// A request with the defaults: one line, kibitz's engine, the cache used, normal priority, one thread.
    pub fn new(position: G, limits: Limits) -> Self {
        Request {
            position,
            limits,
            multipv: 1,
            engine: EngineChoice::Own,
            cache: CacheMode::Use,
            priority: Priority::Normal,
            threads: 1,
            currmove_after: Duration::ZERO,
            excluded: Vec::new(),
            history: None,
            client: None,
        }
    }

    /// Who asked: searches of one client wait behind each other, not in front of other clients' searches.
    pub fn client(mut self, client: Option<Arc<str>>) -> Self {
        self.client = client;
        self
    }

    /// The engine that answers (kibitz's own by default).
    pub fn engine(mut self, engine: EngineChoice) -> Self {
        self.engine = engine;
        self
    }

    /// The position is `root` after `moves` (which must be legal there; the caller played them).
    pub fn history(mut self, root: G, moves: Vec<G::Move>) -> Self {
        if !moves.is_empty() {
            self.history = Some((root, moves));
        }
        self
    }

    pub fn multipv(mut self, multipv: u32) -> Self {
        self.multipv = multipv.max(1);
        self
    }

    pub fn cache(mut self, cache: CacheMode) -> Self {
        self.cache = cache;
        self
    }

    pub fn priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    pub fn currmove_after(mut self, after: Duration) -> Self {
        self.currmove_after = after;
        self
    }

    pub fn excluded(mut self, excluded: Vec<u32>) -> Self {
        self.excluded = excluded;
        self
    }

    /// What the cache stores this request's answer under; `None` while an external engine's version is not
    /// known (no process of it has started yet).
    pub fn cache_key(&self) -> Option<CacheKey> {
        let engine = match self.engine.cache_engine() {
            // kibitz's own: a game whose evaluation is data (chess's network) keeps each data's results apart.
            None => G::evaluation_tag().map(|tag| format!("{} {tag}", crate::store::ENGINE_VERSION)),
            Some(None) => return None,
            Some(Some(name)) => Some(name),
        };
        Some(CacheKey {
            game: G::NAME.to_string(),
            // The draw rules' memory too: the same board nearer a draw, or where a repetition is possible, may
            // have another answer.
            position: format!("{}{}", self.position.position_key(), self.position.rule_state_key()),
            multipv: self.multipv,
            engine,
        })
    }

    /// The external engine's search.
    fn external_search(&self) -> ExternalSearch<G> {
        let (root, moves) = match &self.history {
            Some((root, moves)) => (root.clone(), moves.clone()),
            None => (self.position.clone(), Vec::new()),
        };
        ExternalSearch { root, moves, limits: self.limits.clone(), multipv: self.multipv }
    }

    /// The pool's request: the one place where a search request is built.
    fn search_request(&self) -> SearchRequest<G> {
        SearchRequest {
            game: self.position.clone(),
            limits: self.limits.clone(),
            options: SearchOptions {
                multipv: self.multipv as usize,
                threads: self.threads.max(1),
                currmove_after: self.currmove_after,
                excluded: self.excluded.clone(),
                tuning: None,
            },
            priority: self.priority,
            client: self.client.clone(),
        }
    }

    /// Identical questions share one search. Searches without a limit (or with excluded moves, which only
    /// protocol sessions use) are never shared.
    fn flight_key(&self) -> Option<String> {
        let l = &self.limits;
        if l.infinite || !self.excluded.is_empty() || l.clock.is_some() {
            return None;
        }
        if l.depth.is_none() && l.movetime.is_none() && l.nodes.is_none() {
            return None;
        }
        Some(format!(
            "{}\n{}\n{}{}\n{}\n{:?}/{:?}/{:?}\n{}",
            self.engine.label(),
            G::NAME,
            self.position.position_key(),
            self.position.rule_state_key(),
            self.multipv,
            l.depth,
            l.movetime.map(|t| t.as_millis()),
            l.nodes,
            self.threads,
        ))
    }
}

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// Every worker is busy and the queue is full, or the pool is shutting down.
    #[error(transparent)]
    Busy(#[from] PoolError),
    /// `cache: only` and nothing deep enough is cached.
    #[error("no cached analysis of this position")]
    NotCached,
    /// The search ended without an answer (the server is stopping).
    #[error("the search ended without an answer")]
    Interrupted,
    /// The request named an engine this server does not have for its game.
    #[error(transparent)]
    UnknownEngine(#[from] UnknownEngine),
    /// The external engine failed (it is restarted) or is too busy.
    #[error(transparent)]
    Engine(#[from] EngineFailure),
    /// `cache: only` and the store could not be asked (an outage): not knowing is not "not cached".
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

/// A finished analysis.
#[derive(Clone, Debug)]
pub struct Answer {
    pub result: Arc<CachedAnalysis>,
    /// Answered from the cache.
    pub cached: bool,
    /// The position is already over (no search was made; `result` is empty).
    pub end: Option<GameEnd>,
    /// The engine that answered ([`EngineChoice::label`]).
    pub engine: Arc<str>,
}

/// What [`Analysis::start`] gives: an answer at once, or a running search to follow.
pub enum Started<G: Game> {
    Answered(Answer),
    Running(Subscription<G>),
}

/// Counters of the analysis path, for metrics.
#[derive(Debug, Default)]
pub struct Counters {
    /// Searches started (a shared search counts once).
    pub searches: AtomicU64,
    /// Requests answered by joining a search already running.
    pub shared: AtomicU64,
    pub cache_hits: AtomicU64,
    pub cache_misses: AtomicU64,
}

struct Inner {
    pool: Pool,
    store: Option<Store>,
    engines: Engines,
    flights: Mutex<HashMap<String, Weak<dyn Any + Send + Sync>>>,
    counters: Counters,
    /// Cache writes in progress; shutdown waits for them before the store closes.
    writes: watch::Sender<usize>,
}

/// The analysis service. Cheap to clone; every clone shares the pool, the store and the searches in flight.
#[derive(Clone)]
pub struct Analysis {
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Analysis {
    /// The service of a server: the pool and the analysis cache.
    pub fn new(pool: Pool, store: Store) -> Self {
        Self::build(pool, Some(store), Engines::default())
    }

    /// The service of a stand-alone protocol engine: the pool only, no cache.
    pub fn local(pool: Pool) -> Self {
        Self::build(pool, None, Engines::default())
    }

    /// The service of a server with external engines beside its own.
    pub fn with_engines(pool: Pool, store: Option<Store>, engines: Engines) -> Self {
        Self::build(pool, store, engines)
    }

    fn build(pool: Pool, store: Option<Store>, engines: Engines) -> Self {
        Analysis {
            inner: Arc::new(Inner {
                pool,
                store,
                engines,
                flights: Mutex::new(HashMap::new()),
                counters: Counters::default(),
                writes: watch::Sender::new(0),
            }),
        }
    }

    pub fn pool(&self) -> &Pool {
        &self.inner.pool
    }

    pub fn counters(&self) -> &Counters {
        &self.inner.counters
    }

    /// The external engines (empty without an engines file).
    pub fn engines(&self) -> &Engines {
        &self.inner.engines
    }

    /// The engine a request for `game` naming `name` gets: without a name the game's default from the engines
    /// file, else kibitz's own; `kibitz` is always kibitz's own.
    pub fn choose(&self, game: GameKind, name: Option<&str>) -> Result<EngineChoice, UnknownEngine> {
        let engines = &self.inner.engines;
        let Some(name) = name.map(str::trim) else {
            return Ok(engines.default_for(game).map_or(EngineChoice::Own, |e| EngineChoice::External(Arc::clone(e))));
        };
        if name.eq_ignore_ascii_case("kibitz") {
            return Ok(EngineChoice::Own);
        }
        match engines.get(name, game) {
            Some(e) => Ok(EngineChoice::External(Arc::clone(e))),
            None => {
                let mut known = vec!["kibitz".to_string()];
                known.extend(engines.list().iter().filter(|e| e.game == game).map(|e| e.name.clone()));
                Err(UnknownEngine { name: name.chars().take(64).collect(), game, known: known.join(", ") })
            }
        }
    }

    /// A fresh search of `request`, its events handed to `sink` on a worker thread (the last is `Done`). No
    /// cache, no sharing: for protocol sessions playing a game. Dropping the handle cancels the search.
    ///
    /// With an external engine, a failure ends the search without `Done`: `on_failure` is told why.
    pub fn search<G: Game>(
        &self,
        request: &Request<G>,
        sink: impl FnMut(Event<G::Move>) + Send + 'static,
    ) -> Result<JobHandle, AnalysisError> {
        self.search_or_fail(request, sink, |failure| {
            tracing::warn!(engine = %failure.engine, "search failed: {failure}");
        })
    }

    /// [`Analysis::search`], telling `on_failure` when an external engine fails.
    pub fn search_or_fail<G: Game>(
        &self,
        request: &Request<G>,
        sink: impl FnMut(Event<G::Move>) + Send + 'static,
        on_failure: impl FnOnce(EngineFailure) + Send + 'static,
    ) -> Result<JobHandle, AnalysisError> {
        let job = match &request.engine {
            EngineChoice::Own => self.inner.pool.submit(request.search_request(), sink)?,
            EngineChoice::External(engine) => {
                let Some(pool) = engine.pool::<G>() else {
                    let known = engine.name.clone();
                    return Err(UnknownEngine { name: engine.name.clone(), game: engine.game, known }.into());
                };
                let failed = Arc::clone(engine);
                let on_end = move |result: Result<_, EngineError>| {
                    if let Err(e) = result
                        && !matches!(e, EngineError::Cancelled { .. })
                    {
                        on_failure(EngineFailure::of(&failed, &e));
                    }
                };
                pool.run(request.external_search(), sink, on_end)
                    .map_err(|e| AnalysisError::Engine(EngineFailure::of(engine, &e)))?
            }
        };
        self.inner.counters.searches.fetch_add(1, Ordering::Relaxed);
        Ok(job)
    }

    /// The answer to `request`: the game's end, the cache, a search in flight or a new one.
    pub async fn analyse<G: Game>(&self, request: Request<G>) -> Result<Answer, AnalysisError> {
        match self.start(request).await? {
            Started::Answered(answer) => Ok(answer),
            Started::Running(mut subscription) => subscription.answer().await,
        }
    }

    /// Like [`Analysis::analyse`], but a search is returned running, to be followed.
    pub async fn start<G: Game>(&self, request: Request<G>) -> Result<Started<G>, AnalysisError> {
        if let Some(answer) = self.immediate(&request).await? {
            return Ok(Started::Answered(answer));
        }
        self.join_or_start(request).map(Started::Running)
    }

    /// The answer without a search, if there is one: a finished game, or a deep enough cached result.
    async fn immediate<G: Game>(&self, request: &Request<G>) -> Result<Option<Answer>, AnalysisError> {
        let engine = request.engine.label();
        if let Some(end) = request.position.outcome() {
            let result = Arc::new(CachedAnalysis::empty());
            return Ok(Some(Answer { result, cached: false, end: Some(end), engine }));
        }
        if request.cache == CacheMode::Refresh || request.limits.infinite {
            return Ok(None);
        }
        let found = match request.cache_key() {
            Some(key) if request.cache == CacheMode::Only => self.lookup_only(&key, &request.position).await?,
            Some(key) => self.lookup_satisfying(&key, &request.position, &request.limits).await,
            None => None,
        };
        let found = match found {
            Some(found) if request.cache == CacheMode::Only || satisfies(&found, &request.limits) => Some(found),
            _ => None,
        };
        let counters = &self.inner.counters;
        match found {
            Some(found) => {
                counters.cache_hits.fetch_add(1, Ordering::Relaxed);
                Ok(Some(Answer { result: Arc::new(found), cached: true, end: None, engine }))
            }
            None => {
                counters.cache_misses.fetch_add(1, Ordering::Relaxed);
                if request.cache == CacheMode::Only {
                    return Err(AnalysisError::NotCached);
                }
                Ok(None)
            }
        }
    }

    /// The deepest cached result, for a request that asks nothing else. On a shared store the database is
    /// asked even when this server remembers a result (another server may have stored a deeper one); a store
    /// that cannot be asked is an error (answered 503). Where the database has nothing usable (a row that does
    /// not decode or is not legal here is removed), or cannot be asked, what this server remembers answers.
    async fn lookup_only<G: Game>(&self, key: &CacheKey, root: &G) -> Result<Option<CachedAnalysis>, AnalysisError> {
        let Some(store) = self.inner.store.as_ref() else { return Ok(None) };
        let valid = |found: &CachedAnalysis| check_cached(root, found);
        match store.get_analysis_checked(key, |_| false, &valid).await {
            Ok(Some(found)) => Ok(Some(found)),
            Ok(None) => Ok(store.remembered(key)),
            Err(e @ crate::store::StoreError::Corrupt { .. }) => {
                tracing::warn!(error = %e, "a stored result was removed");
                Ok(store.remembered(key))
            }
            Err(e) => store.remembered(key).map(Some).ok_or_else(|| e.into()),
        }
    }

    /// A cached result that [`satisfies`] `limits`, or else any cached result (or none). On a shared store a
    /// remembered result too shallow for `limits` is looked up in the database again (another server may
    /// have stored a deeper one). A failing store is logged and treated as a miss.
    pub async fn lookup_satisfying<G: Game>(
        &self,
        key: &CacheKey,
        root: &G,
        limits: &Limits,
    ) -> Option<CachedAnalysis> {
        let store = self.inner.store.as_ref()?;
        let valid = |found: &CachedAnalysis| check_cached(root, found);
        match store.get_analysis_checked(key, |found| satisfies(found, limits), &valid).await {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(error = %e, "cache lookup failed; searching instead");
                None
            }
        }
    }

    fn join_or_start<G: Game>(&self, request: Request<G>) -> Result<Subscription<G>, AnalysisError> {
        let key = request.flight_key();
        let mut flights = lock(&self.inner.flights);
        if let Some(key) = &key
            && let Some(flight) = flights.get(key).and_then(Weak::upgrade)
            && let Ok(flight) = flight.downcast::<Flight<G>>()
            && flight.join()
        {
            self.inner.counters.shared.fetch_add(1, Ordering::Relaxed);
            let infos = flight.infos.subscribe();
            return Ok(Subscription::new(flight, infos, request.engine.clone()));
        }
        // The first listener's receiver exists before the search starts, so it misses no report.
        let (infos, first_infos) = broadcast::channel(PROGRESS_BACKLOG);
        let (found_tx, found_rx) = watch::channel(None);
        let sink_found = found_tx.clone();
        let (result_tx, result) = watch::channel(None);
        let root = request.position.clone();
        let sink_infos = infos.clone();
        let snapshot = Arc::new(Mutex::new(Snapshot::default()));
        let sink_snapshot = Arc::clone(&snapshot);
        let sink = move |event: Event<G::Move>| match event {
            Event::Info(info) => {
                if info.bound == ScoreBound::Exact && !info.pv.is_empty() {
                    lock(&sink_snapshot).record(&root, &info);
                }
                let _ = sink_infos.send(Arc::new(info));
            }
            Event::Done(done) => {
                sink_found.send_replace(Some(Ok(Arc::new(result_of(&root, &done)))));
            }
        };
        let on_failure = move |failure: EngineFailure| {
            found_tx.send_replace(Some(Err(failure)));
        };
        let job = self.search_or_fail(&request, sink, on_failure)?;
        let gate = Mutex::new(Gate { listeners: 0, stopped: false });
        let flight = Arc::new(Flight { job, infos, result, gate, snapshot });
        flight.join();
        if let Some(key) = key {
            flights.retain(|_, w| w.strong_count() > 0);
            let erased: Arc<dyn Any + Send + Sync> = flight.clone();
            flights.insert(key, Arc::downgrade(&erased));
        }
        drop(flights);
        let engine = request.engine.clone();
        self.store_then_publish(request, found_rx, result_tx);
        Ok(Subscription::new(flight, first_infos, engine))
    }

    /// When the search answers: store the result (if it searched at all), then tell the listeners. The key is
    /// taken after the search, when an external engine's version is known.
    fn store_then_publish<G: Game>(
        &self,
        request: Request<G>,
        mut found: watch::Receiver<Found>,
        publish: watch::Sender<Found>,
    ) {
        let store = self.inner.store.clone();
        let write = self.write_guard();
        tokio::spawn(async move {
            let _write = write;
            let Ok(result) = found.wait_for(Option::is_some).await.map(|r| r.clone()) else { return };
            let Some(result) = result else { return };
            if let Ok(result) = &result
                && let Some(store) = store
                && result.depth > 0
                && let Some(key) = request.cache_key()
                && let Err(e) = if request.cache == CacheMode::Refresh {
                    store.refresh_analysis(&key, result).await
                } else {
                    store.put_analysis(&key, result).await
                }
            {
                log_store_error(&e);
            }
            publish.send_replace(Some(result));
        });
    }

    fn write_guard(&self) -> WriteGuard {
        self.inner.writes.send_modify(|n| *n += 1);
        WriteGuard(self.inner.writes.clone())
    }

    /// Wait (up to `timeout`) for the cache writes in progress, so that answers given before a shutdown are
    /// not lost when the store closes. True when none is left.
    pub async fn finish_writes(&self, timeout: Duration) -> bool {
        let mut rx = self.inner.writes.subscribe();
        tokio::time::timeout(timeout, rx.wait_for(|n| *n == 0)).await.is_ok_and(|r| r.is_ok())
    }
}

fn log_store_error(e: &StoreError) {
    tracing::warn!(error = %e, "could not store an analysis");
}

/// One pending cache write.
struct WriteGuard(watch::Sender<usize>);

impl Drop for WriteGuard {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// The lines of the deepest completed iteration so far: what a listener that stops a shared search gets.
#[derive(Default)]
struct Snapshot {
    result: Option<CachedAnalysis>,
}

impl Snapshot {
    fn record<G: Game>(&mut self, root: &G, info: &Info<G::Move>) {
        let line = CachedLine { moves: format_line(root, &info.pv), score: info.score.into(), depth: info.depth };
        let r = self.result.get_or_insert_with(CachedAnalysis::empty);
        if info.multipv == 1 && info.depth > r.depth {
            r.lines.clear();
            r.depth = info.depth;
        }
        if info.depth == r.depth {
            let slot = info.multipv.saturating_sub(1) as usize;
            if slot <= r.lines.len() {
                r.lines.truncate(slot);
                r.lines.push(line);
            }
        }
        r.bestmove = r.lines.first().and_then(|l| l.moves.first().cloned());
        r.seldepth = r.seldepth.max(info.seldepth);
        r.nodes = info.nodes;
        r.time_ms = info.time_ms;
    }
}

/// What a search ended with: its result, or the external engine's failure.
type Found = Option<Result<Arc<CachedAnalysis>, EngineFailure>>;

/// One search, shared by every listener that asks the same question while it runs. When the last listener
/// goes away, the job handle is dropped and the search cancelled.
struct Flight<G: Game> {
    job: JobHandle,
    infos: broadcast::Sender<Arc<Info<G::Move>>>,
    result: watch::Receiver<Found>,
    gate: Mutex<Gate>,
    snapshot: Arc<Mutex<Snapshot>>,
}

/// Who listens to a search, and whether one of them stopped it for all: a stopped search takes no new
/// listener (it would answer them with the shallow result of someone else's stop), a new search starts instead.
struct Gate {
    listeners: usize,
    stopped: bool,
}

impl<G: Game> Flight<G> {
    /// Count one more listener, unless the search was stopped.
    fn join(&self) -> bool {
        let mut gate = lock(&self.gate);
        if gate.stopped {
            return false;
        }
        gate.listeners += 1;
        true
    }

    /// Stop the search for every listener; no one joins it after this.
    fn stop_for_all(&self) {
        lock(&self.gate).stopped = true;
        self.job.stop();
    }
}

/// What a listener of a running search sees next.
pub enum Progress<M> {
    Info(Arc<Info<M>>),
    Done(Answer),
}

/// A listener of a running search. Dropping it leaves the search (the last listener's leaving cancels it).
pub struct Subscription<G: Game> {
    flight: Arc<Flight<G>>,
    infos: broadcast::Receiver<Arc<Info<G::Move>>>,
    result: watch::Receiver<Found>,
    engine: EngineChoice,
    /// Stopped while others listen: answered from the snapshot.
    stopped: Option<Arc<CachedAnalysis>>,
}

impl<G: Game> Subscription<G> {
    /// A listener of `flight`, already counted ([`Flight::join`]).
    fn new(flight: Arc<Flight<G>>, infos: broadcast::Receiver<Arc<Info<G::Move>>>, engine: EngineChoice) -> Self {
        let result = flight.result.clone();
        Subscription { flight, infos, result, engine, stopped: None }
    }

    /// Ask for the answer now. The only listener stops the search (its answer is the search's, stored as
    /// usual); a listener of a search others share gets the lines of the deepest iteration completed so far,
    /// and the search goes on for the others.
    pub fn stop(&mut self) {
        let only = {
            let mut gate = lock(&self.flight.gate);
            // Decided under the gate, so that nobody joins between the count and the stop.
            gate.stopped |= gate.listeners <= 1;
            gate.stopped
        };
        if only {
            self.flight.job.stop();
            return;
        }
        let snapshot = lock(&self.flight.snapshot).result.clone();
        match snapshot {
            Some(result) => self.stopped = Some(Arc::new(result)),
            // Nothing completed yet: the search itself must answer.
            None => self.flight.stop_for_all(),
        }
    }

    /// The next progress report, or the answer (after which there is nothing more). Every report the search
    /// made before its answer comes before the answer (unless this listener fell too far behind).
    pub async fn next(&mut self) -> Result<Progress<G::Move>, AnalysisError> {
        loop {
            if let Some(result) = self.stopped.take() {
                return Ok(Progress::Done(self.answer_of(result)));
            }
            match self.infos.try_recv() {
                Ok(info) => return Ok(Progress::Info(info)),
                Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                Err(broadcast::error::TryRecvError::Empty | broadcast::error::TryRecvError::Closed) => {}
            }
            let published = self.result.borrow_and_update().clone();
            if let Some(result) = published {
                return Ok(Progress::Done(self.answer_of(result?)));
            }
            tokio::select! {
                info = self.infos.recv() => match info {
                    Ok(info) => return Ok(Progress::Info(info)),
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    // The flight holds a sender: never closed while it is followed.
                    Err(broadcast::error::RecvError::Closed) => {}
                },
                changed = self.result.changed() => {
                    if changed.is_err() && self.result.borrow().is_none() {
                        return Err(AnalysisError::Interrupted);
                    }
                }
            }
        }
    }

    /// Wait for the answer, skipping the progress reports.
    pub async fn answer(&mut self) -> Result<Answer, AnalysisError> {
        loop {
            if let Some(result) = self.stopped.take() {
                return Ok(self.answer_of(result));
            }
            let published = self.result.borrow_and_update().clone();
            if let Some(result) = published {
                return Ok(self.answer_of(result?));
            }
            if self.result.changed().await.is_err() && self.result.borrow().is_none() {
                return Err(AnalysisError::Interrupted);
            }
        }
    }

    fn answer_of(&self, result: Arc<CachedAnalysis>) -> Answer {
        // Named now: an external engine's version is known once it has searched.
        Answer { result, cached: false, end: None, engine: self.engine.label() }
    }
}

impl<G: Game> Drop for Subscription<G> {
    fn drop(&mut self) {
        let mut gate = lock(&self.flight.gate);
        gate.listeners = gate.listeners.saturating_sub(1);
    }
}

/// The cacheable part of a search from `root`: each line's moves written in the game's main notation, move by
/// move from the position they are played in.
pub fn result_of<G: Game>(root: &G, done: &Done<G::Move>) -> CachedAnalysis {
    CachedAnalysis {
        depth: done.depth,
        seldepth: done.seldepth,
        nodes: done.nodes,
        time_ms: done.time_ms,
        bestmove: done.best.map(|m| root.format_move(m)),
        lines: done
            .lines
            .iter()
            .map(|l| CachedLine { moves: format_line(root, &l.pv), score: l.score.into(), depth: l.depth })
            .collect(),
    }
}

/// Whether a stored result can answer for `root`: a best move and every line's moves legal there. The store may
/// have been written by another program, another version, or a hand: what it holds is read as untrusted.
pub fn check_cached<G: Game>(root: &G, found: &CachedAnalysis) -> Result<(), String> {
    let best = found.bestmove.as_deref().ok_or("no best move for a position with moves")?;
    check_best(root, best)?;
    for (i, line) in found.lines.iter().enumerate() {
        check_line(root, &line.moves).map_err(|e| format!("line {}: {e}", i + 1))?;
    }
    Ok(())
}

/// Whether a stored best move is legal in `root`; the error quotes the start of what was stored.
pub fn check_best<G: Game>(root: &G, best: &str) -> Result<(), String> {
    let shown: String = best.chars().take(32).collect();
    root.parse_move(best).map(|_| ()).map_err(|e| format!("best move `{shown}`: {e}"))
}

/// Whether a stored line's moves can be played one after another from `root`.
pub fn check_line<G: Game>(root: &G, moves: &[String]) -> Result<(), String> {
    crate::game::play_moves(&mut root.clone(), moves).map(|_| ()).map_err(|e| e.to_string())
}

/// Whether `result` answers a search with `limits`: it is at least as deep (or used at least as much time, or
/// as many nodes, when those are the limit). An unlimited search is never answered from the cache.
pub fn satisfies(result: &CachedAnalysis, limits: &Limits) -> bool {
    if limits.infinite {
        false
    } else if let Some(d) = limits.depth {
        result.depth >= d
    } else if let Some(t) = limits.movetime {
        u128::from(result.time_ms) >= t.as_millis()
    } else if let Some(n) = limits.nodes {
        result.nodes >= n
    } else {
        false
    }
}

/// A limit of a request lowered to the server's maximum: which one, what was asked and what is used. Answers
/// and annotation jobs list them, so that a client sees what it got.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Clamped {
    /// The request member: `depth`, `movetime_ms`, `nodes`, `multipv`.
    pub field: String,
    pub requested: u64,
    pub used: u64,
}

impl Clamped {
    pub fn new(field: &str, requested: impl Into<u64>, used: impl Into<u64>) -> Self {
        Clamped { field: field.to_string(), requested: requested.into(), used: used.into() }
    }
}

#[cfg(test)]
mod tests;
