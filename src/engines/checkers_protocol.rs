//! A Checkers Protocol client for English checkers engines: `READY`, `INIT`, `GETPARAMETERS`, then searches as
//! `NEWGAME <fen> <moves>` + `GO dontplaymove`, whose `INFO` lines and `BESTMOVE` become kibitz's
//! [`Info`] and [`Done`], every move read with kibitz's own checkers rules. A search that continues the game
//! on the engine's board (the same `NEWGAME` position, the moves played so far and more) sends only the new
//! moves as `MOVE`s, as a GUI does: the engine keeps its tables through a game.
//!
//! The protocol leaves some things open; this client reads them as kibitz's own engine writes them
//! (`kibitz-checkers`, [`crate::protocols::checkers`]):
//!
//! * The engine names nothing: its id is its program's file name.
//! * Limits are parameters, not arguments of `GO`: when the engine declares `depth` and/or `time` parameters
//!   (`depth` in plies, `time` in seconds, 0 = no limit), a depth limit is set as `depth`, a move time as
//!   `time` (the other set to 0), an infinite search as both 0; no limit searches
//!   [`Checkers::DEFAULT_DEPTH`](crate::game::Game::DEFAULT_DEPTH) plies. A node limit is set as the `nodes`
//!   parameter when the engine declares it as an int (kibitz's own engine does; 0 = no limit, and 0 again for a
//!   search without one), `depth` and `time` then 0 unless a depth or time is given too; an engine without
//!   `nodes` searches a node limit to the default depth. Whatever the engine declares, `STOP`
//!   is sent when the stop flag is set or the move time has passed, and the engine has [`Timeouts::grace`] to
//!   answer `BESTMOVE` before it is killed.
//! * `INFO nodes N eval E time T depth D pv ...`: `eval` in centi-men from the side to move's view, a forced
//!   win in n plies as `10000 - n` (and a loss as its negative): a value beyond ±9000 is read as a mate
//!   distance; `time` in milliseconds.
//! * An `ALERT` while a search is being set up or runs means the engine refused part of it (the position, a
//!   move, a parameter): it cannot be trusted to search the right position, so the process is killed and the
//!   search fails with [`EngineError::Protocol`] naming the alert.
//! * Before each search, `GETPARAMETERS` and its `PARAMETERS` answer: lines of an earlier search still coming (a
//!   late `INFO`, a second `BESTMOVE`) are read and dropped there (the protocol has no `isready`).
//! * One line only: more is [`EngineError::Unsupported`].
//! * Options from the engines file are `SETPARAMETER`s, checked against `GETPARAMETERS` (name and type), each
//!   confirmed with `GETPARAMETER` (an `ALERT` before the answer is [`EngineError::BadOptionValue`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::config::EngineSpec;
use super::driver::Driver;
use super::process::{EngineCommand, Process, Received};
use super::{EngineError, Timeouts};
use crate::game::{Game, NotationError};
use crate::games::checkers::{Checkers, Move};
use crate::search::{Done, Event, Info, Limits, Line, Score, ScoreBound};

/// How often a waiting search looks at its stop flag.
const POLL: Duration = Duration::from_millis(10);

/// Moves of a reported line kept (the rest is dropped).
const MAX_PV: usize = 256;

/// The value of a forced win: a win in n plies is reported as `MATE - n`.
const MATE: i64 = 10_000;

/// Reported values beyond this are mate distances.
const MATE_BOUND: i64 = 9_000;

/// The most parameters kept from `PARAMETERS`.
const MAX_PARAMETERS: usize = 256;

/// A running Checkers Protocol engine. One search at a time; killed when dropped.
pub struct CheckersEngine {
    process: Process,
    name: String,
    /// Declared parameters: (name, type).
    parameters: Vec<(String, String)>,
    /// The values this client last set, by lower-case name.
    values: Vec<(String, String)>,
    /// The engine's own board, as this client set it up: a `NEWGAME` position's FEN and the moves played since.
    board: Option<(String, Vec<Move>)>,
    timeouts: Timeouts,
}

/// The first word of a line, upper-cased (the protocol's words are upper case; read case-insensitively).
fn word(line: &str) -> String {
    line.split_whitespace().next().unwrap_or("").to_ascii_uppercase()
}

impl CheckersEngine {
    /// Start the engine: wait for `READY`, send `INIT`, and read its parameters (`GETPARAMETERS`; an engine that
    /// answers `ALERT` has none).
    pub fn start(command: &EngineCommand, timeouts: Timeouts) -> Result<CheckersEngine, EngineError> {
        let process = Process::spawn(command)?;
        let name = command.program.file_name().map_or_else(|| process.label.clone(), |n| n.to_string_lossy().into());
        let mut engine =
            CheckersEngine { process, name, parameters: Vec::new(), values: Vec::new(), board: None, timeouts };
        engine.process.label = engine.name.clone();
        let deadline = Instant::now() + timeouts.handshake;
        engine.wait_for(deadline, "READY", "READY")?;
        engine.process.send("INIT")?;
        engine.process.send("GETPARAMETERS")?;
        loop {
            let line = engine.next_line(deadline, "PARAMETERS")?;
            match word(&line).as_str() {
                "PARAMETERS" => {
                    let tokens: Vec<&str> = line.split_whitespace().skip(1).collect();
                    engine.parameters = tokens
                        .chunks(2)
                        .filter(|c| c.len() == 2)
                        .take(MAX_PARAMETERS)
                        .map(|c| (c[0].to_string(), c[1].to_ascii_lowercase()))
                        .collect();
                    return Ok(engine);
                }
                "ALERT" => return Ok(engine),
                _ => {}
            }
        }
    }

    /// The engine's program file name (the protocol has no name command).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The declared parameters: (name, type).
    pub fn parameters(&self) -> &[(String, String)] {
        &self.parameters
    }

    pub fn is_dead(&self) -> bool {
        self.process.is_dead()
    }

    fn declared(&self, name: &str) -> Option<(String, String)> {
        self.parameters.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).cloned()
    }

    /// The next line before `deadline`; a missed deadline kills the engine.
    fn next_line(&mut self, deadline: Instant, during: &'static str) -> Result<String, EngineError> {
        match self.process.receive(deadline, during)? {
            Received::Line(line) => Ok(line),
            Received::Timeout => {
                let after = self.timeouts.handshake.max(self.timeouts.ready);
                let error = EngineError::Timeout { engine: self.name.clone(), during, after };
                Err(self.process.fail(error))
            }
        }
    }

    fn wait_for(&mut self, deadline: Instant, first_word: &str, during: &'static str) -> Result<String, EngineError> {
        loop {
            let line = self.next_line(deadline, during)?;
            if word(&line) == first_word {
                return Ok(line);
            }
        }
    }

    /// `SETPARAMETER name value` for a declared parameter, its value checked against the declared type, then
    /// `GETPARAMETER name` to learn whether the engine took it (an `ALERT` first means it did not).
    pub fn set_parameter(&mut self, name: &str, value: &str) -> Result<(), EngineError> {
        let Some((name, kind)) = self.declared(name) else {
            return Err(EngineError::UnknownOption { engine: self.name.clone(), name: name.to_string() });
        };
        let value = value.trim();
        let engine = self.name.clone();
        let bad = |reason: String| EngineError::BadOptionValue {
            engine: engine.clone(),
            name: name.clone(),
            value: value.chars().take(100).collect(),
            reason,
        };
        let fits = match kind.as_str() {
            "int" => value.parse::<i32>().is_ok(),
            "float" => value.parse::<f32>().is_ok_and(f32::is_finite),
            "bool" => value == "true" || value == "false",
            _ => value.len() <= 64 && value.is_ascii(),
        };
        if !fits || value.is_empty() || value.contains(char::is_whitespace) {
            return Err(bad(format!("not a {kind} value (one word)")));
        }
        self.process.send(&format!("SETPARAMETER {name} {value}"))?;
        self.process.send(&format!("GETPARAMETER {name}"))?;
        let deadline = Instant::now() + self.timeouts.ready;
        let mut alert = None;
        loop {
            let line = self.next_line(deadline, "PARAMETER")?;
            match word(&line).as_str() {
                "PARAMETER" => break,
                "ALERT" => alert = Some(line),
                _ => {}
            }
        }
        let key = name.to_ascii_lowercase();
        self.values.retain(|(n, _)| *n != key);
        if let Some(alert) = alert {
            return Err(bad(alert.chars().take(200).collect()));
        }
        self.values.push((key, value.to_string()));
        Ok(())
    }

    /// Set a limit parameter the engine declares, unless it already has this value.
    fn ensure(&mut self, name: &str, value: &str) -> Result<(), EngineError> {
        let Some((declared, _)) = self.declared(name) else { return Ok(()) };
        let key = declared.to_ascii_lowercase();
        if self.values.iter().any(|(n, v)| *n == key && v == value) {
            return Ok(());
        }
        self.set_parameter(&declared, value).map_err(|e| match e {
            EngineError::BadOptionValue { engine, name, value, reason } => {
                EngineError::Unsupported { engine, what: format!("refused {name} = {value}: {reason}") }
            }
            other => other,
        })
    }

    /// Search the position `root` reaches after `moves` (given to the engine as `NEWGAME <fen> <moves>`). See
    /// the module documentation for limits, scores and stopping.
    pub fn search(
        &mut self,
        root: &Checkers,
        moves: &[Move],
        limits: &Limits,
        multipv: u32,
        stop: &AtomicBool,
        sink: &mut dyn FnMut(Event<Move>),
    ) -> Result<Done<Move>, EngineError> {
        let started = Instant::now();
        if self.is_dead() {
            return Err(EngineError::Dead { engine: self.name.clone() });
        }
        if multipv > 1 {
            let what = "gives one line, not several (the Checkers Protocol has no MultiPV)".to_string();
            return Err(EngineError::Unsupported { engine: self.name.clone(), what });
        }
        let (position, command) = position_command(root, moves)
            .map_err(|source| EngineError::Request { engine: self.name.clone(), source })?;
        let legal = position.legal_moves();
        if legal.is_empty() {
            let done = Done {
                best: None,
                ponder: None,
                lines: Vec::new(),
                depth: 0,
                seldepth: 0,
                nodes: 0,
                nps: 0,
                time_ms: started.elapsed().as_millis() as u64,
                neval: 0,
                game_end: Some(position.rule_end(0).unwrap_or_else(|| position.no_move_end())),
            };
            sink(Event::Done(done.clone()));
            return Ok(done);
        }
        // The engine answers in order: what it still had to say of an earlier search (a late `INFO`, or a second
        // `BESTMOVE` where a `STOP` crossed its answer) comes before this answer and is dropped, so it never counts
        // as this search's. The protocol has no `isready`; `GETPARAMETERS` is always answered.
        self.process.send("GETPARAMETERS")?;
        self.wait_for(Instant::now() + self.timeouts.ready, "PARAMETERS", "PARAMETERS")?;
        let takes_nodes = self.declared("nodes").is_some_and(|(_, kind)| kind.eq_ignore_ascii_case("int"));
        let (depth, time, nodes) = limit_values(limits, takes_nodes);
        self.ensure("depth", &depth.to_string())?;
        self.ensure("time", time)?;
        if takes_nodes {
            self.ensure("nodes", &nodes.to_string())?;
        }
        // A game the engine's board already holds the beginning of goes on with `MOVE`s, so that the engine keeps
        // what it learnt (`NEWGAME` clears its tables, as a new game should).
        let fen = root.to_fen();
        match &self.board {
            Some((on_board, played)) if *on_board == fen && moves.starts_with(played) => {
                let rest = moves[played.len()..].to_vec();
                for m in rest {
                    self.process.send(&format!("MOVE {}", Checkers::move_to_x(m)))?;
                }
            }
            _ => self.process.send(&command)?,
        }
        self.board = Some((fen, moves.to_vec()));
        self.process.send("GO dontplaymove")?;

        let sent = Instant::now();
        let mut stop_at = search_deadline(limits, &self.timeouts).map(|d| sent + d);
        let mut hung_at: Option<Instant> = None;
        let mut last: Option<Info<Move>> = None;
        let mut stats = (0u64, 0u64);
        let best_line = loop {
            let now = Instant::now();
            if hung_at.is_none() && (stop.load(Ordering::Relaxed) || stop_at.is_some_and(|t| now >= t)) {
                self.process.send("STOP")?;
                hung_at = Some(now + self.timeouts.grace);
                stop_at = None;
            }
            if let Some(hung) = hung_at.filter(|&t| now >= t) {
                let after = hung.saturating_duration_since(sent);
                let error = EngineError::Timeout { engine: self.name.clone(), during: "BESTMOVE", after };
                return Err(self.process.fail(error));
            }
            let wake = [Some(now + POLL), stop_at, hung_at].into_iter().flatten().min().unwrap_or(now + POLL);
            let line = match self.process.receive(wake, "searching")? {
                Received::Timeout => continue,
                Received::Line(line) => line,
            };
            match word(&line).as_str() {
                "INFO" => {
                    let (info, scored) = parse_info(&position, &line);
                    stats = (info.nodes, info.time_ms);
                    if !scored {
                        // `eval` is optional: nothing to show or keep without it (the counts are kept).
                        continue;
                    }
                    if !info.pv.is_empty() && last.as_ref().is_none_or(|l| info.depth >= l.depth) {
                        last = Some(info.clone());
                    }
                    sink(Event::Info(info));
                }
                "BESTMOVE" => break line,
                "ALERT" => {
                    let error = EngineError::Protocol {
                        engine: self.name.clone(),
                        message: format!("refused the search: {}", line.chars().take(200).collect::<String>()),
                    };
                    return Err(self.process.fail(error));
                }
                _ => {}
            }
        };
        let token = best_line.split_whitespace().nth(1).unwrap_or("");
        let best = position.parse_move_text(token).map_err(|e| {
            let error = EngineError::IllegalMove {
                engine: self.name.clone(),
                token: token.chars().take(40).collect(),
                position: position.to_fen(),
                message: e.message,
            };
            self.process.fail(error)
        })?;
        let lines: Vec<Line<Move>> = last
            .iter()
            .filter(|info| info.pv.first() == Some(&best))
            .map(|info| Line { pv: info.pv.clone(), score: info.score, depth: info.depth, seldepth: info.seldepth })
            .collect();
        let depth = lines.first().map_or(0, |l| l.depth);
        let elapsed = started.elapsed().as_millis() as u64;
        let (nodes, time_ms) = (stats.0, if stats.1 > 0 { stats.1 } else { elapsed });
        let ponder = lines.first().and_then(|l| l.pv.get(1).copied());
        let done = Done {
            best: Some(best),
            ponder,
            lines,
            depth,
            seldepth: depth,
            nodes,
            nps: nodes.saturating_mul(1000).checked_div(time_ms).unwrap_or(0),
            time_ms,
            neval: 0,
            game_end: position.rule_end(0),
        };
        sink(Event::Done(done.clone()));
        Ok(done)
    }

    /// `NEWGAME` (the next search belongs to another game: engines clear their tables on it).
    pub fn new_game(&mut self) -> Result<(), EngineError> {
        self.board = None;
        self.process.send("NEWGAME")?;
        self.board = Some((Checkers::start().to_fen(), Vec::new()));
        Ok(())
    }

    /// Ask the engine to quit, give it a moment, then kill it.
    pub fn quit(mut self) {
        self.process.shut_down("QUIT", Duration::from_millis(500));
    }
}

/// The searched position and the `NEWGAME` command that sets it up (the root's FEN and the moves from it).
fn position_command(root: &Checkers, moves: &[Move]) -> Result<(Checkers, String), NotationError> {
    let mut position = root.clone();
    let mut command = format!("NEWGAME {}", root.to_fen());
    for (i, &m) in moves.iter().enumerate() {
        if !position.legal_moves().contains(&m) {
            return Err(NotationError::new(format!("{m:?}"), format!("move {} is not legal", i + 1)));
        }
        command.push(' ');
        command.push_str(&Checkers::move_to_x(m));
        position.make(m);
    }
    Ok((position, command))
}

/// The `depth`, `time` and `nodes` parameters for the limits; `takes_nodes`: the engine declares `nodes`.
fn limit_values(limits: &Limits, takes_nodes: bool) -> (u32, &'static str, u64) {
    if limits.infinite {
        return (0, "0", 0);
    }
    let nodes = if takes_nodes { limits.nodes.unwrap_or(0) } else { 0 };
    if let Some(depth) = limits.depth {
        return (depth.max(1), "0", nodes);
    }
    let clock = limits.clock.map(|c| (c.remaining / 20 + c.increment).min(c.remaining));
    match [limits.movetime, clock].into_iter().flatten().min() {
        // The engine is stopped when the time is up; its own time parameter is left without a limit.
        Some(_) => (0, "0", nodes),
        None if nodes > 0 => (0, "0", nodes),
        None => (Checkers::DEFAULT_DEPTH, "0", 0),
    }
}

/// When to send `STOP` ourselves: at the move time, [`Timeouts::search`] for a depth, never for an infinite
/// search (the caller stops it).
fn search_deadline(limits: &Limits, timeouts: &Timeouts) -> Option<Duration> {
    if limits.infinite {
        return None;
    }
    let clock = limits.clock.map(|c| (c.remaining / 20 + c.increment).min(c.remaining));
    Some(match [limits.movetime, clock].into_iter().flatten().min() {
        Some(t) if limits.depth.is_none() => t,
        Some(t) => (t + timeouts.grace).min(timeouts.search),
        None => timeouts.search,
    })
}

/// A reported `eval` in kibitz's terms.
pub fn eval_score(eval: i64) -> Score {
    if eval > MATE_BOUND {
        Score::Mate((MATE - eval).clamp(1, 1000) as i32)
    } else if eval < -MATE_BOUND {
        Score::Mate(-((MATE + eval).clamp(1, 1000) as i32))
    } else {
        Score::Cp(eval as i32)
    }
}

/// An `INFO` line, its moves read against `position` (the pv stops at its first move that is not legal where
/// it stands), and whether it carries an evaluation (without one, its score is a placeholder no answer may use).
fn parse_info(position: &Checkers, line: &str) -> (Info<Move>, bool) {
    let mut info = Info {
        depth: 0,
        seldepth: 0,
        multipv: 1,
        score: Score::Cp(0),
        bound: ScoreBound::Exact,
        nodes: 0,
        nps: 0,
        time_ms: 0,
        pv: Vec::new(),
        currmove: None,
        currmovenumber: None,
        neval: 0,
        hashfull: 0,
    };
    let mut scored = false;
    let mut words = line.split_whitespace().skip(1);
    while let Some(key) = words.next() {
        match key.to_ascii_lowercase().as_str() {
            "nodes" => info.nodes = words.next().and_then(|w| w.parse().ok()).unwrap_or(0),
            "eval" => {
                let eval = words.next().and_then(|w| w.parse::<f64>().ok()).filter(|e| e.is_finite());
                scored = eval.is_some();
                info.score = eval_score(eval.unwrap_or(0.0).round().clamp(-1e6, 1e6) as i64);
            }
            "time" => info.time_ms = words.next().and_then(|w| w.parse().ok()).unwrap_or(0),
            "depth" => info.depth = words.next().and_then(|w| w.parse().ok()).unwrap_or(0),
            "pv" => {
                let mut walk = position.clone();
                for text in words.by_ref().take(MAX_PV) {
                    match walk.parse_move_text(text) {
                        Ok(m) => {
                            info.pv.push(m);
                            walk.make(m);
                        }
                        Err(_) => break,
                    }
                }
                break;
            }
            _ => {}
        }
    }
    info.seldepth = info.depth;
    info.nps = info.nodes.saturating_mul(1000).checked_div(info.time_ms).unwrap_or(0);
    (info, scored)
}

impl Driver<Checkers> for CheckersEngine {
    fn id(&self) -> &str {
        &self.name
    }

    fn is_dead(&self) -> bool {
        CheckersEngine::is_dead(self)
    }

    fn new_game(&mut self) -> Result<(), EngineError> {
        CheckersEngine::new_game(self)
    }

    fn search(
        &mut self,
        root: &Checkers,
        moves: &[Move],
        limits: &Limits,
        multipv: u32,
        stop: &AtomicBool,
        sink: &mut dyn FnMut(Event<Move>),
    ) -> Result<Done<Move>, EngineError> {
        CheckersEngine::search(self, root, moves, limits, multipv, stop, sink)
    }

    fn shut_down(self: Box<Self>) {
        self.quit();
    }
}

/// Start a Checkers Protocol engine and set the parameters of its configuration.
pub fn checkers_launch(spec: &EngineSpec) -> Result<Box<dyn Driver<Checkers>>, EngineError> {
    let mut engine = CheckersEngine::start(&spec.command(), spec.timeouts)?;
    for (name, value) in &spec.options {
        engine.set_parameter(name, value)?;
    }
    Ok(Box::new(engine))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evals_become_scores() {
        assert_eq!(eval_score(35), Score::Cp(35));
        assert_eq!(eval_score(-9000), Score::Cp(-9000));
        assert_eq!(eval_score(9995), Score::Mate(5));
        assert_eq!(eval_score(-9994), Score::Mate(-6));
    }

    #[test]
    fn info_lines_are_read_with_the_rules() {
        let start = Checkers::start();
        let (info, scored) = parse_info(&start, "INFO nodes 345 eval 12 time 17 depth 3 pv 9x13 22x18 13x22");
        assert!(scored);
        assert_eq!((info.nodes, info.time_ms, info.depth, info.score), (345, 17, 3, Score::Cp(12)));
        // 13x22 is no move there: the line stops before it.
        assert_eq!(info.pv.len(), 2);
        assert_eq!(info.nps, 345 * 1000 / 17);
        // `eval` is optional: without it (or with one that is no number) the line is no evaluation.
        for line in ["INFO time 120 depth 9 pv 9x13", "INFO eval junk depth 9 pv 9x13"] {
            let (info, scored) = parse_info(&start, line);
            assert!(!scored, "{line}");
            assert_eq!((info.depth, info.pv.len()), (9, 1));
        }
    }

    #[test]
    fn limits_become_parameters() {
        for takes_nodes in [false, true] {
            assert_eq!(limit_values(&Limits::depth(7), takes_nodes), (7, "0", 0));
            assert_eq!(limit_values(&Limits::infinite(), takes_nodes), (0, "0", 0));
            assert_eq!(limit_values(&Limits::movetime(Duration::from_millis(300)), takes_nodes), (0, "0", 0));
        }
        // A node limit: the default depth for an engine without `nodes`, the nodes alone for one with it.
        assert_eq!(limit_values(&Limits::nodes(5), false), (Checkers::DEFAULT_DEPTH, "0", 0));
        assert_eq!(limit_values(&Limits::nodes(5), true), (0, "0", 5));
        let both = Limits { depth: Some(9), nodes: Some(5), ..Limits::default() };
        assert_eq!(limit_values(&both, true), (9, "0", 5));
    }
}
