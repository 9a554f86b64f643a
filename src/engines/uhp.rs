//! A Universal Hive Protocol client: the engine's greeting and `info` (its `id` and capabilities), `options`,
//! and searches as `newgame <GameString>` + `bestmove depth N` / `bestmove time hh:mm:ss`, every MoveString the
//! engine answers read with kibitz's own Hive rules. A search that continues the engine's game (the same
//! root, the moves played so far and more) sends only the new moves as `play`s, as a GUI does, so the engine
//! keeps its tables through a game.
//!
//! UHP has neither progress lines nor a stop command, so a search reports no [`Info`](crate::search::Info) and
//! answers with the best move alone (no scored line):
//!
//! * Limits: a depth is `bestmove depth N`; a move time is `bestmove time hh:mm:ss` (a fraction of a second is
//!   written as `00:00:01.500` when the time is not whole: Mzinga and kibitz read it, but the specification
//!   says `hh:mm:ss`, and an engine that answers such a time with an error, as nokamute does, is asked again
//!   at once with the time rounded up to whole seconds, and gets whole seconds from then on); a clock gives a
//!   twentieth of the remaining time plus the increment; no limit searches
//!   [`Hive::DEFAULT_DEPTH`](crate::game::Game::DEFAULT_DEPTH) plies; an infinite search thinks for
//!   [`Timeouts::search`].
//! * Node limits: UHP has none, but an engine that lists an int option [`MAX_NODES_OPTION`] (kibitz's own
//!   `kibitz-uhp` does) has it set to the search's node limit, and to 0 again for a search without one; a
//!   node limit alone is then `bestmove depth` [`NODE_LIMITED_DEPTH`]. Any other engine searches a node
//!   limit to the default depth, as if no limit were given.
//! * Stopping: when the stop flag is set (or the limit plus [`Timeouts::grace`] has passed), the engine has the
//!   grace period to answer; then it is killed and the search fails with [`EngineError::Timeout`]. A stopped
//!   UHP search therefore usually costs the process (the pool starts a fresh one).
//! * More than one line is [`EngineError::Unsupported`]; so is a game type whose expansion pieces the engine
//!   does not list among its capabilities.
//! * Options from the engines file are set with `options set Name Value`, each checked against the engine's
//!   `options` list (unknown name: [`EngineError::UnknownOption`]; refused value: [`EngineError::BadOptionValue`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::config::EngineSpec;
use super::driver::Driver;
use super::process::{EngineCommand, Process, Received};
use super::{EngineError, Timeouts};
use crate::game::{Game, NotationError};
use crate::games::hive::{Hive, Move};
use crate::search::{Done, Event, Limits};

/// How often a waiting search looks at its stop flag.
const POLL: Duration = Duration::from_millis(10);

/// The most lines one command's answer may have before `ok` (an `options` list is a few dozen).
const MAX_BLOCK: usize = 4096;

/// The int option through which an engine takes a node limit (0: none): kibitz's own convention.
pub const MAX_NODES_OPTION: &str = "MaxNodes";

/// The depth asked for with a node limit alone (the engine stops at the nodes long before).
pub const NODE_LIMITED_DEPTH: u32 = 64;

/// An option as the engine lists it (`Key;type;value;default;min;max`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UhpOption {
    pub name: String,
    /// `bool`, `int`, `double`, `enum`, ...
    pub kind: String,
    pub value: String,
}

/// A running UHP engine. One search at a time; killed when dropped.
pub struct UhpEngine {
    process: Process,
    name: String,
    capabilities: Vec<String>,
    options: Vec<UhpOption>,
    /// The engine's game, as this client set it up: a `newgame` GameString and the moves played since.
    game: Option<(String, Vec<Move>)>,
    timeouts: Timeouts,
    /// The engine refused a time with a fraction of a second: times are rounded up to whole seconds.
    whole_seconds: bool,
}

/// Whether an answer line is one of UHP's error forms.
fn is_error(line: &str) -> bool {
    let word = line.split_whitespace().next().unwrap_or("");
    word == "err" || word == "invalidmove"
}

impl UhpEngine {
    /// Start the engine: read its greeting (the `info` answer every engine writes on start), ask `info` again
    /// (its `id` and capabilities), then read its `options` (none when it does not know the command).
    pub fn start(command: &EngineCommand, timeouts: Timeouts) -> Result<UhpEngine, EngineError> {
        let process = Process::spawn(command)?;
        let mut engine = UhpEngine {
            name: process.label.clone(),
            process,
            capabilities: Vec::new(),
            options: Vec::new(),
            game: None,
            timeouts,
            whole_seconds: false,
        };
        let deadline = Instant::now() + timeouts.handshake;
        engine.block(deadline, "the greeting")?;
        engine.process.send("info")?;
        let info = engine.block(deadline, "the info answer")?;
        let Some(id) = info.iter().find_map(|l| l.trim().strip_prefix("id ")) else {
            let message = format!("`info` answered no `id` line: {:?}", short(&info));
            return Err(engine.protocol(message));
        };
        engine.name = id.trim().chars().take(100).collect();
        engine.process.label = engine.name.clone();
        engine.capabilities = info
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.starts_with("id ") && !is_error(l))
            .flat_map(|l| l.split(';').map(|c| c.trim().to_string()))
            .filter(|c| !c.is_empty())
            .collect();
        engine.process.send("options")?;
        let options = engine.block(Instant::now() + timeouts.ready, "the options")?;
        if !options.iter().any(|l| is_error(l)) {
            engine.options = options.iter().filter_map(|l| parse_option(l)).collect();
        }
        Ok(engine)
    }

    /// The engine's `id` (its name and version).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The capabilities it listed (`Mosquito`, `Ladybug`, `Pillbug`).
    pub fn capabilities(&self) -> &[String] {
        &self.capabilities
    }

    /// The options it listed.
    pub fn options(&self) -> &[UhpOption] {
        &self.options
    }

    pub fn is_dead(&self) -> bool {
        self.process.is_dead()
    }

    /// `options set Name Value`, for an option the engine listed; a value it refuses (`err`) is
    /// [`EngineError::BadOptionValue`] and changes nothing.
    pub fn set_option(&mut self, name: &str, value: &str) -> Result<(), EngineError> {
        let Some(option) = self.options.iter().find(|o| o.name.eq_ignore_ascii_case(name)).cloned() else {
            return Err(EngineError::UnknownOption { engine: self.name.clone(), name: name.to_string() });
        };
        let engine = self.name.clone();
        let bad = |reason: String| EngineError::BadOptionValue {
            engine: engine.clone(),
            name: option.name.clone(),
            value: value.chars().take(100).collect(),
            reason,
        };
        let value = value.trim();
        if value.is_empty() || value.contains(char::is_whitespace) || value.contains(';') {
            return Err(bad("a UHP option value is one word without `;`".into()));
        }
        self.process.send(&format!("options set {} {value}", option.name))?;
        let answer = self.block(Instant::now() + self.timeouts.ready, "options set")?;
        if let Some(error) = answer.iter().find(|l| is_error(l)) {
            return Err(bad(error.chars().take(200).collect()));
        }
        Ok(())
    }

    /// The lines of one answer, up to its `ok` (which is not included). A missed deadline kills the engine.
    fn block(&mut self, deadline: Instant, during: &'static str) -> Result<Vec<String>, EngineError> {
        let mut lines = Vec::new();
        loop {
            match self.process.receive(deadline, during)? {
                Received::Line(line) if line.trim() == "ok" => return Ok(lines),
                Received::Line(line) => {
                    if lines.len() >= MAX_BLOCK {
                        return Err(self.protocol(format!("more than {MAX_BLOCK} lines without `ok` ({during})")));
                    }
                    lines.push(line);
                }
                Received::Timeout => {
                    let after = self.timeouts.handshake.max(self.timeouts.ready);
                    let error = EngineError::Timeout { engine: self.name.clone(), during, after };
                    return Err(self.process.fail(error));
                }
            }
        }
    }

    /// A protocol error: the process is killed.
    fn protocol(&mut self, message: String) -> EngineError {
        let error = EngineError::Protocol { engine: self.name.clone(), message };
        self.process.fail(error)
    }

    /// Search the position `root` reaches after `moves` (the engine is given the whole game as a GameString).
    /// See the module documentation for the limits and for stopping.
    pub fn search(
        &mut self,
        root: &Hive,
        moves: &[Move],
        limits: &Limits,
        multipv: u32,
        stop: &AtomicBool,
        sink: &mut dyn FnMut(Event<Move>),
    ) -> Result<Done<Move>, EngineError> {
        let started = Instant::now();
        if multipv > 1 {
            let what = "gives one move, not several lines (UHP has no MultiPV)".to_string();
            return Err(EngineError::Unsupported { engine: self.name.clone(), what });
        }
        let position =
            played(root, moves).map_err(|source| EngineError::Request { engine: self.name.clone(), source })?;
        let mut legal = Vec::new();
        position.generate_moves(&mut legal);
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
        self.check_game_type(&position)?;
        self.set_up(root, moves, &position)?;

        let node_limited = self.apply_node_limit(limits)?;
        let (mut command, depth) = bestmove_command(limits, &self.timeouts, node_limited, self.whole_seconds);
        self.process.send(&command)?;
        let mut sent = Instant::now();
        let mut stop_at = search_deadline(limits, &self.timeouts, self.whole_seconds).map(|d| sent + d);
        let mut hung_at: Option<Instant> = None;
        let mut best: Option<Move> = None;
        loop {
            let now = Instant::now();
            if hung_at.is_none() && (stop.load(Ordering::Relaxed) || stop_at.is_some_and(|t| now >= t)) {
                // UHP cannot be told to stop: the engine has the grace period to answer by itself.
                hung_at = Some(now + self.timeouts.grace);
                stop_at = None;
            }
            if let Some(hung) = hung_at.filter(|&t| now >= t) {
                let after = hung.saturating_duration_since(sent);
                let error = EngineError::Timeout { engine: self.name.clone(), during: "bestmove", after };
                return Err(self.process.fail(error));
            }
            let wake = [Some(now + POLL), stop_at, hung_at].into_iter().flatten().min().unwrap_or(now + POLL);
            let line = match self.process.receive(wake, "searching")? {
                Received::Timeout => continue,
                Received::Line(line) => line,
            };
            let text = line.trim();
            if text == "ok" {
                break;
            }
            if text.is_empty() {
                continue;
            }
            if is_error(text) {
                if best.is_none() && !self.whole_seconds && command.contains('.') && hung_at.is_none() {
                    // The engine does not read fractions of a second (UHP writes `hh:mm:ss`): read the rest of
                    // its answer, then ask again in whole seconds.
                    self.block(Instant::now() + self.timeouts.ready, "the refused bestmove")?;
                    let answer: String = text.chars().take(200).collect();
                    tracing::info!(engine = %self.name, refused = %command, %answer,
                        "the engine refused a fraction of a second: times are rounded up to whole seconds");
                    self.whole_seconds = true;
                    command = bestmove_command(limits, &self.timeouts, node_limited, true).0;
                    self.process.send(&command)?;
                    sent = Instant::now();
                    stop_at = search_deadline(limits, &self.timeouts, true).map(|d| sent + d);
                    continue;
                }
                let message = format!("`{command}` failed: {}", text.chars().take(200).collect::<String>());
                return Err(self.protocol(message));
            }
            // An engine may write better moves as it finds them, one per line: the last one is its answer.
            match position.parse_move(text) {
                Ok(m) => best = Some(m),
                Err(e) => {
                    let error = EngineError::IllegalMove {
                        engine: self.name.clone(),
                        token: text.chars().take(40).collect(),
                        position: position.game_string(),
                        message: e.message,
                    };
                    return Err(self.process.fail(error));
                }
            }
        }
        let Some(best) = best else {
            return Err(self.protocol("bestmove answered `ok` without a move".into()));
        };
        let done = Done {
            best: Some(best),
            ponder: None,
            lines: Vec::new(),
            depth,
            seldepth: depth,
            nodes: 0,
            nps: 0,
            time_ms: started.elapsed().as_millis() as u64,
            neval: 0,
            game_end: position.rule_end(0),
        };
        sink(Event::Done(done.clone()));
        Ok(done)
    }

    /// Bring the engine's game to `position` (`root` and `moves`): a game it already holds the beginning of goes
    /// on with `play`s, as a GUI plays one, so that the engine keeps its tables (kibitz's `newgame` clears them);
    /// any other position is a `newgame <GameString>`. A refusal fails the search and kills the process.
    fn set_up(&mut self, root: &Hive, moves: &[Move], position: &Hive) -> Result<(), EngineError> {
        let root_string = root.game_string();
        let continued = match self.game.take() {
            Some((on_board, played)) if on_board == root_string && moves.starts_with(&played) => Some(played.len()),
            _ => None,
        };
        let commands: Vec<String> = match continued {
            Some(from) => {
                let mut at = played(root, &moves[..from])
                    .map_err(|source| EngineError::Request { engine: self.name.clone(), source })?;
                moves[from..]
                    .iter()
                    .map(|&m| {
                        let command = format!("play {}", at.move_string(m));
                        at.make(m);
                        command
                    })
                    .collect()
            }
            None => vec![format!("newgame {}", position.game_string())],
        };
        for command in commands {
            self.process.send(&command)?;
            let answer = self.block(Instant::now() + self.timeouts.ready, "setting up the game")?;
            if let Some(error) = answer.iter().find(|l| is_error(l)) {
                // The engine's own words first, then the end of the game (its last moves), each bounded.
                let error: String = error.chars().take(200).collect();
                let game = position.game_string();
                let skip = game.chars().count().saturating_sub(300);
                let game: String = game.chars().skip(skip).collect();
                let cut = if skip > 0 { "…" } else { "" };
                return Err(self.protocol(format!("refused `{command}`: {error} (the game: `{cut}{game}`)")));
            }
        }
        self.game = Some((root_string, moves.to_vec()));
        Ok(())
    }

    /// Give the engine the search's node limit through [`MAX_NODES_OPTION`] when it lists that option (0 when
    /// the search has none and the engine's value is not 0 already); true when the node limit is applied.
    fn apply_node_limit(&mut self, limits: &Limits) -> Result<bool, EngineError> {
        let Some(index) = self
            .options
            .iter()
            .position(|o| o.name.eq_ignore_ascii_case(MAX_NODES_OPTION) && o.kind.eq_ignore_ascii_case("int"))
        else {
            return Ok(false);
        };
        let nodes = if limits.infinite { None } else { limits.nodes };
        let wanted = nodes.unwrap_or(0).to_string();
        if self.options[index].value != wanted {
            let name = self.options[index].name.clone();
            self.set_option(&name, &wanted)?;
            self.options[index].value = wanted;
        }
        Ok(nodes.is_some())
    }

    /// The engine must list the expansion pieces of the game among its capabilities.
    fn check_game_type(&self, position: &Hive) -> Result<(), EngineError> {
        let game_type = position.game_type().name();
        let expansions = game_type.split_once('+').map_or("", |(_, e)| e);
        for (letter, capability) in [('M', "Mosquito"), ('L', "Ladybug"), ('P', "Pillbug")] {
            if expansions.contains(letter) && !self.capabilities.iter().any(|c| c.eq_ignore_ascii_case(capability)) {
                let what = format!("cannot play {game_type}: it does not list the {capability} capability");
                return Err(EngineError::Unsupported { engine: self.name.clone(), what });
            }
        }
        Ok(())
    }

    /// Ask the engine to exit, give it a moment, then kill it.
    pub fn quit(mut self) {
        self.process.shut_down("exit", Duration::from_millis(500));
    }
}

fn short(lines: &[String]) -> Vec<String> {
    lines.iter().take(3).map(|l| l.chars().take(80).collect()).collect()
}

/// `Key;type;value;...` as an option.
fn parse_option(line: &str) -> Option<UhpOption> {
    let mut fields = line.trim().split(';');
    let name = fields.next()?.trim();
    let kind = fields.next()?.trim();
    let value = fields.next().unwrap_or("").trim();
    if name.is_empty() || name.contains(char::is_whitespace) || is_error(line) {
        return None;
    }
    Some(UhpOption { name: name.to_string(), kind: kind.to_string(), value: value.to_string() })
}

/// The game `root` continued by `moves`, each checked legal where it is played.
fn played(root: &Hive, moves: &[Move]) -> Result<Hive, NotationError> {
    let mut position = root.clone();
    let mut legal = Vec::new();
    for (i, &m) in moves.iter().enumerate() {
        position.generate_moves(&mut legal);
        if !legal.contains(&m) {
            return Err(NotationError::new(format!("{m:?}"), format!("move {} is not legal", i + 1)));
        }
        position.make(m);
    }
    Ok(position)
}

/// The time rounded up to whole seconds, at least one (for an engine that reads only `hh:mm:ss`).
fn whole_seconds(time: Duration) -> Duration {
    Duration::from_secs(time.as_secs() + u64::from(time.subsec_nanos() > 0)).max(Duration::from_secs(1))
}

/// `hh:mm:ss`, with the milliseconds when the time is not whole seconds, or rounded up to whole seconds (at
/// least one) when `whole`.
pub fn format_time(time: Duration, whole: bool) -> String {
    let ms = if whole { whole_seconds(time).as_millis() } else { time.as_millis().max(1) };
    let (secs, frac) = (ms / 1000, ms % 1000);
    let base = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if frac == 0 { base } else { format!("{base}.{frac:03}") }
}

/// The `bestmove` command for the limits, and the depth it asks for (0 for a time limit).
/// `node_limited`: the engine has been given the node limit ([`MAX_NODES_OPTION`]); `whole`: times in whole
/// seconds.
fn bestmove_command(limits: &Limits, timeouts: &Timeouts, node_limited: bool, whole: bool) -> (String, u32) {
    if limits.infinite {
        return (format!("bestmove time {}", format_time(timeouts.search, whole)), 0);
    }
    if let Some(depth) = limits.depth {
        let depth = depth.max(1);
        return (format!("bestmove depth {depth}"), depth);
    }
    let clock = limits.clock.map(|c| (c.remaining / 20 + c.increment).min(c.remaining));
    match [limits.movetime, clock].into_iter().flatten().min() {
        Some(time) => (format!("bestmove time {}", format_time(time, whole)), 0),
        None if node_limited => (format!("bestmove depth {NODE_LIMITED_DEPTH}"), NODE_LIMITED_DEPTH),
        None => (format!("bestmove depth {}", Hive::DEFAULT_DEPTH), Hive::DEFAULT_DEPTH),
    }
}

/// When the engine should have answered by itself: its time (rounded up to whole seconds when `whole`) plus the
/// grace period, or [`Timeouts::search`] for a depth; `None` never (an infinite search is bounded by its own
/// `bestmove time`).
fn search_deadline(limits: &Limits, timeouts: &Timeouts, whole: bool) -> Option<Duration> {
    if limits.infinite {
        return Some(timeouts.search + timeouts.grace);
    }
    if limits.depth.is_some() {
        return Some(timeouts.search);
    }
    let clock = limits.clock.map(|c| (c.remaining / 20 + c.increment).min(c.remaining));
    Some(match [limits.movetime, clock].into_iter().flatten().min() {
        Some(t) if whole => whole_seconds(t) + timeouts.grace,
        Some(t) => t + timeouts.grace,
        None => timeouts.search,
    })
}

impl Driver<Hive> for UhpEngine {
    fn id(&self) -> &str {
        &self.name
    }

    fn is_dead(&self) -> bool {
        UhpEngine::is_dead(self)
    }

    /// Every search starts its own `newgame`: nothing to clear.
    fn new_game(&mut self) -> Result<(), EngineError> {
        // The next search starts with `newgame`, which clears the engine's tables.
        self.game = None;
        if self.is_dead() { Err(EngineError::Dead { engine: self.name.clone() }) } else { Ok(()) }
    }

    fn search(
        &mut self,
        root: &Hive,
        moves: &[Move],
        limits: &Limits,
        multipv: u32,
        stop: &AtomicBool,
        sink: &mut dyn FnMut(Event<Move>),
    ) -> Result<Done<Move>, EngineError> {
        UhpEngine::search(self, root, moves, limits, multipv, stop, sink)
    }

    fn shut_down(self: Box<Self>) {
        self.quit();
    }
}

/// Start a UHP engine and set the options of its configuration.
pub fn uhp_launch(spec: &EngineSpec) -> Result<Box<dyn Driver<Hive>>, EngineError> {
    let mut engine = UhpEngine::start(&spec.command(), spec.timeouts)?;
    for (name, value) in &spec.options {
        engine.set_option(name, value)?;
    }
    Ok(Box::new(engine))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_as_uhp_reads_them() {
        assert_eq!(format_time(Duration::from_secs(5), false), "00:00:05");
        assert_eq!(format_time(Duration::from_secs(3725), false), "01:02:05");
        assert_eq!(format_time(Duration::from_millis(1500), false), "00:00:01.500");
        assert_eq!(format_time(Duration::ZERO, false), "00:00:00.001");
        // Whole seconds, rounded up, at least one.
        assert_eq!(format_time(Duration::from_secs(5), true), "00:00:05");
        assert_eq!(format_time(Duration::from_millis(1500), true), "00:00:02");
        assert_eq!(format_time(Duration::from_millis(300), true), "00:00:01");
        assert_eq!(format_time(Duration::ZERO, true), "00:00:01");
    }

    #[test]
    fn limits_become_bestmove_commands() {
        let t = Timeouts::default();
        for node_limited in [false, true] {
            assert_eq!(
                bestmove_command(&Limits::depth(3), &t, node_limited, false),
                ("bestmove depth 3".to_string(), 3)
            );
            let time = bestmove_command(&Limits::movetime(Duration::from_secs(2)), &t, node_limited, false);
            assert_eq!(time.0, "bestmove time 00:00:02");
            assert_eq!(bestmove_command(&Limits::infinite(), &t, node_limited, false).0, "bestmove time 00:10:00");
        }
        // A node limit alone: the default depth for an engine without MaxNodes, a deep search bounded by the
        // nodes for one with it.
        assert_eq!(bestmove_command(&Limits::nodes(1000), &t, false, false), ("bestmove depth 6".to_string(), 6));
        assert_eq!(bestmove_command(&Limits::nodes(1000), &t, true, false), ("bestmove depth 64".to_string(), 64));
    }

    #[test]
    fn options_lines_are_read() {
        let o = parse_option("Threads;int;1;1;1;64").expect("an option");
        assert_eq!((o.name.as_str(), o.kind.as_str(), o.value.as_str()), ("Threads", "int", "1"));
        assert!(parse_option("err Invalid command.").is_none());
        assert!(parse_option("garbage").is_none());
    }
}
