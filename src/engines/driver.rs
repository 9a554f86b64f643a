//! What every engine client gives the rest of kibitz: [`Driver`], one running engine process of some protocol
//! that searches positions of one game, and [`Launch`], how a configured engine's processes are started.
//!
//! A driver is synchronous and owned by one thread at a time (the engine pool hands it out for one search and
//! takes it back). Everything an engine sends is untrusted: a driver reads every move with kibitz's rules
//! against the position it is played in, bounds every wait, and kills its process on any failure, after which
//! [`Driver::is_dead`] is true and the pool starts a fresh one.

use std::sync::atomic::AtomicBool;

use super::EngineError;
use super::config::EngineSpec;
use super::notation::UciNotation;
use super::uci::UciEngine;
use crate::game::Game;
use crate::search::{Done, Event, Limits};

/// One running engine process that searches positions of `G`.
pub trait Driver<G: Game>: Send {
    /// The engine's own name and version, as it reports them (UCI `id name`, Hub `id name= version=`, UHP
    /// `id ...`); answers name it and the cache keys its results by it.
    fn id(&self) -> &str;

    /// The process failed and was killed: every later call fails, and the pool replaces it.
    fn is_dead(&self) -> bool;

    /// Tell the engine that the next search belongs to another game (hash tables and histories cleared).
    fn new_game(&mut self) -> Result<(), EngineError>;

    /// Search the position `root` reaches after `moves` (the history, for repetitions; empty when unknown)
    /// until a limit is reached or `stop` is set. Progress goes to `sink` as [`Event::Info`] (scores in
    /// kibitz's convention: centi-units from the side to move, mate in plies), then the answer as
    /// [`Event::Done`], which is also returned. `multipv` lines are wanted; an engine that can give only one
    /// answers [`EngineError::Unsupported`] when more are asked for.
    ///
    /// Every failure (a death, a missed deadline, an overlong line, an illegal move, garbage where the protocol
    /// allows none) kills the process and returns the error, which names the engine.
    fn search(
        &mut self,
        root: &G,
        moves: &[G::Move],
        limits: &Limits,
        multipv: u32,
        stop: &AtomicBool,
        sink: &mut dyn FnMut(Event<G::Move>),
    ) -> Result<Done<G::Move>, EngineError>;

    /// Ask the engine to quit, give it a moment, then kill it.
    fn shut_down(self: Box<Self>);
}

/// Starts one process of a configured engine for `G`: spawn, handshake, set the configured options. Each
/// protocol's client provides one ([`uci_launch`], ...); `engines::pool` calls it to fill and refill its pool.
pub type Launch<G> = fn(&EngineSpec) -> Result<Box<dyn Driver<G>>, EngineError>;

impl<G: UciNotation> Driver<G> for UciEngine {
    fn id(&self) -> &str {
        self.name()
    }

    fn is_dead(&self) -> bool {
        UciEngine::is_dead(self)
    }

    fn new_game(&mut self) -> Result<(), EngineError> {
        UciEngine::new_game(self)
    }

    fn search(
        &mut self,
        root: &G,
        moves: &[G::Move],
        limits: &Limits,
        multipv: u32,
        stop: &AtomicBool,
        sink: &mut dyn FnMut(Event<G::Move>),
    ) -> Result<Done<G::Move>, EngineError> {
        UciEngine::search(self, root, moves, limits, multipv, stop, sink)
    }

    fn shut_down(self: Box<Self>) {
        self.quit();
    }
}

/// Start a UCI engine for `G` and set the options of its configuration (each checked against the engine's
/// own declaration: a misspelt option is an error naming it, never silently ignored).
pub fn uci_launch<G: UciNotation>(spec: &EngineSpec) -> Result<Box<dyn Driver<G>>, EngineError> {
    let mut engine = UciEngine::start(&spec.command(), spec.timeouts)?;
    for (name, value) in &spec.options {
        engine.set_option(name, value)?;
    }
    engine.is_ready()?;
    Ok(Box::new(engine))
}
