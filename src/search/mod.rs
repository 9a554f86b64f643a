//! The one search engine, generic over [`Game`]: iterative deepening with aspiration windows, principal
//! variation search, a shared lock-free transposition table, killer and history ordering, late-move
//! reductions, quiescence over noisy moves, mate scores as distance to the end, MultiPV, and Lazy SMP
//! (several threads on one search over the shared table).
//!
//! [`search`] runs on the calling thread (plus `threads - 1` helpers it starts itself), streams [`Event`]s to a
//! sink, and returns the final [`Done`]. A stop flag is polled every few hundred nodes, so a stop is answered
//! within milliseconds, and the result always holds a legal move when the position has one.
//!
//! The files, by job:
//! - `threads.rs`: the entry point ([`search`] calls it): the shared state, the initial order of the root
//!   moves, the Lazy SMP helper threads next to the main one, and the final [`Done`];
//! - `root.rs`: iterative deepening, aspiration windows and MultiPV at the root, and the progress reports;
//! - `node.rs`: the alpha-beta node search with its pruning, extensions and reductions;
//! - `quiescence.rs`: the quiescence search over noisy moves at the horizon;
//! - `searcher.rs`: the per-thread state they all work on (move lists, killers, history, lines), node
//!   counting and the stop polls, move ordering, and the mate-score conventions;
//! - `params.rs`: every tuning number of the above, named and documented, and [`SearchTuning`], the ones
//!   self-play tuning moves (a game's own, or a search's from [`SearchOptions::tuning`]);
//! - `time.rs`: the time budget of a clock or a move time; `tt.rs`: the transposition table.

mod node;
mod params;
mod quiescence;
mod root;
mod searcher;
mod threads;
mod time;
pub mod tt;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use crate::game::Score;
use crate::game::{Game, GameEnd};
pub use params::SearchTuning;
pub use time::answer_within;
pub use tt::TranspositionTable;

/// The largest MultiPV count a search accepts.
pub const MAX_MULTIPV: usize = 64;

/// A chess-style clock for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// Time left on the clock.
    pub remaining: Duration,
    /// Time added after each move.
    pub increment: Duration,
    /// Moves to play before the next time control, when the control has one.
    pub moves_to_go: Option<u32>,
}

/// When to stop. Every limit that is set applies; none set (and not infinite) means "until depth
/// [`Limits::DEFAULT_DEPTH`]".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub movetime: Option<Duration>,
    pub clock: Option<Clock>,
    /// Search until stopped (depth, nodes and time limits are ignored).
    pub infinite: bool,
}

impl Limits {
    /// The depth searched when no limit at all is given.
    pub const DEFAULT_DEPTH: u32 = 12;

    pub fn depth(depth: u32) -> Self {
        Limits { depth: Some(depth), ..Limits::default() }
    }

    pub fn movetime(time: Duration) -> Self {
        Limits { movetime: Some(time), ..Limits::default() }
    }

    pub fn nodes(nodes: u64) -> Self {
        Limits { nodes: Some(nodes), ..Limits::default() }
    }

    pub fn infinite() -> Self {
        Limits { infinite: true, ..Limits::default() }
    }

    /// The longest a search with these limits may think, counted from its start (`None`: no time limit): what
    /// a front end may need to know to deliver the move in time.
    pub fn time_limit(&self) -> Option<Duration> {
        time::TimeBudget::new(self, std::time::Instant::now()).hard
    }

    fn is_unlimited(&self) -> bool {
        self.depth.is_none() && self.nodes.is_none() && self.movetime.is_none() && self.clock.is_none()
    }
}

/// How to search, besides when to stop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// Number of best lines to report (1 = normal play).
    pub multipv: usize,
    /// Threads on this one search (Lazy SMP over the shared table).
    pub threads: usize,
    /// Emit `currmove` progress after this long (0 = never).
    pub currmove_after: Duration,
    /// Root moves not to consider, by [`Game::move_key`] (a GUI's banned moves). Ignored when it would leave
    /// no move at all.
    pub excluded: Vec<u32>,
    /// The search's pruning, reduction and extension numbers instead of the game's own
    /// ([`crate::game::Game::SEARCH_TUNING`]): self-play tuning's trial values (`tune spsa`).
    pub tuning: Option<SearchTuning>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            multipv: 1,
            threads: 1,
            currmove_after: Duration::from_secs(1),
            excluded: Vec::new(),
            tuning: None,
        }
    }
}

/// Whether a reported score is exact or only a bound (an aspiration window failed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScoreBound {
    Exact,
    Lower,
    Upper,
}

/// A progress report, as ARCHITECTURE.md describes it. A report about the move being searched has an empty
/// `pv` and `currmove` set; a report about a line has its `pv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Info<M> {
    pub depth: u32,
    pub seldepth: u32,
    /// 1-based line number.
    pub multipv: u32,
    pub score: Score,
    pub bound: ScoreBound,
    pub nodes: u64,
    pub nps: u64,
    pub time_ms: u64,
    pub pv: Vec<M>,
    pub currmove: Option<M>,
    pub currmovenumber: Option<u32>,
    /// Static evaluations made.
    pub neval: u64,
    /// Per mille of the transposition table used by this search.
    pub hashfull: u32,
}

/// One line of the final answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Line<M> {
    pub pv: Vec<M>,
    pub score: Score,
    pub depth: u32,
    pub seldepth: u32,
}

/// The final answer of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct Done<M> {
    /// The move to play; `None` only when the game is over in the searched position.
    pub best: Option<M>,
    /// The expected reply, when known.
    pub ponder: Option<M>,
    /// The best lines, best first (at most `multipv`).
    pub lines: Vec<Line<M>>,
    /// Deepest iteration completed.
    pub depth: u32,
    pub seldepth: u32,
    pub nodes: u64,
    pub nps: u64,
    pub time_ms: u64,
    pub neval: u64,
    /// Set when the searched position is already over.
    pub game_end: Option<GameEnd>,
}

/// A search event, streamed to the caller's sink.
#[derive(Clone, Debug, PartialEq)]
pub enum Event<M> {
    Info(Info<M>),
    Done(Done<M>),
}

/// Search `game` until a limit is reached or `stop` is set, sending progress to `sink` (which also receives
/// the final [`Event::Done`]) and returning the final answer.
pub fn search<G: Game>(
    game: &G,
    limits: &Limits,
    options: &SearchOptions,
    tt: &Arc<TranspositionTable>,
    stop: &Arc<AtomicBool>,
    sink: &mut dyn FnMut(Event<G::Move>),
) -> Done<G::Move> {
    let done = threads::run(game, limits, options, tt, stop, sink);
    sink(Event::Done(done.clone()));
    done
}

/// Convert an internal score to the reported form.
pub(crate) fn to_score(value: i32) -> Score {
    if value >= searcher::MATE_BOUND {
        Score::Mate(searcher::MATE - value)
    } else if value <= -searcher::MATE_BOUND {
        Score::Mate(-(searcher::MATE + value))
    } else {
        Score::Cp(value)
    }
}

#[cfg(test)]
pub(crate) mod testgames;
#[cfg(test)]
mod tests;
