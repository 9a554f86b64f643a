//! The Universal Hive Protocol (UHP, as Mzinga's wiki specifies it) as a transport-free session
//! state machine, and [`run_stdio`], the engine on stdin/stdout (`kibitz-uhp`, `kibitz engine uhp`).
//!
//! The engine writes the `info` answer on start; every command's output ends with `ok`:
//!
//! | command | output before `ok` |
//! |---|---|
//! | `info` | `id kibitz <version>`, `Mosquito;Ladybug;Pillbug` |
//! | `help [command]` | the list of commands (or one command's usage) |
//! | `newgame [GameTypeString\|GameString]` | the GameString (a GameString's moves are replayed with every rule checked) |
//! | `play <MoveString>` | the GameString after the move |
//! | `pass` | the GameString after the pass |
//! | `validmoves` | every legal MoveString, `;`-separated |
//! | `bestmove` | the best MoveString within the `Level` option's limit |
//! | `bestmove depth N` | ... searching N plies (0 counts as 1) |
//! | `bestmove time hh:mm:ss` | ... thinking that long (a fraction of a second may follow: `00:00:01.5`) |
//! | `undo [N]` | the GameString after taking back N moves (default 1) |
//! | `options` | one line per option: `Key;type;value;default;min;max` (`Key;bool;value;default` for switches) |
//! | `options get K` / `options set K V` | that option's line (after the change) |
//! | `perft [N]` | `perft(d) = nodes in t ms. r KN/s` for d = 0..N (default [`DEFAULT_PERFT_DEPTH`], most [`MAX_PERFT_DEPTH`]) |
//! | `exit` | nothing, not even `ok`: the engine exits |
//!
//! Errors are Mzinga's: `invalidmove <reason>` for a move the rules forbid, with Mzinga's reason texts;
//! `err <reason>` for anything else (an unknown command or argument, a MoveString that names nothing on the
//! board, no game yet, a finished game, a bad undo count, an unknown option or value). A refused command
//! changes nothing.
//!
//! Conventions of this engine:
//!
//! * Command words and option names are read case-insensitively; empty lines are ignored. A line longer than
//!   1 MiB is discarded and answered with `err`.
//! * `bestmove` searches on the pool; lines that arrive meanwhile wait (up to [`MAX_WAITING`] of them) and
//!   run in order after the answer. The end of input gives a running search at most [`END_OF_INPUT_GRACE`]
//!   more, then it answers with what it has; the engine ends once the waiting lines have run, so
//!   `newgame <GameString>`, `bestmove ...` and a closed stdin get their move within a second.
//! * No search progress is written: stdout carries only protocol lines.
//!
//! Options:
//!
//! | key | type | default | range | meaning |
//! |---|---|---|---|---|
//! | `Level` | int | 5 | 1-8 | what `bestmove` without a limit does: [`LEVELS`] |
//! | `Threads` | int | 1 | 1-64 | search threads |
//! | `TranspositionTableSizeMB` | int | 64 | 1-4096 | transposition table size in MiB (resizing clears it) |
//! | `RepetitionRule` | bool | False | | a position seen a third time with the same side to move draws |
//! | `MaxNodes` | int | 0 | 0-1000000000 | every `bestmove` also stops after this many nodes (0: no limit) |
//!
//! `MaxNodes` is kibitz's own: UHP's `bestmove` takes a depth or a time, and a node count is the limit that
//! makes matches between engines repeatable whatever else the machine is doing. kibitz's UHP client sets it
//! on any engine that lists an int option of that name.
//!
//! Threefold repetition is not in the printed rules, hence off by default.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::analysis::{Analysis, Request};
use crate::engines::Engines;
use crate::game::Game;
use crate::games::hive::{GameType, Hive, Move, MoveStringError};
use crate::pool::{JobHandle, Pool, PoolConfig, Priority};
use crate::search::Limits;

pub use super::session::SearchEnded;
use super::session::{AnswerSlot, ErrorForm, LEVELS, Level, SessionError, failure_message, search_to_slot, shorten};
pub use super::stdio::Reply;
use super::stdio::{self, EventSender, LineSession};

/// The capabilities line of `info`.
pub const CAPABILITIES: &str = "Mosquito;Ladybug;Pillbug";
/// The deepest `bestmove depth` searched (a larger number is searched this deep).
pub const MAX_DEPTH: u32 = 64;
/// The longest `bestmove time` accepted.
pub const MAX_TIME: Duration = Duration::from_secs(24 * 3600);
/// How long a search may go on once the input has ended, before it answers with what it has.
pub const END_OF_INPUT_GRACE: Duration = Duration::from_secs(1);
/// The deepest `perft` (it runs on the session's thread).
pub const MAX_PERFT_DEPTH: u32 = 6;
/// The depth of a `perft` without its argument: small, so that a bare `perft` answers within a second.
pub const DEFAULT_PERFT_DEPTH: u32 = 4;
/// Lines kept while `bestmove` thinks; more are answered with `err` when their turn comes.
pub const MAX_WAITING: usize = 1024;
/// The most bytes of lines kept while thinking.
const MAX_WAITING_BYTES: usize = 4 << 20;

/// UHP's error forms: `err <text>`, and `invalidmove <text>` for moves.
const ERRORS: ErrorForm = ErrorForm { command: "err", invalid_move: "invalidmove" };

const INVALID_COMMAND: &str = "Invalid command. Try 'help' to see a list of valid commands.";
const NO_GAME: &str = "No game in progress. Try 'newgame' to start a new game.";
const GAME_OVER: &str = "The game is over. Try 'newgame' to start a new game.";

/// The options and their values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UhpConfig {
    /// 1-based index into [`LEVELS`].
    pub level: u32,
    pub threads: u32,
    pub hash_mb: u32,
    pub repetition: bool,
    /// Every search also stops after this many nodes (0: no node limit).
    pub max_nodes: u32,
    /// Search with this external engine of the engines file instead of kibitz's own (`-engine`).
    pub engine: Option<String>,
}

impl Default for UhpConfig {
    fn default() -> Self {
        UhpConfig { level: 5, threads: 1, hash_mb: 64, repetition: false, max_nodes: 0, engine: None }
    }
}

/// An integer option: its key, its range and where its value lives.
struct IntOption {
    key: &'static str,
    min: u32,
    max: u32,
    get: fn(&UhpConfig) -> u32,
    set: fn(&mut UhpConfig, u32),
}

/// The largest `MaxNodes`.
pub const MAX_NODES: u32 = 1_000_000_000;

const INT_OPTIONS: [IntOption; 4] = [
    IntOption { key: "Level", min: 1, max: LEVELS.len() as u32, get: |c| c.level, set: |c, v| c.level = v },
    IntOption { key: "Threads", min: 1, max: 64, get: |c| c.threads, set: |c, v| c.threads = v },
    IntOption { key: "TranspositionTableSizeMB", min: 1, max: 4096, get: |c| c.hash_mb, set: |c, v| c.hash_mb = v },
    IntOption { key: "MaxNodes", min: 0, max: MAX_NODES, get: |c| c.max_nodes, set: |c, v| c.max_nodes = v },
];

const REPETITION_KEY: &str = "RepetitionRule";

fn bool_word(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

/// `1234567` as `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Read `hh:mm:ss` (each part a number, seconds possibly with a fraction).
pub fn parse_time(text: &str) -> Option<Duration> {
    let mut parts = text.split(':');
    let (Some(h), Some(m), Some(s), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return None;
    };
    let whole = |t: &str| {
        (!t.is_empty() && t.len() <= 6 && t.bytes().all(|b| b.is_ascii_digit()))
            .then(|| t.parse::<u64>().ok())
            .flatten()
    };
    let (h, m) = (whole(h)?, whole(m)?);
    let (secs, frac) = match s.split_once('.') {
        Some((a, b)) => (whole(a)?, b),
        None => (whole(s)?, ""),
    };
    if m >= 60 || secs >= 60 || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let nanos = if frac.is_empty() { 0 } else { format!("{frac:0<9}").parse::<u32>().ok()? };
    let total = Duration::new(h.checked_mul(3600)?.checked_add(m * 60 + secs)?, nanos);
    (total <= MAX_TIME).then_some(total)
}

/// A search under way.
struct Thinking {
    id: u64,
    job: JobHandle,
    slot: AnswerSlot<Move>,
}

/// A line that arrived while thinking.
enum Waiting {
    Line(String),
    TooLong(usize),
    Overflow,
}

/// One UHP session: the game (none before `newgame`), the options and the search under way.
pub struct UhpSession {
    analysis: Analysis,
    notify: Arc<dyn Fn(SearchEnded) + Send + Sync>,
    config: UhpConfig,
    game: Option<Hive>,
    thinking: Option<Thinking>,
    waiting: VecDeque<Waiting>,
    waiting_bytes: usize,
    input_ended: bool,
    next_id: u64,
}

impl UhpSession {
    /// A session searching on `pool` (whose table should have `config.hash_mb` MiB); `notify` (called on a
    /// worker thread) must bring each [`SearchEnded`] back to [`UhpSession::on_event`].
    pub fn new(analysis: Analysis, config: UhpConfig, notify: impl Fn(SearchEnded) + Send + Sync + 'static) -> Self {
        UhpSession {
            analysis,
            notify: Arc::new(notify),
            config,
            game: None,
            thinking: None,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            input_ended: false,
            next_id: 0,
        }
    }

    pub fn game(&self) -> Option<&Hive> {
        self.game.as_ref()
    }

    pub fn config(&self) -> &UhpConfig {
        &self.config
    }

    pub fn is_thinking(&self) -> bool {
        self.thinking.is_some()
    }

    /// What the engine writes on start: the `info` answer.
    pub fn greeting(&mut self) -> Vec<String> {
        let mut lines = info_lines();
        lines.push("ok".into());
        lines
    }

    /// One input line.
    pub fn on_line(&mut self, line: &str) -> Reply {
        if self.thinking.is_some() {
            self.wait(Waiting::Line(line.to_string()));
            return Reply::none();
        }
        self.command(line)
    }

    /// A discarded over-long line.
    pub fn on_line_too_long(&mut self, bytes: usize) -> Reply {
        if self.thinking.is_some() {
            self.wait(Waiting::TooLong(bytes));
            return Reply::none();
        }
        too_long(bytes)
    }

    /// The input ended: quit now, or once the search has answered and the waiting lines have run.
    pub fn on_end_of_input(&mut self) -> Reply {
        self.input_ended = true;
        match &self.thinking {
            // Nobody can ask for more: the search gets at most `END_OF_INPUT_GRACE` more, answers with what it
            // has, and the engine exits.
            Some(thinking) => {
                super::session::stop_after(&thinking.job, END_OF_INPUT_GRACE, "kibitz-uhp-eof");
                Reply::none()
            }
            None => Reply::quit(Vec::new()),
        }
    }

    /// A search reported its end: its answer, then the lines that waited for it.
    pub fn on_event(&mut self, event: SearchEnded) -> Reply {
        match &self.thinking {
            Some(t) if t.id == event.0 => {}
            _ => return Reply::none(),
        }
        let Some(thinking) = self.thinking.take() else { return Reply::none() };
        let best = match thinking.slot.take() {
            Some(Err(failure)) => Err(SessionError::command(failure_message(&failure))),
            Some(Ok(done)) => Ok(done.best),
            None => Ok(None),
        };
        let mut lines = match (best, &self.game) {
            (Err(e), _) => vec![ERRORS.line(&e)],
            (Ok(Some(best)), Some(game)) if game.legal_moves().contains(&best) => vec![game.move_string(best)],
            _ => vec!["err The search found no move.".to_string()],
        };
        lines.push("ok".into());
        let mut quit = false;
        while self.thinking.is_none() {
            let Some(item) = self.waiting.pop_front() else { break };
            if let Waiting::Line(line) = &item {
                self.waiting_bytes -= line.len();
            }
            let reply = match item {
                Waiting::Line(line) => self.command(&line),
                Waiting::TooLong(n) => too_long(n),
                Waiting::Overflow => done_with(vec![format!(
                    "err More than {MAX_WAITING} commands arrived while thinking; this one was dropped."
                )]),
            };
            lines.extend(reply.lines);
            if reply.quit {
                quit = true;
                break;
            }
        }
        quit |= self.input_ended && self.thinking.is_none();
        Reply { lines, quit }
    }

    fn wait(&mut self, item: Waiting) {
        let bytes = match &item {
            Waiting::Line(line) => line.len(),
            _ => 0,
        };
        // At most MAX_WAITING items and 4 MiB of lines: a flood of long lines is dropped, not kept.
        if self.waiting.len() < MAX_WAITING && self.waiting_bytes + bytes <= MAX_WAITING_BYTES {
            self.waiting_bytes += bytes;
            self.waiting.push_back(item);
        } else if !matches!(self.waiting.back(), Some(Waiting::Overflow)) {
            self.waiting.push_back(Waiting::Overflow);
        }
    }

    /// Run one command (not while thinking).
    fn command(&mut self, line: &str) -> Reply {
        let mut tokens = line.split_whitespace();
        let Some(word) = tokens.next() else { return Reply::none() };
        let args: Vec<&str> = tokens.collect();
        let word = word.to_ascii_lowercase();
        tracing::debug!(command = %word, args = args.len(), "command");
        let result = match word.as_str() {
            "info" if args.is_empty() => Ok(info_lines()),
            "help" | "?" => match args.as_slice() {
                [] => Ok(help_lines()),
                [c] => {
                    let c = c.to_ascii_lowercase();
                    let lines: Vec<String> = help_lines()
                        .into_iter()
                        .filter(|l| l.split_whitespace().next() == Some(c.as_str()))
                        .map(|l| l.trim().to_string())
                        .collect();
                    if lines.is_empty() { Err(SessionError::Command(INVALID_COMMAND.into())) } else { Ok(lines) }
                }
                _ => Err(SessionError::Command(INVALID_COMMAND.into())),
            },
            "newgame" => self.newgame(line, &args),
            "play" if !args.is_empty() => self.play(rest_after_word(line)),
            "pass" if args.is_empty() => self.play("pass"),
            "validmoves" if args.is_empty() => self.validmoves(),
            "bestmove" => match self.bestmove(&args) {
                Ok(()) => return Reply::none(),
                Err(e) => Err(e),
            },
            "undo" => self.undo(&args),
            "options" => self.options(&args),
            "perft" => self.perft(&args),
            "exit" if args.is_empty() => return Reply::quit(Vec::new()),
            _ => Err(SessionError::Command(INVALID_COMMAND.into())),
        };
        match result {
            Ok(lines) => done_with(lines),
            Err(e) => done_with(vec![ERRORS.line(&e)]),
        }
    }

    fn game_mut(&mut self) -> Result<&mut Hive, SessionError> {
        self.game.as_mut().ok_or_else(|| SessionError::Command(NO_GAME.into()))
    }

    fn playing(&self) -> Result<&Hive, SessionError> {
        let game = self.game.as_ref().ok_or_else(|| SessionError::Command(NO_GAME.into()))?;
        if game.is_over() {
            return Err(SessionError::Command(GAME_OVER.into()));
        }
        Ok(game)
    }

    fn newgame(&mut self, line: &str, args: &[&str]) -> Result<Vec<String>, SessionError> {
        let mut game = if args.is_empty() {
            Hive::new(GameType::BASE)
        } else {
            let text = rest_after_word(line);
            Hive::from_game_string(text).map_err(|e| {
                if text.contains(';') {
                    SessionError::Command(format!(
                        "Unable to load the GameString: {}: `{}`",
                        e.message,
                        shorten(&e.token)
                    ))
                } else {
                    SessionError::Command(format!(
                        "Unknown GameTypeString '{}'. Try Base, Base+M, Base+L, Base+P, Base+ML, Base+MP, Base+LP \
                         or Base+MLP.",
                        shorten(text)
                    ))
                }
            })?
        };
        // A GameString read as a draw by repetition keeps that rule for its game (it is over, and is written
        // back as read); with the option on, the rule applies to every game, and the GameState must say so.
        game.set_repetition_rule(self.config.repetition || game.repetition_rule());
        if let Some(claimed) = rest_after_word(line).split(';').nth(1).map(str::trim)
            && !claimed.eq_ignore_ascii_case(game.state_string())
        {
            return Err(SessionError::Command(format!(
                "Unable to load the GameString: the moves give GameState {} ({REPETITION_KEY} is on): `{}`",
                game.state_string(),
                shorten(claimed)
            )));
        }
        let text = game.game_string();
        self.game = Some(game);
        self.analysis.pool().clear_hash();
        Ok(vec![text])
    }

    fn play(&mut self, text: &str) -> Result<Vec<String>, SessionError> {
        self.playing()?;
        let game = self.game_mut()?;
        match game.play_checked(text) {
            Ok(_) => Ok(vec![game.game_string()]),
            Err(MoveStringError::Invalid(reason)) => Err(SessionError::InvalidMove(reason.to_string())),
            Err(MoveStringError::Unreadable(e)) => Err(SessionError::Command(format!(
                "Unable to parse '{}': {}: `{}`",
                shorten(text),
                e.message,
                shorten(&e.token)
            ))),
        }
    }

    fn validmoves(&mut self) -> Result<Vec<String>, SessionError> {
        Ok(vec![self.playing()?.valid_moves_string()])
    }

    /// Start a search, or say why not.
    fn bestmove(&mut self, args: &[&str]) -> Result<(), SessionError> {
        let mut limits = match args {
            [] => {
                let level = Level::numbered(self.config.level as usize);
                Limits {
                    depth: (level.depth > 0).then_some(level.depth),
                    movetime: Some(Duration::from_millis(level.time_ms)),
                    ..Limits::default()
                }
            }
            [kind, value] if kind.eq_ignore_ascii_case("depth") => {
                let depth: u32 = value.parse().map_err(|_| {
                    SessionError::Command(format!(
                        "Unable to parse the depth '{}': a number of plies is needed.",
                        shorten(value)
                    ))
                })?;
                if depth > MAX_DEPTH {
                    return Err(SessionError::Command(format!(
                        "Unable to search to depth {depth}: the deepest is {MAX_DEPTH}."
                    )));
                }
                Limits::depth(depth.max(1))
            }
            [kind, value] if kind.eq_ignore_ascii_case("time") => {
                let time = parse_time(value).ok_or_else(|| {
                    SessionError::Command(format!("Unable to parse the time '{}': hh:mm:ss is needed.", shorten(value)))
                })?;
                // UHP's time is the engine's limit: the answer comes within it.
                Limits {
                    depth: Some(MAX_DEPTH),
                    movetime: Some(crate::search::answer_within(time)),
                    ..Limits::default()
                }
            }
            _ => return Err(SessionError::Command(INVALID_COMMAND.into())),
        };
        if self.config.max_nodes > 0 {
            limits.nodes = Some(u64::from(self.config.max_nodes));
        }
        let game = self.playing()?.clone();
        let request = Request::new(game, limits).priority(Priority::High).threads(self.config.threads.max(1) as usize);
        self.next_id += 1;
        let id = self.next_id;
        let notify = Arc::clone(&self.notify);
        match search_to_slot(&self.analysis, self.config.engine.as_deref(), request, id, notify) {
            Ok((job, slot)) => {
                self.thinking = Some(Thinking { id, job, slot });
                Ok(())
            }
            Err(e) => Err(SessionError::Command(format!("Unable to search now: {e}."))),
        }
    }

    fn undo(&mut self, args: &[&str]) -> Result<Vec<String>, SessionError> {
        let n: usize = match args {
            [] => 1,
            [n] => n.parse().map_err(|_| SessionError::Command(format!("Unable to undo '{}' moves.", shorten(n))))?,
            _ => return Err(SessionError::Command(INVALID_COMMAND.into())),
        };
        let game = self.game_mut()?;
        if n < 1 || n > game.plies() {
            return Err(SessionError::Command(format!("Unable to undo {n} moves.")));
        }
        game.undo_moves(n);
        Ok(vec![game.game_string()])
    }

    fn options(&mut self, args: &[&str]) -> Result<Vec<String>, SessionError> {
        match args {
            [] => {
                let mut lines: Vec<String> = INT_OPTIONS.iter().map(|o| self.int_line(o)).collect();
                lines.push(self.repetition_line());
                Ok(lines)
            }
            [get, key] if get.eq_ignore_ascii_case("get") => Ok(vec![self.option_line(key)?]),
            [set, key, value] if set.eq_ignore_ascii_case("set") => {
                self.set_option(key, value)?;
                Ok(vec![self.option_line(key)?])
            }
            _ => Err(SessionError::Command(INVALID_COMMAND.into())),
        }
    }

    fn int_line(&self, o: &IntOption) -> String {
        let default = (o.get)(&UhpConfig::default());
        format!("{};int;{};{default};{};{}", o.key, (o.get)(&self.config), o.min, o.max)
    }

    fn repetition_line(&self) -> String {
        let default = UhpConfig::default().repetition;
        format!("{REPETITION_KEY};bool;{};{}", bool_word(self.config.repetition), bool_word(default))
    }

    fn option_line(&self, key: &str) -> Result<String, SessionError> {
        if key.eq_ignore_ascii_case(REPETITION_KEY) {
            return Ok(self.repetition_line());
        }
        match INT_OPTIONS.iter().find(|o| o.key.eq_ignore_ascii_case(key)) {
            Some(o) => Ok(self.int_line(o)),
            None => Err(SessionError::Command(format!("The option \"{}\" is not valid.", shorten(key)))),
        }
    }

    fn set_option(&mut self, key: &str, value: &str) -> Result<(), SessionError> {
        if key.eq_ignore_ascii_case(REPETITION_KEY) {
            let on = if value.eq_ignore_ascii_case("true") {
                true
            } else if value.eq_ignore_ascii_case("false") {
                false
            } else {
                return Err(SessionError::Command(format!(
                    "The value \"{}\" is not valid for the option \"{REPETITION_KEY}\": True or False.",
                    shorten(value)
                )));
            };
            self.config.repetition = on;
            if let Some(g) = &mut self.game {
                g.set_repetition_rule(on);
            }
            return Ok(());
        }
        let Some(o) = INT_OPTIONS.iter().find(|o| o.key.eq_ignore_ascii_case(key)) else {
            return Err(SessionError::Command(format!("The option \"{}\" is not valid.", shorten(key))));
        };
        let v = value.parse::<u32>().ok().filter(|v| (o.min..=o.max).contains(v)).ok_or_else(|| {
            SessionError::Command(format!(
                "The value \"{}\" is not valid for the option \"{}\": an integer from {} to {}.",
                shorten(value),
                o.key,
                o.min,
                o.max
            ))
        })?;
        let old_hash = self.config.hash_mb;
        (o.set)(&mut self.config, v);
        if self.config.hash_mb != old_hash {
            self.analysis.pool().set_hash_mb(self.config.hash_mb as usize);
        }
        Ok(())
    }

    fn perft(&mut self, args: &[&str]) -> Result<Vec<String>, SessionError> {
        let max = match args {
            [] => DEFAULT_PERFT_DEPTH,
            [d] => match d.parse::<u32>() {
                Ok(d) if d <= MAX_PERFT_DEPTH => d,
                _ => {
                    return Err(SessionError::Command(format!(
                        "Unable to calculate perft({}): the depth must be from 0 to {MAX_PERFT_DEPTH}.",
                        shorten(d)
                    )));
                }
            },
            _ => return Err(SessionError::Command(INVALID_COMMAND.into())),
        };
        let game = self.game_mut()?;
        let mut lines = Vec::with_capacity(max as usize + 1);
        for depth in 0..=max {
            let start = Instant::now();
            let nodes = if depth == 0 { 1 } else { game.perft(depth) };
            let elapsed = start.elapsed();
            let ms = elapsed.as_millis() as u64;
            // Thousands of nodes a second from the time to the microsecond (found by an audit: whole
            // milliseconds made a count done in under one look like one done in exactly one).
            let rate = nodes as f64 / (elapsed.as_secs_f64().max(1e-6) * 1000.0);
            lines.push(format!(
                "{:<9} = {:>16} in {:>16} ms. {:>8.1} KN/s",
                format!("perft({depth})"),
                grouped(nodes),
                grouped(ms),
                rate
            ));
        }
        Ok(lines)
    }
}

/// A command's output: its lines, then `ok`.
fn done_with(mut lines: Vec<String>) -> Reply {
    lines.push("ok".into());
    Reply { lines, quit: false }
}

fn too_long(bytes: usize) -> Reply {
    done_with(vec![format!("err The line of {bytes} bytes is longer than the limit of {} bytes.", stdio::MAX_LINE)])
}

/// The text after the command word (its arguments with their inner spaces kept).
fn rest_after_word(line: &str) -> &str {
    let t = line.trim_start();
    let end = t.find(char::is_whitespace).unwrap_or(t.len());
    t[end..].trim()
}

/// The `info` answer (without `ok`).
pub fn info_lines() -> Vec<String> {
    vec![format!("id kibitz {}", env!("CARGO_PKG_VERSION")), CAPABILITIES.to_string()]
}

fn help_lines() -> Vec<String> {
    [
        "Game commands:",
        "  newgame [GameTypeString|GameString]",
        "  play MoveString",
        "  pass",
        "  validmoves",
        "  bestmove [depth MaxDepth|time hh:mm:ss]",
        "  undo [MovesToUndo]",
        "",
        "Engine commands:",
        "  info",
        "  help",
        "  options [get OptionName|set OptionName OptionValue]",
        "  perft [MaxDepth]",
        "  exit",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

impl LineSession for UhpSession {
    type Event = SearchEnded;

    fn greeting(&mut self) -> Vec<String> {
        UhpSession::greeting(self)
    }

    fn on_line(&mut self, line: &str) -> Reply {
        UhpSession::on_line(self, line)
    }

    fn on_event(&mut self, event: SearchEnded) -> Reply {
        UhpSession::on_event(self, event)
    }

    fn on_line_too_long(&mut self, bytes: usize) -> Reply {
        UhpSession::on_line_too_long(self, bytes)
    }

    fn on_end_of_input(&mut self) -> Reply {
        UhpSession::on_end_of_input(self)
    }

    fn may_drop(_: &SearchEnded) -> bool {
        false
    }
}

/// Run the UHP engine on stdin/stdout until `exit` or the end of stdin (after answering a `bestmove` under
/// way). One search worker, or `config.engine` of `engines`; logging, if any, must go to stderr.
pub fn run_stdio(config: UhpConfig, engines: Engines) -> std::io::Result<()> {
    let span = tracing::info_span!("uhp_session", transport = "stdio");
    let _enter = span.enter();
    let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: config.hash_mb as usize, clock_workers: 0 });
    let analysis = Analysis::with_engines(pool, None, engines);
    let mut stdout = std::io::stdout().lock();
    stdio::run(
        move |events: EventSender<SearchEnded>| UhpSession::new(analysis, config, move |e| events.send(e)),
        std::io::stdin(),
        &mut stdout,
    )
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{self, Receiver};

    use super::*;

    const WAIT: Duration = Duration::from_secs(30);

    fn session() -> (UhpSession, Receiver<SearchEnded>) {
        let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: 1, clock_workers: 0 });
        let (tx, rx) = mpsc::channel();
        let s = UhpSession::new(Analysis::local(pool), UhpConfig::default(), move |e| {
            let _ = tx.send(e);
        });
        (s, rx)
    }

    fn says(s: &mut UhpSession, line: &str, expected: &[&str]) {
        let reply = s.on_line(line);
        assert_eq!(reply.lines, expected, "{line}");
    }

    fn finish(s: &mut UhpSession, rx: &Receiver<SearchEnded>) -> Reply {
        let mut out = Reply::none();
        while s.is_thinking() {
            let e = rx.recv_timeout(WAIT).expect("the search reports within the deadline");
            let r = s.on_event(e);
            out.lines.extend(r.lines);
            out.quit |= r.quit;
        }
        out
    }

    #[test]
    fn times_and_numbers() {
        assert_eq!(parse_time("00:00:05"), Some(Duration::from_secs(5)));
        assert_eq!(parse_time("01:02:03"), Some(Duration::from_secs(3723)));
        assert_eq!(parse_time("00:00:00.25"), Some(Duration::from_millis(250)));
        for bad in ["", "5", "00:05", "00:60:00", "00:00:60", "a:b:c", "00:00:05:00", "-1:00:00", "00:00:1.x"] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
        assert_eq!(parse_time("99:00:00"), None);
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(grouped(123), "123");
        assert_eq!(rest_after_word("  play  wS1 -bA1 "), "wS1 -bA1");
    }

    #[test]
    fn quoted_input_never_breaks_the_line() {
        let (mut s, _rx) = session();
        for line in
            ["newgame Base;InProgress;White[3];wS1;bS\r\u{0}1 wS1-", "newgame Base\r+M", "newgame", "play w\rS1\u{0}"]
        {
            let out = s.on_line(line).lines;
            assert!(out.iter().all(|l| !l.chars().any(char::is_control)), "{line:?}: {out:?}");
        }
        let out = s.on_line("newgame Base;InProgress;White[3];wS1;bS\r1 wS1-").lines;
        assert!(out[0].starts_with("err Unable to load the GameString: move 2"), "{out:?}");
        assert!(out[0].contains("bS?1"), "{out:?}");
    }

    #[test]
    fn commands_and_errors() {
        let (mut s, _rx) = session();
        let g = s.greeting();
        assert_eq!(g[0], format!("id kibitz {}", env!("CARGO_PKG_VERSION")));
        assert_eq!(&g[1..], ["Mosquito;Ladybug;Pillbug", "ok"]);
        says(&mut s, "validmoves", &["err No game in progress. Try 'newgame' to start a new game.", "ok"]);
        says(&mut s, "play wS1", &["err No game in progress. Try 'newgame' to start a new game.", "ok"]);
        says(&mut s, "undo", &["err No game in progress. Try 'newgame' to start a new game.", "ok"]);
        says(&mut s, "hi", &["err Invalid command. Try 'help' to see a list of valid commands.", "ok"]);
        says(&mut s, "", &[]);
        says(&mut s, "newgame", &["Base;NotStarted;White[1]", "ok"]);
        says(&mut s, "validmoves", &["wS1;wB1;wG1;wA1", "ok"]);
        says(&mut s, "play wQ", &["invalidmove You can't play your Queen Bee on your first turn.", "ok"]);
        says(&mut s, "PLAY wS1", &["Base;InProgress;Black[1];wS1", "ok"]);
        says(&mut s, "pass", &["invalidmove You can't pass when you have valid moves.", "ok"]);
        let out = s.on_line("play xx1 wS1").lines;
        assert!(out[0].starts_with("err Unable to parse 'xx1 wS1'"), "{out:?}");
        says(&mut s, "undo 2", &["err Unable to undo 2 moves.", "ok"]);
        says(&mut s, "undo 0", &["err Unable to undo 0 moves.", "ok"]);
        says(&mut s, "undo x", &["err Unable to undo 'x' moves.", "ok"]);
        says(&mut s, "undo", &["Base;NotStarted;White[1]", "ok"]);
        says(
            &mut s,
            "newgame Base+Q",
            &[
                "err Unknown GameTypeString 'Base+Q'. Try Base, Base+M, Base+L, Base+P, Base+ML, Base+MP, Base+LP or \
             Base+MLP.",
                "ok",
            ],
        );
        let out = s.on_line("newgame Base;InProgress;White[2];wQ;bS1 wQ-").lines;
        assert!(out[0].starts_with("err Unable to load the GameString: move 1"), "{out:?}");
        assert_eq!(s.game().map(|g| g.game_string()), Some("Base;NotStarted;White[1]".to_string()));
        let out = s.on_line("perft 2").lines;
        assert_eq!(out.len(), 4, "{out:?}");
        for (line, nodes) in out.iter().zip(["1", "4", "96"]) {
            assert_eq!(line.split_whitespace().nth(2), Some(nodes), "{out:?}");
        }
        assert!(out[1].starts_with("perft(1)  =                4 in "), "{out:?}");
        assert_eq!(out[3], "ok");
        let out = s.on_line("perft 9").lines;
        assert!(out[0].starts_with("err Unable to calculate perft(9)"), "{out:?}");
        // Without its argument (or with an empty one) perft stops at the small default depth.
        let out = s.on_line("perft ").lines;
        assert_eq!(out.len(), DEFAULT_PERFT_DEPTH as usize + 2, "{out:?}");
        assert!(out[DEFAULT_PERFT_DEPTH as usize].starts_with(&format!("perft({DEFAULT_PERFT_DEPTH})")), "{out:?}");
        assert!(s.on_line("exit").quit);
    }

    #[test]
    fn options_lines() {
        let (mut s, _rx) = session();
        says(
            &mut s,
            "options",
            &[
                "Level;int;5;5;1;8",
                "Threads;int;1;1;1;64",
                "TranspositionTableSizeMB;int;64;64;1;4096",
                "MaxNodes;int;0;0;0;1000000000",
                "RepetitionRule;bool;False;False",
                "ok",
            ],
        );
        says(&mut s, "options get threads", &["Threads;int;1;1;1;64", "ok"]);
        says(&mut s, "options set Threads 2", &["Threads;int;2;1;1;64", "ok"]);
        says(&mut s, "options set RepetitionRule true", &["RepetitionRule;bool;True;False", "ok"]);
        says(&mut s, "options set TranspositionTableSizeMB 2", &["TranspositionTableSizeMB;int;2;64;1;4096", "ok"]);
        says(&mut s, "options set maxnodes 5000", &["MaxNodes;int;5000;0;0;1000000000", "ok"]);
        says(
            &mut s,
            "options set MaxNodes -1",
            &["err The value \"-1\" is not valid for the option \"MaxNodes\": an integer from 0 to 1000000000.", "ok"],
        );
        says(&mut s, "options get Nope", &["err The option \"Nope\" is not valid.", "ok"]);
        says(
            &mut s,
            "options set Level 9",
            &["err The value \"9\" is not valid for the option \"Level\": an integer from 1 to 8.", "ok"],
        );
        says(
            &mut s,
            "options set RepetitionRule maybe",
            &["err The value \"maybe\" is not valid for the option \"RepetitionRule\": True or False.", "ok"],
        );
        says(&mut s, "options frob", &["err Invalid command. Try 'help' to see a list of valid commands.", "ok"]);
        assert_eq!(
            s.config(),
            &UhpConfig { level: 5, threads: 2, hash_mb: 2, repetition: true, max_nodes: 5000, engine: None }
        );
    }

    #[test]
    fn bestmove_waits_for_lines_and_end_of_input() {
        let (mut s, rx) = session();
        says(&mut s, "bestmove", &["err No game in progress. Try 'newgame' to start a new game.", "ok"]);
        says(&mut s, "newgame Base+MLP", &["Base+MLP;NotStarted;White[1]", "ok"]);
        says(&mut s, "bestmove depth", &["err Invalid command. Try 'help' to see a list of valid commands.", "ok"]);
        says(&mut s, "bestmove depth x", &["err Unable to parse the depth 'x': a number of plies is needed.", "ok"]);
        says(&mut s, "bestmove time 5", &["err Unable to parse the time '5': hh:mm:ss is needed.", "ok"]);
        says(&mut s, "bestmove depth 2", &[]);
        says(&mut s, "validmoves", &[]);
        assert!(!s.on_end_of_input().quit);
        let out = finish(&mut s, &rx);
        assert!(out.quit);
        assert_eq!(out.lines.len(), 4, "{:?}", out.lines);
        let g = Hive::new(GameType::MLP);
        assert!(g.clone().play_checked(&out.lines[0]).is_ok(), "{:?}", out.lines);
        assert_eq!(out.lines[1], "ok");
        assert_eq!(out.lines[2], g.valid_moves_string());
    }

    /// A game Black won by surrounding White's Queen (self-play at depth 2).
    pub(crate) const FINISHED: &str = "Base;BlackWins;White[15];wA1;bA1 \\wA1;wA2 wA1-;bA2 \\bA1;wA3 /wA1;bA3 bA1/;\
        wQ wA2/;bQ /bA2;wA3 \\bA2;bA3 wQ/;wS1 /wA1;bB1 \\bA3;wB1 wA1\\;bB1 -bA3;wS1 -bQ;bB1 wQ;wB2 /wS1;\
        bB2 -bA3;wB2 wS1\\;bG1 \\bA3;wG1 /wS1;bG2 bA3\\;wG2 -wS1;bG3 -bG1;wG3 wA2\\;bG3 bB1\\;wG1 /wA3;bB1 /bB2";

    #[test]
    fn finished_games_refuse_play_and_search() {
        let (mut s, _rx) = session();
        says(&mut s, &format!("newgame {FINISHED}"), &[FINISHED, "ok"]);
        let over = ["err The game is over. Try 'newgame' to start a new game.", "ok"];
        for command in ["validmoves", "bestmove", "bestmove depth 3", "bestmove time 00:00:01", "pass", "play wQ"] {
            says(&mut s, command, &over);
        }
        assert!(!s.is_thinking());
        let out = s.on_line("undo").lines;
        assert!(out[0].starts_with("Base;InProgress;Black[14];"), "{out:?}");
        assert!(s.on_line("validmoves").lines[0].contains(';'));
    }

    #[test]
    fn odd_input_never_panics_and_always_ends_with_ok() {
        let (mut s, rx) = session();
        let lines = [
            "newgame Base+MLP",
            "play \u{0}",
            "play wS1 \u{2003}wS1-",
            "play \u{e9}\u{e9}\u{e9}",
            "play wS1 -",
            "play wS1 --",
            "play - wS1",
            "play wS1 wS1",
            "newgame ;;;;",
            "newgame Base;;",
            "newgame Base+MLP;InProgress;White[99999999999999999999];wS1",
            "undo 99999999999999999999999",
            "undo -0",
            "bestmove depth 99999999999",
            "bestmove time 999999:00:00",
            "bestmove time 00:00:00.0000000001",
            "options set Threads 99999999999",
            "options set Level -1",
            "perft -1",
            "\t\t",
            "INFO",
        ];
        for line in lines {
            let mut out = s.on_line(line).lines;
            if s.is_thinking() {
                out.extend(finish(&mut s, &rx).lines);
            }
            if line.trim().is_empty() {
                assert!(out.is_empty(), "{line:?}: {out:?}");
                continue;
            }
            assert_eq!(out.last().map(String::as_str), Some("ok"), "{line:?}: {out:?}");
        }
    }
}
