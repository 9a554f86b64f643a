//! The Checkers Protocol (the line protocol of English checkers engines and their
//! GUIs) as a transport-free session state machine, and [`run_stdio`], the
//! engine on stdin/stdout.
//!
//! The engine writes `READY` once, then answers the GUI's commands:
//!
//! | command | reply |
//! |---|---|
//! | `INIT` | nothing; a new game from the start position. Only once: a second `INIT` gets `ALERT`. |
//! | `NEWGAME [fen] [move ...]` | nothing; the FEN and every setup move are checked before anything changes |
//! | `MOVE <move>` | nothing; the move is played on the internal board |
//! | `GO [dontplaymove]` | `INFO ...` lines, then `BESTMOVE <move>` (played on the board unless `dontplaymove`) |
//! | `STOP` | the search answers `BESTMOVE` at once; nothing when not thinking |
//! | `GETPARAMETERS` | `PARAMETERS depth int time float hash int threads int nodes int` |
//! | `GETPARAMETER <name>` | `PARAMETER <name> <value>` |
//! | `SETPARAMETER <name> <value>` | nothing, or `ALERT` when the name or value is bad |
//! | `QUIT` | the engine exits, stopping a search |
//!
//! Conventions of this engine:
//!
//! * Commands are read case-insensitively (`go` = `GO`), tokens separated by any whitespace; empty lines are
//!   ignored. A line longer than 1 MiB is discarded and answered with `ALERT`.
//! * Commands before `INIT` are accepted: the engine is ready when it writes `READY`. The first `INIT`
//!   starts a new game from the start position, as the spec says it implies `NEWGAME`.
//! * Every invalid command (unknown word, bad FEN, illegal move, bad parameter, extra tokens) is answered
//!   with `ALERT <what was wrong>` naming the offending token, and changes nothing.
//! * Commands run in the order read (the spec: synchronously). While `GO` thinks, `STOP` and `QUIT` act at
//!   once (a `STOP` behind a waiting `GO` waits too: it is about that search); every other line waits (up to
//!   [`WaitingLines::MAX_LINES`]) and runs after `BESTMOVE`, in order. The end of input gives the search
//!   [`END_OF_INPUT_GRACE`] more; its `BESTMOVE` and the waiting lines come before the exit.
//! * `NEWGAME`'s first token is a PDN FEN (e.g. `B:W18,24,K27:B12,16`, ranges and `K` for kings allowed)
//!   unless it starts with a digit; a FEN in double quotes may hold spaces. The other tokens are setup moves. Moves are read as `9-13`, `9x13`, `11x18x25` or an
//!   unambiguous `11x25`; `BESTMOVE` writes `x` between all squares (`9x13`, `11x18x25`).
//! * `GO` in a position without a legal move answers `ALERT game over: ...` instead of `BESTMOVE`.
//! * `INFO nodes <N> eval <E> time <T> depth <D> pv <moves>`: `nodes` counts the nodes searched, `eval` is in
//!   centi-men (a man = 100) from the side to move's point of view, `time` in milliseconds since `GO`. A won
//!   position reports `eval 10000 - n` (n = plies to the win), a lost one `-(10000 - n)`.
//!
//! Parameters:
//!
//! | name | type | default | range | meaning |
//! |---|---|---|---|---|
//! | `depth` | int | 0 | 0-120 | search depth limit in plies; 0 = no limit |
//! | `time` | float | 1.0 | 0-86400 | thinking time per move in seconds; 0 = no limit |
//! | `hash` | int | 64 | 1-1024 | transposition table size in MiB (resizing clears it) |
//! | `threads` | int | 1 | 1-64 | search threads |
//! | `nodes` | int | 0 | 0-1000000000 | search node limit; 0 = no limit |
//!
//! With `depth`, `time` and `nodes` all at 0 the engine thinks until `STOP`. A node limit makes a search
//! repeatable whatever else the machine is doing (matches between engines); kibitz's Checkers Protocol client
//! sets it on any engine that declares an int parameter `nodes`.

use std::sync::Arc;
use std::time::Duration;

use crate::analysis::{Analysis, Request};
use crate::engines::Engines;
use crate::game::Game;
use crate::games::checkers::{Checkers, Move};
use crate::pool::{JobHandle, Pool, PoolConfig, Priority};
use crate::search::{Info, Limits, ScoreBound};

use super::session::{
    ErrorForm, SearchReport, SessionError, WaitingLines, describe_end, failure_message, notation_detail, score_number,
    shorten, start_search, stop_after,
};
pub use super::stdio::Reply;
use super::stdio::{self, EventSender, LineSession};

/// The deepest `depth` limit accepted.
pub const MAX_DEPTH: i32 = 120;
/// The longest `time` accepted, in seconds.
pub const MAX_TIME: f32 = 86_400.0;
/// The largest `hash` accepted, in MiB.
pub const MAX_HASH_MB: i32 = 1024;
/// The most `threads` accepted.
pub const MAX_THREADS: i32 = 64;
/// The largest `nodes` limit accepted.
pub const MAX_NODES: i32 = 1_000_000_000;
/// How long a search may go on once the input has ended, before it answers with what it has.
pub const END_OF_INPUT_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The parameters and their Checkers Protocol types, in the order `GETPARAMETERS` lists them.
pub const PARAMETERS: [(&str, &str); 5] =
    [("depth", "int"), ("time", "float"), ("hash", "int"), ("threads", "int"), ("nodes", "int")];

/// The engine's settings: the parameters' values.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckersConfig {
    /// Search depth limit in plies; 0 = no limit.
    pub depth: u32,
    /// Thinking time per move in seconds; 0 = no limit.
    pub time: f32,
    /// Transposition table size in MiB.
    pub hash_mb: u32,
    /// Search threads.
    pub threads: u32,
    /// Search node limit; 0 = no limit.
    pub nodes: u32,
    /// Search with this external engine of the engines file instead of kibitz's own (`-engine`).
    pub engine: Option<String>,
}

impl Default for CheckersConfig {
    fn default() -> Self {
        CheckersConfig { depth: 0, time: 1.0, hash_mb: 64, threads: 1, nodes: 0, engine: None }
    }
}

/// A value that cannot be given to a parameter.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParameterError {
    #[error("unknown parameter `{0}` (known: depth, time, hash, threads, nodes)")]
    Unknown(String),
    #[error("`{value}` is not a valid {kind} for `{name}`")]
    Type { name: &'static str, value: String, kind: &'static str },
    #[error("`{value}` is out of range for `{name}` ({range})")]
    Range { name: &'static str, value: String, range: &'static str },
}

impl CheckersConfig {
    /// The value of a parameter as `PARAMETER` writes it.
    pub fn get(&self, name: &str) -> Result<String, ParameterError> {
        match canonical_name(name)? {
            "depth" => Ok(self.depth.to_string()),
            "time" => Ok(format!("{:?}", self.time)),
            "hash" => Ok(self.hash_mb.to_string()),
            "nodes" => Ok(self.nodes.to_string()),
            _ => Ok(self.threads.to_string()),
        }
    }

    /// Set a parameter from its text, checking its type and range; on error nothing changes.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), ParameterError> {
        let name = canonical_name(name)?;
        match name {
            "depth" => self.depth = parse_int(name, value, 0, MAX_DEPTH, "0-120, 0 = no limit")? as u32,
            "time" => self.time = parse_float(name, value, 0.0, MAX_TIME, "0-86400 seconds, 0 = no limit")?,
            "hash" => self.hash_mb = parse_int(name, value, 1, MAX_HASH_MB, "1-1024 MiB")? as u32,
            "nodes" => self.nodes = parse_int(name, value, 0, MAX_NODES, "0-1000000000, 0 = no limit")? as u32,
            _ => self.threads = parse_int(name, value, 1, MAX_THREADS, "1-64")? as u32,
        }
        Ok(())
    }

    /// Check every value's range.
    pub fn validate(&self) -> Result<(), ParameterError> {
        let mut copy = self.clone();
        for (name, _) in PARAMETERS {
            let value = self.get(name)?;
            copy.set(name, &value)?;
        }
        Ok(())
    }

    fn limits(&self) -> Limits {
        let depth = (self.depth > 0).then_some(self.depth);
        // Only 0 means no time limit: a positive time too small for a millisecond is one millisecond (it was
        // rounded to zero and searched without end). The answer comes within the time (found by an audit: it
        // came a few milliseconds after).
        let movetime = (self.time > 0.0)
            .then(|| crate::search::answer_within(Duration::try_from_secs_f32(self.time).unwrap_or(Duration::ZERO)));
        let nodes = (self.nodes > 0).then_some(u64::from(self.nodes));
        if depth.is_none() && movetime.is_none() && nodes.is_none() {
            Limits::infinite()
        } else {
            Limits { depth, movetime, nodes, ..Limits::default() }
        }
    }
}

fn canonical_name(name: &str) -> Result<&'static str, ParameterError> {
    PARAMETERS
        .iter()
        .map(|&(n, _)| n)
        .find(|n| n.eq_ignore_ascii_case(name))
        .ok_or_else(|| ParameterError::Unknown(shorten(name)))
}

fn parse_int(name: &'static str, value: &str, lo: i32, hi: i32, range: &'static str) -> Result<i32, ParameterError> {
    let v: i32 = value.parse().map_err(|_| ParameterError::Type { name, value: shorten(value), kind: "int" })?;
    if (lo..=hi).contains(&v) { Ok(v) } else { Err(ParameterError::Range { name, value: shorten(value), range }) }
}

fn parse_float(name: &'static str, value: &str, lo: f32, hi: f32, range: &'static str) -> Result<f32, ParameterError> {
    let v: f32 = value.parse().map_err(|_| ParameterError::Type { name, value: shorten(value), kind: "float" })?;
    // A number too small for a float (`1e-50`) is not 0 (which means no limit for `time`): the smallest
    // positive float instead; -0 is 0.
    let written_nonzero = value.bytes().take_while(|b| !matches!(b, b'e' | b'E')).any(|b| matches!(b, b'1'..=b'9'));
    let v = if v == 0.0 && written_nonzero && !value.starts_with('-') {
        f32::MIN_POSITIVE
    } else if v == 0.0 {
        0.0
    } else {
        v
    };
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(ParameterError::Range { name, value: shorten(value), range })
    }
}

/// How many of NEWGAME's tokens make its position (0: none, start from the standard position) and the setup
/// moves after them. Moves start with a digit; anything else starts a FEN, which may be quoted and then
/// spread over several tokens (`"B:W21, 22:B1"`).
fn split_position<'a, 'b>(args: &'a [&'b str]) -> (usize, &'a [&'b str]) {
    let Some(first) = args.first() else { return (0, args) };
    if first.starts_with(|c: char| c.is_ascii_digit()) {
        return (0, args);
    }
    let mut n = 1;
    if first.starts_with('"') && (first.len() == 1 || !first.ends_with('"')) {
        // A quoted FEN runs to the token that closes the quote (or to the end).
        n = args[1..].iter().position(|t| t.ends_with('"')).map_or(args.len(), |j| j + 2);
    }
    (n, &args[n..])
}

/// The Checkers Protocol's error form: `ALERT <text>`.
const ERRORS: ErrorForm = ErrorForm { command: "ALERT", invalid_move: "ALERT" };

fn alert(message: impl Into<String>) -> Reply {
    ERRORS.reply(&SessionError::command(message))
}

/// The `INFO` line for a search report: `INFO nodes N eval E time T depth D pv ...`.
pub fn info_line(info: &Info<Move>) -> String {
    let mut line = format!(
        "INFO nodes {} eval {} time {} depth {}",
        info.nodes,
        score_number(info.score),
        info.time_ms,
        info.depth
    );
    if !info.pv.is_empty() {
        line.push_str(" pv");
        for &m in &info.pv {
            line.push(' ');
            line.push_str(&Checkers::move_to_x(m));
        }
    }
    line
}

/// A search under way.
struct Thinking {
    job: JobHandle,
    /// Play the best move on the internal board (`GO` without `dontplaymove`).
    play: bool,
}

/// One Checkers Protocol session: the internal board, the parameters and the search under way.
pub struct CheckersSession {
    analysis: Analysis,
    notify: Arc<dyn Fn(SearchReport<Move>) + Send + Sync>,
    config: CheckersConfig,
    game: Checkers,
    initialized: bool,
    thinking: Option<Thinking>,
    /// Lines that arrived while thinking (but `STOP` and `QUIT`): run in order after `BESTMOVE`, as the spec's
    /// commands are processed one after another.
    waiting: WaitingLines,
    /// The input has ended: quit once the search has answered and the waiting lines have run.
    input_ended: bool,
}

impl CheckersSession {
    /// A session searching on `pool`; search events are handed to `notify` (on a worker thread), which must
    /// bring them back to [`CheckersSession::on_event`]. The pool's table should already have
    /// `config.hash_mb` MiB.
    pub fn new(
        analysis: Analysis,
        config: CheckersConfig,
        notify: impl Fn(SearchReport<Move>) + Send + Sync + 'static,
    ) -> Self {
        CheckersSession {
            analysis,
            notify: Arc::new(notify),
            config,
            game: Checkers::start(),
            initialized: false,
            thinking: None,
            waiting: WaitingLines::default(),
            input_ended: false,
        }
    }

    /// The greeting, written once at start.
    pub fn greeting(&self) -> Vec<String> {
        vec!["READY".to_string()]
    }

    /// The internal board.
    pub fn game(&self) -> &Checkers {
        &self.game
    }

    pub fn config(&self) -> &CheckersConfig {
        &self.config
    }

    pub fn is_thinking(&self) -> bool {
        self.thinking.is_some()
    }

    /// One command line. While thinking only `STOP` and `QUIT` run at once; the others wait for `BESTMOVE`.
    pub fn on_line(&mut self, line: &str) -> Reply {
        let mut tokens = line.split_whitespace();
        let Some(command) = tokens.next() else { return Reply::none() };
        let args: Vec<&str> = tokens.collect();
        let word = command.to_ascii_uppercase();
        tracing::debug!(command = %word, args = args.len(), "command");
        // A STOP behind a waiting GO is about the search that GO starts (a host may send STOP, MOVE, GO, STOP at
        // once, as the Hub audit found for Hub's GUIs).
        let now = match word.as_str() {
            "QUIT" => true,
            "STOP" => !self.waiting.holds_command("GO"),
            _ => false,
        };
        if self.thinking.is_some() && !now {
            self.waiting.push(line);
            return Reply::none();
        }
        match word.as_str() {
            "INIT" => self.init(&args),
            "NEWGAME" => self.newgame(&args),
            "MOVE" => self.play_move(&args),
            "GO" => self.go(&args),
            "STOP" => self.stop(&args),
            "GETPARAMETERS" => self.get_parameters(&args),
            "GETPARAMETER" => self.get_parameter(&args),
            "SETPARAMETER" => self.set_parameter(&args),
            "QUIT" => Self::no_args("QUIT", &args).unwrap_or_else(|| self.quit()),
            _ => alert(format!("unknown command `{}`", shorten(command))),
        }
    }

    /// One search event; after the search's end, the lines that waited for it.
    pub fn on_event(&mut self, event: SearchReport<Move>) -> Reply {
        let ended = matches!(event, SearchReport::End(_)) && self.thinking.is_some();
        let mut reply = self.search_event(event);
        if !ended {
            return reply;
        }
        while self.thinking.is_none() && !reply.quit {
            let Some(line) = self.waiting.pop() else { break };
            let next = self.on_line(&line);
            reply.lines.extend(next.lines);
            reply.quit |= next.quit;
        }
        if self.thinking.is_some() && !reply.quit {
            // A waiting GO has started a search: the lines behind it meet it as if they came now (a STOP stops
            // it, the rest wait again, in order).
            let rest: Vec<String> = std::iter::from_fn(|| self.waiting.pop()).collect();
            for line in rest {
                let next = self.on_line(&line);
                reply.lines.extend(next.lines);
                reply.quit |= next.quit;
            }
        }
        if self.thinking.is_none()
            && let Some(e) = self.waiting.take_dropped()
        {
            reply.lines.push(ERRORS.line(&e));
        }
        if self.input_ended
            && let Some(t) = &self.thinking
        {
            // A GO that waited behind the end of input: it too answers within the grace, then the engine quits.
            stop_after(&t.job, END_OF_INPUT_GRACE, "kibitz-checkers-eof");
        }
        reply.quit |= self.input_ended && self.thinking.is_none();
        reply
    }

    fn search_event(&mut self, event: SearchReport<Move>) -> Reply {
        match event {
            SearchReport::Info(info) => {
                let report = self.thinking.is_some()
                    && info.bound == ScoreBound::Exact
                    && info.multipv == 1
                    && info.currmove.is_none();
                if report { Reply::line(info_line(&info)) } else { Reply::none() }
            }
            SearchReport::End(Err(failure)) => match self.thinking.take() {
                Some(_) => alert(failure_message(&failure)),
                None => Reply::none(),
            },
            SearchReport::End(Ok(done)) => {
                let Some(thinking) = self.thinking.take() else {
                    return Reply::none();
                };
                drop(thinking.job);
                let Some(best) = done.best else {
                    let end = done.game_end.unwrap_or_else(|| self.game.no_move_end());
                    return alert(format!("game over: {}", describe_end::<Checkers>(end)));
                };
                if !self.game.legal_moves().contains(&best) {
                    // Cannot happen: the board does not change while thinking.
                    return alert("internal error: the search answered a move that is not legal here");
                }
                let text = Checkers::move_to_x(best);
                if thinking.play {
                    self.game.make(best);
                }
                Reply::line(format!("BESTMOVE {text}"))
            }
        }
    }

    /// The reply to a discarded over-long input line.
    pub fn on_line_too_long(&mut self, bytes: usize) -> Reply {
        alert(format!("line of {bytes} bytes is longer than the limit of {} bytes, ignored", stdio::MAX_LINE))
    }

    fn no_args(command: &str, args: &[&str]) -> Option<Reply> {
        args.first().map(|extra| alert(format!("{command} takes no argument, got `{}`", shorten(extra))))
    }

    fn init(&mut self, args: &[&str]) -> Reply {
        if let Some(r) = Self::no_args("INIT", args) {
            return r;
        }
        if self.initialized {
            return alert("INIT was already received; send NEWGAME for a new game");
        }
        self.initialized = true;
        self.game = Checkers::start();
        Reply::none()
    }

    fn newgame(&mut self, args: &[&str]) -> Reply {
        let (fen_tokens, moves) = split_position(args);
        let mut game = if fen_tokens == 0 {
            Checkers::start()
        } else {
            let fen = args[..fen_tokens].concat();
            match Checkers::from_fen(fen.trim_matches('"')) {
                Ok(g) => g,
                Err(e) => return alert(format!("NEWGAME: bad position `{}`: {}", shorten(&e.token), e.message)),
            }
        };
        for (i, text) in moves.iter().enumerate() {
            match game.parse_move_text(text) {
                Ok(m) => game.make(m),
                Err(e) => {
                    return alert(format!(
                        "NEWGAME: setup move {} `{}`: {} (position {})",
                        i + 1,
                        shorten(text),
                        notation_detail(&e, text),
                        game.to_fen()
                    ));
                }
            }
        }
        self.game = game;
        self.analysis.pool().clear_hash();
        Reply::none()
    }

    fn play_move(&mut self, args: &[&str]) -> Reply {
        let text = match args {
            [text] => text,
            [] => return alert("MOVE needs a move, e.g. MOVE 9-13"),
            [_, extra, ..] => return alert(format!("MOVE takes one move, got also `{}`", shorten(extra))),
        };
        match self.game.parse_move_text(text) {
            Ok(m) => {
                self.game.make(m);
                Reply::none()
            }
            Err(e) => alert(format!(
                "MOVE `{}`: {} (position {})",
                shorten(text),
                notation_detail(&e, text),
                self.game.to_fen()
            )),
        }
    }

    fn go(&mut self, args: &[&str]) -> Reply {
        let play = match args {
            [] => true,
            [flag] if flag.eq_ignore_ascii_case("dontplaymove") => false,
            [flag] => return alert(format!("GO: unknown option `{}` (known: dontplaymove)", shorten(flag))),
            [_, extra, ..] => return alert(format!("GO takes at most one option, got also `{}`", shorten(extra))),
        };
        if self.game.legal_moves().is_empty() {
            return alert(format!("game over: {}", describe_end::<Checkers>(self.game.no_move_end())));
        }
        let request = Request::new(self.game.clone(), self.config.limits())
            .priority(Priority::High)
            .threads(self.config.threads.max(1) as usize);
        let notify = Arc::clone(&self.notify);
        match start_search(&self.analysis, self.config.engine.as_deref(), request, move |e| notify(e)) {
            Ok(job) => {
                self.thinking = Some(Thinking { job, play });
                Reply::none()
            }
            Err(e) => alert(format!("GO: cannot search now: {e}")),
        }
    }

    fn stop(&mut self, args: &[&str]) -> Reply {
        if let Some(r) = Self::no_args("STOP", args) {
            return r;
        }
        if let Some(thinking) = &self.thinking {
            thinking.job.stop();
        }
        Reply::none()
    }

    fn get_parameters(&self, args: &[&str]) -> Reply {
        if let Some(r) = Self::no_args("GETPARAMETERS", args) {
            return r;
        }
        let mut line = String::from("PARAMETERS");
        for (name, kind) in PARAMETERS {
            line.push(' ');
            line.push_str(name);
            line.push(' ');
            line.push_str(kind);
        }
        Reply::line(line)
    }

    fn get_parameter(&self, args: &[&str]) -> Reply {
        let name = match args {
            [name] => name,
            [] => return alert("GETPARAMETER needs a parameter name"),
            [_, extra, ..] => return alert(format!("GETPARAMETER takes one name, got also `{}`", shorten(extra))),
        };
        match self.config.get(name) {
            Ok(value) => Reply::line(format!("PARAMETER {} {value}", name.to_ascii_lowercase())),
            Err(e) => alert(format!("GETPARAMETER: {e}")),
        }
    }

    fn set_parameter(&mut self, args: &[&str]) -> Reply {
        let (name, value) = match args {
            [name, value] => (name, value),
            [] | [_] => return alert("SETPARAMETER needs a name and a value"),
            [_, _, extra, ..] => {
                return alert(format!("SETPARAMETER takes a name and a value, got also `{}`", shorten(extra)));
            }
        };
        let mut config = self.config.clone();
        if let Err(e) = config.set(name, value) {
            return alert(format!("SETPARAMETER: {e}"));
        }
        if config.hash_mb != self.config.hash_mb {
            self.analysis.pool().set_hash_mb(config.hash_mb as usize);
        }
        self.config = config;
        Reply::none()
    }

    /// The input ended: a search under way is given [`END_OF_INPUT_GRACE`] more and answers (the spec: `GO`
    /// is not done until it has a best move), the waiting lines run, then the engine quits.
    pub fn on_end_of_input(&mut self) -> Reply {
        self.input_ended = true;
        match &self.thinking {
            Some(t) => {
                stop_after(&t.job, END_OF_INPUT_GRACE, "kibitz-checkers-eof");
                Reply::none()
            }
            None => self.quit(),
        }
    }

    fn quit(&mut self) -> Reply {
        if let Some(thinking) = self.thinking.take() {
            thinking.job.cancel();
        }
        Reply::quit(Vec::new())
    }
}

impl LineSession for CheckersSession {
    type Event = SearchReport<Move>;

    fn greeting(&mut self) -> Vec<String> {
        CheckersSession::greeting(self)
    }

    fn on_line(&mut self, line: &str) -> Reply {
        CheckersSession::on_line(self, line)
    }

    fn on_event(&mut self, event: SearchReport<Move>) -> Reply {
        CheckersSession::on_event(self, event)
    }

    fn on_line_too_long(&mut self, bytes: usize) -> Reply {
        CheckersSession::on_line_too_long(self, bytes)
    }

    fn on_end_of_input(&mut self) -> Reply {
        CheckersSession::on_end_of_input(self)
    }

    fn may_drop(event: &SearchReport<Move>) -> bool {
        matches!(event, SearchReport::Info(_))
    }
}

/// Run the Checkers Protocol engine on stdin/stdout with the given starting parameters (checked first) until
/// `QUIT` or the end of stdin. One search worker, or `config.engine` of `engines`; logging, if any, must go to stderr.
pub fn run_stdio(config: CheckersConfig, engines: Engines) -> std::io::Result<()> {
    config.validate().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let span = tracing::info_span!("checkers_session", transport = "stdio");
    let _enter = span.enter();
    let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: config.hash_mb as usize, clock_workers: 0 });
    let analysis = Analysis::with_engines(pool, None, engines);
    let mut stdout = std::io::stdout().lock();
    stdio::run(
        move |events: EventSender<SearchReport<Move>>| CheckersSession::new(analysis, config, move |e| events.send(e)),
        std::io::stdin(),
        &mut stdout,
    )
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{self, Receiver};

    use super::super::session::MATE_VALUE;
    use super::*;
    use crate::search::{Done, Score};

    const WAIT: Duration = Duration::from_secs(20);

    /// A session on its own one-worker pool, searching to depth 4 (no time limit); its events arrive on the
    /// receiver and are fed back by hand.
    fn session() -> (CheckersSession, Receiver<SearchReport<Move>>) {
        let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: 1, clock_workers: 0 });
        let (tx, rx) = mpsc::channel();
        let config = CheckersConfig { depth: 4, time: 0.0, hash_mb: 1, threads: 1, nodes: 0, engine: None };
        let s = CheckersSession::new(Analysis::local(pool), config, move |e| {
            let _ = tx.send(e);
        });
        (s, rx)
    }

    fn lines(s: &mut CheckersSession, line: &str) -> Vec<String> {
        let reply = s.on_line(line);
        assert!(!reply.quit, "{line} quits");
        reply.lines
    }

    fn silent(s: &mut CheckersSession, line: &str) {
        assert_eq!(lines(s, line), Vec::<String>::new(), "{line}");
    }

    fn alerts(s: &mut CheckersSession, line: &str, needle: &str) {
        let out = lines(s, line);
        assert_eq!(out.len(), 1, "{line}: {out:?}");
        assert!(out[0].starts_with("ALERT ") && out[0].contains(needle), "{line}: {out:?} lacks {needle}");
    }

    /// Feed events back until the search ends; every line it produced.
    fn finish(s: &mut CheckersSession, rx: &Receiver<SearchReport<Move>>) -> Vec<String> {
        let mut out = Vec::new();
        while s.is_thinking() {
            let e = rx.recv_timeout(WAIT).expect("the search reports within the deadline");
            out.extend(s.on_event(e).lines);
        }
        out
    }

    fn bestmove(out: &[String]) -> &str {
        let last = out.last().expect("a reply");
        last.strip_prefix("BESTMOVE ").unwrap_or_else(|| panic!("no BESTMOVE: {out:?}"))
    }

    #[test]
    fn ready_and_parameters() {
        let (mut s, _rx) = session();
        assert_eq!(s.greeting(), vec!["READY"]);
        silent(&mut s, "INIT");
        assert_eq!(
            lines(&mut s, "GETPARAMETERS"),
            vec!["PARAMETERS depth int time float hash int threads int nodes int"]
        );
        assert_eq!(lines(&mut s, "GETPARAMETER depth"), vec!["PARAMETER depth 4"]);
        assert_eq!(lines(&mut s, "  getparameter   TIME  "), vec!["PARAMETER time 0.0"]);
        silent(&mut s, "SETPARAMETER time 2.5");
        silent(&mut s, "SETPARAMETER hash 2");
        silent(&mut s, "SETPARAMETER threads 2");
        silent(&mut s, "SETPARAMETER depth 0");
        silent(&mut s, "SETPARAMETER Nodes 5000");
        assert_eq!(lines(&mut s, "GETPARAMETER time"), vec!["PARAMETER time 2.5"]);
        assert_eq!(lines(&mut s, "GETPARAMETER nodes"), vec!["PARAMETER nodes 5000"]);
        assert_eq!(
            s.config(),
            &CheckersConfig { depth: 0, time: 2.5, hash_mb: 2, threads: 2, nodes: 5000, engine: None }
        );
        assert_eq!(CheckersConfig::default().validate(), Ok(()));
    }

    #[test]
    fn bad_parameters_change_nothing() {
        let (mut s, _rx) = session();
        let before = s.config().clone();
        alerts(&mut s, "SETPARAMETER speed 5", "`speed`");
        alerts(&mut s, "SETPARAMETER nodes -1", "`-1`");
        alerts(&mut s, "SETPARAMETER nodes 1000000001", "`1000000001`");
        alerts(&mut s, "SETPARAMETER depth five", "`five`");
        alerts(&mut s, "SETPARAMETER depth 2.0", "`2.0`");
        alerts(&mut s, "SETPARAMETER depth -1", "`-1`");
        alerts(&mut s, "SETPARAMETER depth 99999999999", "`99999999999`");
        alerts(&mut s, "SETPARAMETER time -0.5", "`-0.5`");
        alerts(&mut s, "SETPARAMETER time inf", "`inf`");
        alerts(&mut s, "SETPARAMETER time NaN", "`NaN`");
        alerts(&mut s, "SETPARAMETER hash 0", "`0`");
        alerts(&mut s, "SETPARAMETER hash 4096", "`4096`");
        alerts(&mut s, "SETPARAMETER threads 0", "`0`");
        alerts(&mut s, "SETPARAMETER threads", "name and a value");
        alerts(&mut s, "SETPARAMETER threads 1 2", "`2`");
        alerts(&mut s, "GETPARAMETER", "name");
        alerts(&mut s, "GETPARAMETER bogus", "`bogus`");
        assert_eq!(s.config(), &before);
        // Found by an audit: `1e-50` read as 0, which is no limit (a GO that never answered); `-0` was kept
        // as -0.0. The first is the least positive time (1 ms to the search), the second 0.
        silent(&mut s, "SETPARAMETER time 1e-50");
        assert!(s.config().time > 0.0);
        silent(&mut s, "SETPARAMETER time -0");
        assert_eq!(lines(&mut s, "GETPARAMETER time"), ["PARAMETER time 0.0"]);
        silent(&mut s, "SETPARAMETER time 0e5");
        assert_eq!(lines(&mut s, "GETPARAMETER time"), ["PARAMETER time 0.0"]);
    }

    #[test]
    fn go_plays_the_move_and_dontplaymove_does_not() {
        let (mut s, rx) = session();
        silent(&mut s, "INIT");
        let start = s.game().to_fen();
        silent(&mut s, "GO dontplaymove");
        assert!(s.is_thinking());
        let out = finish(&mut s, &rx);
        let m = bestmove(&out).to_string();
        assert!(Checkers::start().parse_move_text(&m).is_ok(), "{m}");
        assert!(m.contains('x') && !m.contains('-'), "written with x: {m}");
        assert_eq!(s.game().to_fen(), start, "dontplaymove leaves the board");
        assert!(out[..out.len() - 1].iter().all(|l| l.starts_with("INFO nodes ")), "{out:?}");

        silent(&mut s, "GO");
        let out = finish(&mut s, &rx);
        let m = bestmove(&out).to_string();
        let mut expected = Checkers::start();
        let mv = expected.parse_move_text(&m).expect("legal");
        expected.make(mv);
        assert_eq!(s.game().to_fen(), expected.to_fen(), "GO plays {m}");
    }

    #[test]
    fn moves_and_newgame() {
        let (mut s, _rx) = session();
        silent(&mut s, "INIT");
        silent(&mut s, "MOVE 9-13");
        silent(&mut s, "MOVE 22x18");
        let mut g = Checkers::start();
        for m in ["9-13", "22-18"] {
            let mv = g.parse_move_text(m).expect("legal");
            g.make(mv);
        }
        assert_eq!(s.game().to_fen(), g.to_fen());
        silent(&mut s, "NEWGAME");
        assert_eq!(s.game().to_fen(), Checkers::start().to_fen());
        silent(&mut s, "NEWGAME \"B:W18,27,32:B14,1\" 14x23");
        assert_eq!(s.game().to_fen(), "W:W27,32:B1,23");
        silent(&mut s, "NEWGAME 11-15 23-19 8-11");
        assert_eq!(s.game().plies(), 3);
        silent(&mut s, "NEWGAME \"W:W18, 27 ,32:B1,14\" 18x9");
        assert_eq!(s.game().to_fen(), "B:W9,27,32:B1");
        alerts(&mut s, "NEWGAME \"W:W18 27", "bad position");
        alerts(&mut s, "NEWGAME \"", "bad position");
        silent(&mut s, "NEWGAME W:W5:B1");
        alerts(&mut s, "GO", "game over: black wins (no legal move)");
        assert_eq!(split_position(&["B:W1:B2", "9-13"]), (1, &["9-13"][..]));
        assert_eq!(split_position(&["\"B:W1,", "2:B3\"", "9-13"]), (2, &["9-13"][..]));
        assert_eq!(split_position(&["9-13"]), (0, &["9-13"][..]));
    }

    #[test]
    fn bad_lines_change_nothing() {
        let (mut s, _rx) = session();
        silent(&mut s, "INIT");
        silent(&mut s, "MOVE 11-15");
        let before = s.game().to_fen();
        alerts(&mut s, "FROB 1 2", "`FROB`");
        alerts(&mut s, "MOVE 9-13", "`9-13`: illegal move: no white piece on square 9");
        alerts(&mut s, "MOVE 22-15", "`22-15`: illegal move");
        alerts(&mut s, "MOVE 15-19", "no white piece");
        alerts(&mut s, "MOVE", "needs a move");
        alerts(&mut s, "MOVE 23-19 24-20", "`24-20`");
        alerts(&mut s, "MOVE 99-100", "99");
        alerts(&mut s, "NEWGAME B:W21-33:B1-12", "33");
        alerts(&mut s, "NEWGAME X:W21-32:B1-12", "`X`");
        alerts(&mut s, "NEWGAME B:W21-32:B1-12 9-13 9-14", "setup move 2 `9-14`");
        alerts(&mut s, "NEWGAME 9-13 zz", "`zz`");
        alerts(&mut s, "MOVE 23-1a", "MOVE `23-1a`: not a square number `1a`");
        alerts(&mut s, "GO now", "`now`");
        alerts(&mut s, "GO dontplaymove twice", "`twice`");
        alerts(&mut s, "STOP it", "`it`");
        alerts(&mut s, "INIT", "already");
        alerts(&mut s, "GETPARAMETERS all", "`all`");
        assert_eq!(s.game().to_fen(), before);
        assert!(!s.is_thinking());
        let long = "Y".repeat(500);
        let out = lines(&mut s, &long);
        assert!(out[0].len() < 120 && out[0].ends_with("...`"), "{out:?}");
        assert!(s.on_line_too_long(2 << 20).lines[0].starts_with("ALERT line of 2097152 bytes"));
        assert_eq!(
            lines(&mut s, "GETPARAMETER junk\u{7}\u{e9}"),
            vec!["ALERT GETPARAMETER: unknown parameter `junk??` (known: depth, time, hash, threads, nodes)"]
        );
        silent(&mut s, "");
        silent(&mut s, "   \t ");
    }

    #[test]
    fn commands_before_init_are_accepted_and_init_starts_a_new_game() {
        let (mut s, _rx) = session();
        silent(&mut s, "MOVE 9-13");
        assert_eq!(s.game().plies(), 1);
        silent(&mut s, "init");
        assert_eq!(s.game().plies(), 0);
        alerts(&mut s, "INIT", "already");
    }

    /// Found by an audit: commands sent after STOP and before BESTMOVE (MOVE, GO) were refused and lost, and a
    /// host waiting for the second BESTMOVE waited for ever. The spec's commands are processed one after another:
    /// while thinking only STOP and QUIT run at once, the others after BESTMOVE, in order.
    #[test]
    fn while_thinking_commands_wait_for_bestmove_and_run_in_order() {
        let (mut s, rx) = session();
        silent(&mut s, "SETPARAMETER depth 0");
        silent(&mut s, "SETPARAMETER time 0");
        silent(&mut s, "GO");
        let before = s.game().to_fen();
        std::thread::sleep(Duration::from_millis(20));
        for line in ["STOP", "GETPARAMETER depth", "SETPARAMETER depth 2", "GETPARAMETER depth", "GO dontplaymove"] {
            silent(&mut s, line);
        }
        let out = finish(&mut s, &rx);
        let first = out.iter().position(|l| l.starts_with("BESTMOVE ")).expect("the first answer");
        let m = out[first]["BESTMOVE ".len()..].to_string();
        assert_eq!(out[first + 1..first + 3], ["PARAMETER depth 0", "PARAMETER depth 2"], "{out:?}");
        // The waiting GO ran after them, at depth 2, on the board after the first answer.
        let second = bestmove(&out).to_string();
        let mut g = Checkers::from_fen(&before).expect("fen");
        let mv = g.parse_move_text(&m).expect("legal");
        g.make(mv);
        assert_eq!(s.game().to_fen(), g.to_fen());
        assert!(g.parse_move_text(&second).is_ok(), "{second}");
        silent(&mut s, "STOP");
        assert!(rx.try_recv().is_err(), "no search after BESTMOVE");
        // STOP, MOVE, GO, STOP at once with no limit: the second STOP stops the search the waiting GO starts.
        silent(&mut s, "SETPARAMETER depth 0");
        silent(&mut s, "GO");
        for line in ["STOP", "GO dontplaymove", "STOP"] {
            silent(&mut s, line);
        }
        let out = finish(&mut s, &rx);
        assert_eq!(out.iter().filter(|l| l.starts_with("BESTMOVE ")).count(), 2, "{out:?}");
    }

    #[test]
    fn quit_ends_the_session_even_while_thinking() {
        let (mut s, _rx) = session();
        assert!(s.on_line("QUIT").quit);
        alerts(&mut s, "QUIT now", "takes no argument");
        let (mut s, _rx) = session();
        silent(&mut s, "SETPARAMETER depth 0");
        silent(&mut s, "GO");
        assert!(s.on_line("quit").quit);
        assert!(!s.is_thinking());
    }

    /// Found by an audit: the end of input threw a running search's answer away, even after STOP (a host
    /// piping a file of commands got no move). The search answers first (given a second more), then the
    /// waiting lines run, then the engine quits.
    #[test]
    fn the_end_of_input_answers_the_search_first() {
        let (mut s, rx) = session();
        silent(&mut s, "SETPARAMETER depth 0");
        silent(&mut s, "SETPARAMETER time 0");
        silent(&mut s, "GO");
        silent(&mut s, "GETPARAMETER time");
        silent(&mut s, "STOP");
        silent(&mut s, "GO");
        let reply = LineSession::on_end_of_input(&mut s);
        assert!(!reply.quit, "{reply:?}");
        let mut out = Vec::new();
        loop {
            let reply = s.on_event(rx.recv_timeout(WAIT).expect("the search answers"));
            out.extend(reply.lines);
            if reply.quit {
                break;
            }
        }
        // The first answer, the waiting parameter, and the waiting GO's answer (no limit: stopped a second
        // after the end of input) before the exit.
        let best: Vec<usize> =
            out.iter().enumerate().filter(|(_, l)| l.starts_with("BESTMOVE ")).map(|(i, _)| i).collect();
        assert_eq!(best.len(), 2, "{out:?}");
        assert_eq!(out[best[0] + 1], "PARAMETER time 0.0", "{out:?}");
        assert_eq!(best[1], out.len() - 1, "{out:?}");
    }

    #[test]
    fn a_finished_game_answers_alert() {
        let (mut s, _rx) = session();
        silent(&mut s, "NEWGAME W:W18:B14");
        silent(&mut s, "MOVE 18x9");
        alerts(&mut s, "GO", "game over: white wins");
        assert!(!s.is_thinking());
        // A stray search report is ignored.
        let done = Done {
            best: None,
            ponder: None,
            lines: Vec::new(),
            depth: 0,
            seldepth: 0,
            nodes: 0,
            nps: 0,
            time_ms: 0,
            neval: 0,
            game_end: None,
        };
        assert_eq!(s.on_event(SearchReport::End(Ok(done))), Reply::none());
    }

    #[test]
    fn a_forced_win_is_found_and_reported_as_a_large_eval() {
        let (mut s, rx) = session();
        // Two kings against one: Black wins in a few moves.
        silent(&mut s, "NEWGAME B:WK29:BK19,K20");
        silent(&mut s, "SETPARAMETER depth 12");
        silent(&mut s, "GO");
        let out = finish(&mut s, &rx);
        let info = out.iter().rev().find(|l| l.starts_with("INFO")).expect("INFO");
        let eval: i32 = info.split_whitespace().nth(4).and_then(|e| e.parse().ok()).expect("eval");
        assert!(eval > MATE_VALUE - 100, "{info}");
        bestmove(&out);
    }

    #[test]
    fn eval_and_info_lines() {
        assert_eq!(score_number(Score::Cp(-35)), -35);
        assert_eq!(score_number(Score::Mate(7)), 9993);
        assert_eq!(score_number(Score::Mate(-4)), -9996);
        assert_eq!(score_number(Score::Mate(i32::MIN)), -(MATE_VALUE - 999));
        assert_eq!(score_number(Score::Cp(50_000)), MATE_VALUE - 1000);
        let g = Checkers::start();
        let pv = vec![g.parse_move_text("9-13").expect("legal")];
        let info = Info {
            depth: 3,
            seldepth: 5,
            multipv: 1,
            score: Score::Cp(12),
            bound: ScoreBound::Exact,
            nodes: 345,
            nps: 1000,
            time_ms: 17,
            pv,
            currmove: None,
            currmovenumber: None,
            neval: 10,
            hashfull: 0,
        };
        assert_eq!(info_line(&info), "INFO nodes 345 eval 12 time 17 depth 3 pv 9x13");
    }

    #[test]
    fn limits_follow_the_parameters() {
        let mut c = CheckersConfig::default();
        // The time is a limit the answer comes within: the search keeps a little of it back.
        assert_eq!(c.limits(), Limits::movetime(Duration::from_millis(975)));
        c.depth = 7;
        c.time = 0.0;
        assert_eq!(c.limits(), Limits::depth(7));
        c.depth = 0;
        assert_eq!(c.limits(), Limits::infinite());
        c.nodes = 5000;
        assert_eq!(c.limits(), Limits::nodes(5000));
        c.depth = 9;
        assert_eq!(c.limits(), Limits { depth: Some(9), nodes: Some(5000), ..Limits::default() });
        c.depth = 0;
        c.nodes = 0;
        c.time = -3.0;
        assert_eq!(c.limits(), Limits::infinite());
        assert!(c.validate().is_err());
        // A time too small for a millisecond is a millisecond, not no limit at all.
        for tiny in [1e-10, 1e-30, f32::MIN_POSITIVE] {
            c.time = tiny;
            assert_eq!(c.limits(), Limits::movetime(Duration::from_millis(1)), "{tiny}");
        }
    }
}
