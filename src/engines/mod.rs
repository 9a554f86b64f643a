//! External engines: clients for engine processes of each protocol ([`UciEngine`] for Stockfish and
//! Fairy-Stockfish, [`UhpEngine`] for Hive, [`HubEngine`] for international draughts, [`CheckersEngine`] for
//! English checkers), all behind one interface ([`Driver`]); the engines file ([`config`]); and the pools
//! of processes the analysis path searches with ([`Engines`]).
//!
//! An engine's output is untrusted: lines are bounded ([`process::MAX_LINE`]), every wait has a deadline
//! ([`Timeouts`]), every move it sends is read with kibitz's own rules against the position it is played in,
//! and a process that fails is killed, the error naming the engine, and replaced.

pub mod checkers_protocol;
pub mod config;
pub mod driver;
pub mod hub;
pub mod notation;
pub mod pool;
pub mod process;
pub mod uci;
pub mod uhp;

use std::time::Duration;

use crate::game::NotationError;

pub use checkers_protocol::{CheckersEngine, checkers_launch};
pub use config::{EngineSpec, Protocol};
pub use driver::{Driver, Launch};
pub use hub::{HubEngine, HubParam, hub_launch};
pub use notation::{UciNotation, UciSetting};
pub use pool::{EnginePool, EngineStats, Engines, ExternalEngine, ExternalSearch};
pub use process::{EngineCommand, MAX_LINE};
pub use uci::{UciEngine, UciOption};
pub use uhp::{UhpEngine, UhpOption, uhp_launch};

/// How long to wait for an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// From start to the end of the handshake (`uciok`).
    pub handshake: Duration,
    /// From `isready` to `readyok` (setting a large hash table can take a while).
    pub ready: Duration,
    /// Added to a search's own time limit, and given after `stop`, before the engine counts as hung.
    pub grace: Duration,
    /// The longest a search limited only by depth or nodes may run before it is stopped.
    pub search: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            handshake: Duration::from_secs(10),
            ready: Duration::from_secs(30),
            grace: Duration::from_secs(5),
            search: Duration::from_secs(600),
        }
    }
}

/// Why an engine gave no answer. Every variant names the engine (its program until it said its name).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("engine `{engine}` could not be started: {source}")]
    Spawn {
        engine: String,
        #[source]
        source: std::io::Error,
    },
    /// The process ended (or closed its pipes).
    #[error("engine `{engine}` died while {during}")]
    Died { engine: String, during: &'static str },
    /// A deadline passed; the process was killed.
    #[error("engine `{engine}` did not answer within {after:?} while waiting for {during}")]
    Timeout { engine: String, during: &'static str, after: Duration },
    /// A line longer than the limit; the process was killed.
    #[error("engine `{engine}` wrote a line longer than {limit} bytes")]
    LineTooLong { engine: String, limit: usize },
    /// The engine answered with a move that is not legal (or not readable) where it was played.
    #[error("engine `{engine}` answered an illegal move `{token}` in {position}: {message}")]
    IllegalMove { engine: String, token: String, position: String, message: String },
    /// Something else the protocol does not allow.
    #[error("engine `{engine}`: {message}")]
    Protocol { engine: String, message: String },
    /// An option the engine does not declare.
    #[error("engine `{engine}` has no option `{name}`")]
    UnknownOption { engine: String, name: String },
    /// A value the engine's declaration of the option does not allow.
    #[error("engine `{engine}`: option `{name}` cannot be `{value}`: {reason}")]
    BadOptionValue { engine: String, name: String, value: String, reason: String },
    /// The engine cannot do what was asked (a game it does not play, several lines).
    #[error("engine `{engine}` {what}")]
    Unsupported { engine: String, what: String },
    /// The request itself could not be written for the engine (a move not legal in its position).
    #[error("engine `{engine}`: {source}")]
    Request {
        engine: String,
        #[source]
        source: NotationError,
    },
    /// Every process of the engine is busy and too many searches wait for one.
    #[error("engine `{engine}`: all {processes} processes are busy")]
    Busy { engine: String, processes: usize },
    /// The search was cancelled before it started.
    #[error("engine `{engine}`: the search was cancelled")]
    Cancelled { engine: String },
    /// The engine failed earlier and was killed.
    #[error("engine `{engine}` failed earlier and was stopped")]
    Dead { engine: String },
}

/// When a client sends `stop` itself, for protocols whose engine stops by itself at its time limit: that limit
/// (the move time, or the whole remaining clock) plus [`Timeouts::grace`], or [`Timeouts::search`] for searches
/// limited by depth or nodes only; `None` for an infinite search (the caller stops it).
pub(crate) fn search_deadline(limits: &crate::search::Limits, timeouts: &Timeouts) -> Option<Duration> {
    if limits.infinite {
        return None;
    }
    let own = [limits.movetime, limits.clock.map(|c| c.remaining)].into_iter().flatten().min();
    Some(match own {
        Some(t) => (t + timeouts.grace).min(timeouts.search.max(t)),
        None => timeouts.search,
    })
}
