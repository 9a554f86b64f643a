//! The Universal Chinese Chess Interface (UCCI, the protocol of ElephantEye and of the xiangqi GUIs built on
//! it) as a transport-free session state machine, and [`run_stdio`], the engine on stdin/stdout
//! (`kibitz-ucci`, `kibitz engine ucci`).
//!
//! | command | answer |
//! |---|---|
//! | `ucci` | `id name`, `id author`, one `option` line per option, `ucciok` |
//! | `isready` | `readyok` (at once, also while searching) |
//! | `setoption <name> [<value>]` | nothing (the options are below) |
//! | `position fen <fen>\|startpos [moves <m1> ...]` | nothing; every move is checked legal in turn; the banned moves are forgotten |
//! | `banmoves <m1> ...` | nothing; the next searches leave these root moves out |
//! | `go [ponder\|draw] [depth N \| depth infinite \| nodes N \| time T [movestogo M \| increment I] [opptime ...] \| infinite]` | `info` lines, then `bestmove <m> [ponder <m>] [draw\|resign]`, or `nobestmove` |
//! | `ponderhit [draw]` | the pondered move was played: the search goes on with the limits of `go ponder` |
//! | `stop` | the search answers with what it has |
//! | `probe [fen <fen>\|startpos] [moves ...]` | `pophash` and what the transposition table knows of that position (of the last search's root: its best move, and its score as a lower bound at the depth completed) |
//! | `quit` | `bye`; the engine exits |
//!
//! Moves are ICCS coordinates without the dash, lower case, ranks 0-9 from Red's side (`h2e2`); ICCS with a
//! dash (`H2-E2`) is read too. `info` lines carry `depth`, `score` (centi-units, a soldier is 100; a win in n
//! plies is `10000 - n`), `time` (milliseconds), `nodes`, `nps` and `pv`. Times in `go` are seconds unless the
//! option `usemillisec` is on, as the protocol says; `go` without a limit searches until `stop`.
//!
//! Conventions of this engine:
//!
//! * UCCI has no error reply: a line that cannot be carried out (an unknown command or option, a bad FEN,
//!   an illegal move) is answered `info string error: <what was wrong>`. A refused `position` leaves no
//!   position: the next `go` answers why and `nobestmove` rather than search a position the GUI does not have.
//! * Every `go` is answered. Parts of it that are not understood (an unknown word, a number that is not one)
//!   are left out with an `info string error:` line and the rest searches; a number too large is taken as the
//!   largest, a decimal count by its whole part, and `movestogo 0` as no count.
//! * `go draw` (the opponent offers a draw) and `ponderhit draw` add `draw` to the `bestmove` when kibitz
//!   judges its own position worse than [`ACCEPT_DRAW_BELOW`]; a `bestmove` whose line is a forced loss says
//!   `resign`.
//! * While a search runs, `isready`, `stop`, `ponderhit` and `quit` are answered at once; any other line
//!   waits (up to 1024 lines, 4 MiB) and runs after the `bestmove`; `position`, `go`, `banmoves` and
//!   `probe` also stop the running search first (or let out the held `bestmove` of one that has ended).
//!   `go ponder` and a `go` without a limit hold their `bestmove` until `stop` or `ponderhit`. A `stop` or
//!   `ponderhit` behind a waiting `go` is that search's, and an `isready` behind waiting lines, or while a
//!   search told to stop has not answered, waits its turn.
//! * `nobestmove` answers a `go` in a position without a legal move, and when every legal move is banned
//!   (held like a `bestmove` after `go ponder` or an endless `go`).
//! * The end of input stops a running search (within [`END_OF_INPUT_GRACE`]), writes its answer, runs the lines
//!   waiting behind it (a `go` among them searching within the grace too) and exits.
//! * A line too long to read is answered with an error; it may have been a `position`, so the next `go` is
//!   refused as after a refused `position` until a `position` is read.
//!
//! Options: `usemillisec` (check, false), `hashsize` (spin, MiB, 1-4096, default 64; 0 is read as the
//! default), `threads` (spin, 1-64, default 1), `newgame` (button: clears the transposition table).

use std::sync::Arc;
use std::time::Duration;

use crate::analysis::{Analysis, Request};
use crate::engines::Engines;
use crate::game::{Game, Score};
use crate::games::xiangqi::{Move, Xiangqi};
use crate::pool::{JobHandle, Pool, PoolConfig, Priority};
use crate::search::tt::Bound;
use crate::search::{Clock, Info, Limits, ScoreBound, to_score};

use super::session::{
    ErrorForm, SearchReport, SessionError, WaitingLines, failure_message, lenient_integer, score_number, shorten,
    start_search,
};
pub use super::stdio::Reply;
use super::stdio::{self, EventSender, LineSession};

/// The deepest `go depth` searched.
pub const MAX_DEPTH: u32 = 64;
/// The longest time a `go` accepts, in milliseconds.
pub const MAX_TIME_MS: u64 = 7 * 24 * 3600 * 1000;
/// A draw offer is accepted when kibitz's score is below this (centi-units).
pub const ACCEPT_DRAW_BELOW: i32 = -150;
const END_OF_INPUT_GRACE: Duration = Duration::from_millis(200);

/// UCCI has no error reply; errors are an `info string`, as in UCI.
pub const ERRORS: ErrorForm = ErrorForm { command: "info string error:", invalid_move: "info string error:" };

/// The options and their values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UcciConfig {
    pub use_millisec: bool,
    pub hash_mb: u32,
    pub threads: u32,
    /// Search with this external engine of the engines file instead of kibitz's own (`-engine`).
    pub engine: Option<String>,
}

impl Default for UcciConfig {
    fn default() -> Self {
        UcciConfig { use_millisec: false, hash_mb: 64, threads: 1, engine: None }
    }
}

/// What the session's searches report (on a worker thread), tagged with the search's number.
#[derive(Clone, Debug, PartialEq)]
pub enum UcciEvent {
    Info {
        id: u64,
        line: String,
    },
    Done {
        id: u64,
        best: Option<Move>,
        ponder: Option<Move>,
        score: Option<Score>,
        /// The deepest iteration the search completed.
        depth: u32,
    },
    /// The search's external engine failed: the search is over without a move.
    Failed {
        id: u64,
        message: String,
    },
}

/// A search under way.
struct Thinking {
    id: u64,
    job: JobHandle,
    hold: bool,
    on_ponderhit: Option<Limits>,
    draw_offered: bool,
    answer: Option<String>,
    /// Asked to stop (by `stop`, or by a line that stops it first), not yet answered.
    stopping: bool,
}

/// One UCCI session.
pub struct UcciSession {
    analysis: Analysis,
    notify: Arc<dyn Fn(UcciEvent) + Send + Sync>,
    config: UcciConfig,
    game: Xiangqi,
    banned: Vec<Move>,
    thinking: Option<Thinking>,
    waiting: WaitingLines,
    input_ended: bool,
    next_id: u64,
    /// Why the last `position` was refused: the board is then not the GUI's, and `go` searches nothing.
    refused: Option<String>,
    /// What the last search answered of its root, for `probe` (the search keeps no table entry of its root).
    last_root: Option<RootAnswer>,
}

/// The answer of a search for its root position.
struct RootAnswer {
    hash: u64,
    best: Option<Move>,
    score: Option<Score>,
    depth: u32,
    /// Some root moves were banned: the best of the others says only that the position is worth at least that.
    banned: bool,
}

impl UcciSession {
    /// A session searching through `analysis` (whose pool's table should have `config.hash_mb` MiB);
    /// `notify` (called on a worker thread) must bring each [`UcciEvent`] back to [`UcciSession::on_event`].
    pub fn new(analysis: Analysis, config: UcciConfig, notify: impl Fn(UcciEvent) + Send + Sync + 'static) -> Self {
        UcciSession {
            analysis,
            notify: Arc::new(notify),
            config,
            game: Xiangqi::start(),
            banned: Vec::new(),
            thinking: None,
            waiting: WaitingLines::default(),
            input_ended: false,
            next_id: 0,
            refused: None,
            last_root: None,
        }
    }

    pub fn config(&self) -> &UcciConfig {
        &self.config
    }

    pub fn game(&self) -> &Xiangqi {
        &self.game
    }

    pub fn is_thinking(&self) -> bool {
        self.thinking.is_some()
    }

    pub fn on_line(&mut self, line: &str) -> Reply {
        if self.thinking.is_some() {
            let word = line.split_whitespace().next().unwrap_or("");
            match word {
                // Behind a waiting `go`, `stop` and `ponderhit` are about the search it starts; `isready` behind
                // any waiting line is answered after it, in order (as in `kibitz-uci`, found by an audit).
                "isready" | "stop" | "ponderhit"
                    if self.waiting.holds_command("go")
                        || word == "isready" && (!self.waiting.is_empty() || self.stopping()) =>
                {
                    self.waiting.push(line);
                    return Reply::none();
                }
                "isready" | "stop" | "ponderhit" | "quit" => {}
                "" => return Reply::none(),
                _ => {
                    if matches!(word, "position" | "go" | "banmoves" | "probe") {
                        // A held search that has ended already: its answer goes out now, then this line runs.
                        if let Some(answer) = self.thinking.as_mut().and_then(|t| t.answer.take()) {
                            self.thinking = None;
                            self.waiting.push(line);
                            return self.answered(vec![answer]);
                        }
                        self.release();
                    }
                    self.waiting.push(line);
                    return Reply::none();
                }
            }
        }
        self.command(line)
    }

    /// A discarded over-long line. It may have been a `position`: the position is then not the GUI's, so the
    /// next `go` is refused until a `position` is read, in the order the lines came.
    pub fn on_line_too_long(&mut self, bytes: usize) -> Reply {
        let reply =
            error(format!("a line of {bytes} bytes is longer than the limit of {} bytes, ignored", stdio::MAX_LINE));
        let mark = super::session::too_long_mark(bytes);
        if self.thinking.is_some() {
            self.waiting.push(&mark);
        } else {
            self.command(&mark);
        }
        reply
    }

    /// The input ended: the running search stops (within [`END_OF_INPUT_GRACE`]) and answers, the lines waiting
    /// behind it run (a `go` among them searching within the grace too), then the engine quits.
    pub fn on_end_of_input(&mut self) -> Reply {
        self.input_ended = true;
        if self.thinking.is_none() {
            return self.answered(Vec::new());
        }
        if let Some(answer) = self.wind_down() {
            self.thinking = None;
            return self.answered(vec![answer]);
        }
        Reply::none()
    }

    /// After the end of input: the running search holds its answer no longer and ends within the grace; its
    /// answer if it has one already.
    fn wind_down(&mut self) -> Option<String> {
        let t = self.thinking.as_mut()?;
        t.hold = false;
        t.on_ponderhit = None;
        if t.answer.is_none() {
            super::session::stop_after(&t.job, END_OF_INPUT_GRACE, "kibitz-ucci-eof");
        }
        t.answer.take()
    }

    pub fn on_event(&mut self, event: UcciEvent) -> Reply {
        let current = self.thinking.as_ref().map(|t| t.id);
        match event {
            UcciEvent::Info { id, line } if Some(id) == current => Reply::line(line),
            UcciEvent::Done { id, best, ponder, score, depth } if Some(id) == current => {
                let banned = !self.banned.is_empty();
                self.last_root = Some(RootAnswer { hash: self.game.hash(), best, score, depth, banned });
                let Some(t) = self.thinking.as_mut() else { return Reply::none() };
                let answer = bestmove_line(&self.game, best, ponder, score, t.draw_offered);
                if t.hold {
                    t.answer = Some(answer);
                    return Reply::none();
                }
                self.thinking = None;
                self.answered(vec![answer])
            }
            UcciEvent::Failed { id, message } if Some(id) == current => {
                let Some(t) = self.thinking.as_mut() else { return Reply::none() };
                // Why at once; the `nobestmove` when a `bestmove` would come (after `stop` when held).
                let why = ERRORS.line(&SessionError::command(message));
                if t.hold {
                    t.answer = Some("nobestmove".to_string());
                    return Reply::line(why);
                }
                self.thinking = None;
                self.answered(vec![why, "nobestmove".to_string()])
            }
            _ => Reply::none(),
        }
    }

    fn answered(&mut self, mut lines: Vec<String>) -> Reply {
        let mut quit = false;
        while self.thinking.is_none() {
            let Some(line) = self.waiting.pop() else { break };
            let reply = self.command(&line);
            lines.extend(reply.lines);
            if reply.quit {
                quit = true;
                break;
            }
        }
        if self.thinking.is_some() && !quit {
            // A waiting `go` has started a search: the lines behind it meet it as if they came now (a `stop`
            // stops it, the rest wait again, in order).
            let rest: Vec<String> = std::iter::from_fn(|| self.waiting.pop()).collect();
            for line in rest {
                let reply = self.on_line(&line);
                lines.extend(reply.lines);
                quit |= reply.quit;
            }
        }
        if self.thinking.is_none()
            && let Some(e) = self.waiting.take_dropped()
        {
            lines.push(ERRORS.line(&e));
        }
        if self.input_ended
            && !quit
            && let Some(answer) = self.wind_down()
        {
            // A `go` that waited behind the end of input and has answered already (a position without a move).
            self.thinking = None;
            let reply = self.answered(vec![answer]);
            lines.extend(reply.lines);
            return Reply { lines, quit: reply.quit };
        }
        quit |= self.input_ended && self.thinking.is_none();
        Reply { lines, quit }
    }

    /// The running search was asked to stop and has not answered yet (its `bestmove` is a moment away: an
    /// `isready` then waits for it, so that `readyok` comes after it).
    fn stopping(&self) -> bool {
        self.thinking.as_ref().is_some_and(|t| t.stopping && t.answer.is_none())
    }

    fn release(&mut self) {
        if let Some(t) = &mut self.thinking {
            t.hold = false;
            t.on_ponderhit = None;
            t.stopping = true;
            t.job.stop();
        }
    }

    fn command(&mut self, line: &str) -> Reply {
        if let Some(why) = super::session::too_long_refusal(line) {
            self.refused = Some(why);
            return Reply::none();
        }
        let mut tokens = line.split_whitespace();
        let Some(word) = tokens.next() else { return Reply::none() };
        let args: Vec<&str> = tokens.collect();
        tracing::debug!(command = %word, args = args.len(), "command");
        let result = match word {
            "ucci" => Ok(ucci_lines()),
            "isready" => Ok(vec!["readyok".to_string()]),
            "setoption" => self.setoption(&args).map(|()| Vec::new()),
            "position" => {
                let read = read_position(&args);
                self.refused = read.as_ref().err().map(|e| e.message().to_string());
                read.map(|g| {
                    self.game = g;
                    self.banned.clear();
                    Vec::new()
                })
            }
            "banmoves" => self.banmoves(&args).map(|()| Vec::new()),
            "go" => return self.go(&args),
            "ponderhit" => return self.ponderhit(&args),
            "stop" => return self.stop(),
            "probe" => self.probe(&args),
            "quit" => return Reply::quit(vec!["bye".to_string()]),
            _ => Err(SessionError::command(format!("unknown command `{}`", shorten(word)))),
        };
        match result {
            Ok(lines) => Reply { lines, quit: false },
            Err(e) => ERRORS.reply(&e),
        }
    }

    fn setoption(&mut self, args: &[&str]) -> Result<(), SessionError> {
        // `setoption name X value Y` (the UCI form some GUIs send) is read too.
        let args: Vec<&str> = args.iter().copied().filter(|t| *t != "name" && *t != "value").collect();
        let Some((name, value)) = args.split_first() else {
            return Err(SessionError::command("setoption needs an option name"));
        };
        let value = value.join(" ");
        let spin = |min: u32, max: u32| {
            value.parse::<u32>().ok().filter(|v| (min..=max).contains(v)).ok_or_else(|| {
                SessionError::command(format!(
                    "option {name} takes an integer from {min} to {max}, not `{}`",
                    shorten(&value)
                ))
            })
        };
        match name.to_ascii_lowercase().as_str() {
            "usemillisec" => {
                self.config.use_millisec = match value.as_str() {
                    "true" | "on" => true,
                    "false" | "off" => false,
                    _ => {
                        return Err(SessionError::command(format!(
                            "option usemillisec takes true or false, not `{}`",
                            shorten(&value)
                        )));
                    }
                }
            }
            "hashsize" => {
                let mb = if value == "0" { UcciConfig::default().hash_mb } else { spin(1, 4096)? };
                if mb != self.config.hash_mb {
                    self.config.hash_mb = mb;
                    self.analysis.pool().set_hash_mb(mb as usize);
                }
            }
            "threads" => self.config.threads = spin(1, 64)?,
            "newgame" => {
                self.analysis.pool().clear_hash();
                self.last_root = None;
            }
            _ => return Err(SessionError::command(format!("no option named `{}`", shorten(name)))),
        }
        Ok(())
    }

    fn banmoves(&mut self, args: &[&str]) -> Result<(), SessionError> {
        let mut banned = Vec::with_capacity(args.len());
        for text in args {
            let m = self
                .game
                .parse_move(text)
                .map_err(|e| SessionError::invalid_move(format!("banmoves `{}`: {}", shorten(text), e.message)))?;
            banned.push(m);
        }
        self.banned = banned;
        Ok(())
    }

    /// A time argument of `go` in the session's unit (seconds, or milliseconds with `usemillisec`).
    fn seconds(&self, text: &str) -> Option<Duration> {
        let n: f64 = text.parse().ok().filter(|n: &f64| n.is_finite())?;
        let ms = if self.config.use_millisec { n } else { n * 1000.0 };
        Some(Duration::from_millis(ms.clamp(0.0, MAX_TIME_MS as f64) as u64))
    }

    fn go(&mut self, args: &[&str]) -> Reply {
        // Every `go` is answered: a refused one by why and `nobestmove`.
        let refuse = |e: &SessionError| {
            let mut lines = ERRORS.reply(e).lines;
            lines.push("nobestmove".to_string());
            Reply { lines, quit: false }
        };
        if let Some(why) = &self.refused {
            return refuse(&SessionError::command(format!(
                "go: no position to search, the last `position` was refused ({why})"
            )));
        }
        const TIMES: [&str; 4] = ["time", "increment", "opptime", "oppincrement"];
        const COUNTS: [&str; 4] = ["depth", "nodes", "movestogo", "oppmovestogo"];
        let mut limits = Limits::default();
        let (mut ponder, mut draw) = (false, false);
        let (mut time, mut inc, mut moves_to_go) = (None, Duration::ZERO, None);
        // What is not understood is left out with a warning; the rest of the line still counts.
        let mut lines = Vec::new();
        let mut warn = |text: String| lines.push(ERRORS.line(&SessionError::command(format!("go: {text}, ignored"))));
        let mut i = 0;
        // A clock was meant (a word of one came), whether or not it could be read.
        let mut clocked = false;
        while i < args.len() {
            let word = args[i];
            clocked |= TIMES.contains(&word) || matches!(word, "movestogo" | "oppmovestogo");
            // UCCI's own spelling of an endless search.
            if word == "depth" && args.get(i + 1) == Some(&"infinite") {
                limits.infinite = true;
                i += 2;
                continue;
            }
            let is_time = TIMES.contains(&word);
            if !is_time && !COUNTS.contains(&word) {
                match word {
                    "ponder" => ponder = true,
                    "draw" => draw = true,
                    "infinite" => limits.infinite = true,
                    _ => warn(format!("unknown word `{}`", shorten(word))),
                }
                i += 1;
                continue;
            }
            // The value, unless the next word is a word of `go` itself (its value is then missing).
            let text = args
                .get(i + 1)
                .filter(|t| !TIMES.contains(t) && !COUNTS.contains(t) && !["ponder", "draw", "infinite"].contains(t));
            let (duration, count) = match text {
                Some(t) if is_time => (self.seconds(t), None),
                Some(t) => (None, lenient_integer(t)),
                None => (None, None),
            };
            match (word, duration, count) {
                ("time", Some(d), _) => time = Some(d),
                ("increment", Some(d), _) => inc = d,
                ("depth", _, Some(n)) => limits.depth = Some(n.clamp(1, MAX_DEPTH as i64) as u32),
                ("nodes", _, Some(n)) => limits.nodes = Some(n.max(1) as u64),
                // Zero or fewer moves to go is no count at all.
                ("movestogo", _, Some(n)) => moves_to_go = (n > 0).then(|| n.min(1000) as u32),
                // The opponent's clock: not needed.
                ("opptime" | "oppincrement", Some(_), _) | ("oppmovestogo", _, Some(_)) => {}
                _ => match text {
                    Some(t) => warn(format!("{word} needs a number, not `{}`", shorten(t))),
                    None => warn(format!("{word} needs a number")),
                },
            }
            i += if text.is_some() { 2 } else { 1 };
        }
        if let Some(t) = time {
            limits.clock = Some(Clock { remaining: t.max(Duration::from_millis(1)), increment: inc, moves_to_go });
        }
        // `go` alone is an endless search (until `stop`); a clock that could not be read is not: a GUI playing
        // a game would wait for ever (found by an audit: `go time nan`, `go opptime 5`), so the search has the
        // depth a `go` without limits has elsewhere.
        if limits.depth.is_none() && limits.nodes.is_none() && limits.clock.is_none() && !limits.infinite {
            if clocked {
                let why = format!("go: no clock of the side to move: searching to depth {}", Limits::DEFAULT_DEPTH);
                lines.push(ERRORS.line(&SessionError::command(why)));
            } else {
                limits.infinite = true;
            }
        }
        // No legal move, or every one banned: nothing to play (held like any other answer until `stop` or
        // `ponderhit` where the search would be).
        let hold = ponder || limits.infinite;
        if self.nothing_to_play() {
            if hold {
                self.next_id += 1;
                let (job, _finished) = JobHandle::external();
                let on_ponderhit = ponder.then_some(limits);
                let answer = Some("nobestmove".to_string());
                self.thinking = Some(Thinking {
                    id: self.next_id,
                    job,
                    hold,
                    on_ponderhit,
                    draw_offered: draw,
                    answer,
                    stopping: false,
                });
            } else {
                lines.push("nobestmove".to_string());
            }
            return Reply { lines, quit: false };
        }
        let result = if ponder {
            self.start(Limits::infinite(), hold, Some(limits), draw)
        } else {
            self.start(limits, hold, None, draw)
        };
        if let Err(e) = result {
            lines.extend(refuse(&e).lines);
        }
        Reply { lines, quit: false }
    }

    fn start(
        &mut self,
        limits: Limits,
        hold: bool,
        on_ponderhit: Option<Limits>,
        draw_offered: bool,
    ) -> Result<(), SessionError> {
        self.next_id += 1;
        let id = self.next_id;
        let notify = Arc::clone(&self.notify);
        let root = self.game.clone();
        let excluded = self.banned.iter().map(|&m| Xiangqi::move_key(m)).collect();
        let request = Request::new(self.game.clone(), limits)
            .threads(self.config.threads.max(1) as usize)
            .priority(Priority::High)
            .currmove_after(Duration::from_secs(1))
            .excluded(excluded);
        let job = start_search(&self.analysis, self.config.engine.as_deref(), request, move |e| {
            notify(event_of(&root, id, e))
        })
        .map_err(|e| SessionError::command(format!("cannot search now: {e}")))?;
        self.thinking = Some(Thinking { id, job, hold, on_ponderhit, draw_offered, answer: None, stopping: false });
        Ok(())
    }

    fn stop(&mut self) -> Reply {
        let Some(t) = &mut self.thinking else { return Reply::none() };
        t.hold = false;
        t.on_ponderhit = None;
        if let Some(answer) = t.answer.take() {
            self.thinking = None;
            return self.answered(vec![answer]);
        }
        t.stopping = true;
        t.job.stop();
        Reply::none()
    }

    fn ponderhit(&mut self, args: &[&str]) -> Reply {
        let Some(t) = &mut self.thinking else { return Reply::none() };
        let Some(limits) = t.on_ponderhit.take() else { return Reply::none() };
        let draw = t.draw_offered || args.first() == Some(&"draw");
        self.thinking = None;
        if self.nothing_to_play() {
            return self.answered(vec!["nobestmove".to_string()]);
        }
        let hold = limits.infinite;
        match self.start(limits, hold, None, draw) {
            Ok(()) => Reply::none(),
            Err(e) => ERRORS.reply(&e),
        }
    }

    /// No legal move, or every one banned.
    fn nothing_to_play(&self) -> bool {
        self.game.legal_moves().iter().all(|m| self.banned.contains(m))
    }

    fn probe(&mut self, args: &[&str]) -> Result<Vec<String>, SessionError> {
        let game = if args.is_empty() { self.game.clone() } else { read_position(args)? };
        let mut line = "pophash".to_string();
        // The root of the last search: its answer (the search keeps no table entry of its root). Its score is a
        // lower bound at the depth completed: a search stopped inside an iteration may answer a move that failed
        // high there, and with banned moves it is the best of the others.
        if let Some(root) = self.last_root.as_ref().filter(|r| r.hash == game.hash() && r.depth > 0) {
            if let Some(best) = root.best.filter(|_| !root.banned) {
                line.push_str(&format!(" bestmove {}", Xiangqi::move_to_coord(best)));
            }
            if let Some(score) = root.score {
                line.push_str(&format!(" lowerbound {} depth {}", score_number(score), root.depth));
            }
            return Ok(vec![line]);
        }
        if let Some(entry) = self.analysis.pool().table().probe(game.hash()) {
            if let Some(m) = game.legal_moves().into_iter().find(|&m| Xiangqi::move_key(m) == entry.move_key) {
                line.push_str(&format!(" bestmove {}", Xiangqi::move_to_coord(m)));
            }
            let value = score_number(to_score(entry.score as i32));
            if matches!(entry.bound, Bound::Lower | Bound::Exact) {
                line.push_str(&format!(" lowerbound {value} depth {}", entry.depth));
            }
            if matches!(entry.bound, Bound::Upper | Bound::Exact) {
                line.push_str(&format!(" upperbound {value} depth {}", entry.depth));
            }
        }
        Ok(vec![line])
    }
}

fn error(message: String) -> Reply {
    ERRORS.reply(&SessionError::command(message))
}

/// `position fen <fen>|startpos [moves ...]` (the words after `position` or `probe`).
fn read_position(args: &[&str]) -> Result<Xiangqi, SessionError> {
    let moves_at = args.iter().position(|t| *t == "moves");
    let (setup, moves) = match moves_at {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let mut game = match setup {
        ["startpos"] => Xiangqi::start(),
        ["fen", fen @ ..] if !fen.is_empty() => Xiangqi::from_fen(&fen.join(" "))
            .map_err(|e| SessionError::command(format!("bad FEN: {} `{}`", e.message, shorten(&e.token))))?,
        _ => return Err(SessionError::command("position needs `fen <fen>` or `startpos`, then `moves ...`")),
    };
    for (i, text) in moves.iter().enumerate() {
        let m = game
            .parse_move(text)
            .map_err(|e| SessionError::invalid_move(format!("move {} `{}`: {}", i + 1, shorten(text), e.message)))?;
        game.make(m);
    }
    Ok(game)
}

fn ucci_lines() -> Vec<String> {
    let d = UcciConfig::default();
    vec![
        format!("id name kibitz {}", env!("CARGO_PKG_VERSION")),
        "id author the kibitz authors".to_string(),
        format!("option usemillisec type check default {}", d.use_millisec),
        format!("option hashsize type spin min 1 max 4096 default {}", d.hash_mb),
        format!("option threads type spin min 1 max 64 default {}", d.threads),
        "option newgame type button".to_string(),
        "ucciok".to_string(),
    ]
}

/// Moves from `game` in coordinates, stopping at the first that is not legal where it stands.
fn coord_line(game: &Xiangqi, moves: &[Move]) -> Vec<String> {
    let mut g = game.clone();
    let mut out = Vec::with_capacity(moves.len());
    for &m in moves {
        if !g.legal_moves().contains(&m) {
            break;
        }
        out.push(Xiangqi::move_to_coord(m));
        g.make(m);
    }
    out
}

/// A progress report as an `info` line.
pub fn info_line(root: &Xiangqi, info: &Info<Move>) -> String {
    if let (Some(m), true) = (info.currmove, info.pv.is_empty()) {
        let mut line = format!("info currmove {}", Xiangqi::move_to_coord(m));
        if let Some(n) = info.currmovenumber {
            line.push_str(&format!(" currmovenumber {n}"));
        }
        return line;
    }
    let bound = match info.bound {
        ScoreBound::Exact => "",
        ScoreBound::Lower => " lowerbound",
        ScoreBound::Upper => " upperbound",
    };
    format!(
        "info depth {} score {}{bound} time {} nodes {} nps {} pv {}",
        info.depth,
        score_number(info.score),
        info.time_ms,
        info.nodes,
        info.nps,
        coord_line(root, &info.pv).join(" ")
    )
}

fn event_of(root: &Xiangqi, id: u64, event: SearchReport<Move>) -> UcciEvent {
    match event {
        SearchReport::Info(info) => UcciEvent::Info { id, line: info_line(root, &info) },
        SearchReport::End(Err(failure)) => UcciEvent::Failed { id, message: failure_message(&failure) },
        SearchReport::End(Ok(done)) => {
            let score = done.lines.first().map(|l| l.score);
            UcciEvent::Done { id, best: done.best, ponder: done.ponder, score, depth: done.depth }
        }
    }
}

/// The answer of a search: `bestmove <m> [ponder <m>] [draw|resign]`, or `nobestmove`.
fn bestmove_line(game: &Xiangqi, best: Option<Move>, ponder: Option<Move>, score: Option<Score>, draw: bool) -> String {
    let Some(best) = best.filter(|m| game.legal_moves().contains(m)) else { return "nobestmove".to_string() };
    let mut line = match coord_line(game, &[best, ponder.unwrap_or(best)]).as_slice() {
        [b, p] => format!("bestmove {b} ponder {p}"),
        _ => format!("bestmove {}", Xiangqi::move_to_coord(best)),
    };
    match score {
        Some(Score::Mate(plies)) if plies < 0 => line.push_str(" resign"),
        Some(s) if draw && score_number(s) < ACCEPT_DRAW_BELOW => line.push_str(" draw"),
        _ => {}
    }
    line
}

impl LineSession for UcciSession {
    type Event = UcciEvent;

    fn greeting(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn on_line(&mut self, line: &str) -> Reply {
        UcciSession::on_line(self, line)
    }

    fn on_event(&mut self, event: UcciEvent) -> Reply {
        UcciSession::on_event(self, event)
    }

    fn on_line_too_long(&mut self, bytes: usize) -> Reply {
        UcciSession::on_line_too_long(self, bytes)
    }

    fn on_end_of_input(&mut self) -> Reply {
        UcciSession::on_end_of_input(self)
    }

    fn may_drop(event: &UcciEvent) -> bool {
        matches!(event, UcciEvent::Info { .. })
    }
}

/// Run the UCCI engine on stdin/stdout until `quit` or the end of stdin, searching with kibitz's own engine or
/// `config.engine` of `engines`. Logging, if any, must go to stderr.
pub fn run_stdio(config: UcciConfig, engines: Engines) -> std::io::Result<()> {
    let span = tracing::info_span!("ucci_session", transport = "stdio");
    let _enter = span.enter();
    let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: config.hash_mb as usize, clock_workers: 0 });
    let analysis = Analysis::with_engines(pool, None, engines);
    let mut stdout = std::io::stdout().lock();
    stdio::run(
        move |events: EventSender<UcciEvent>| UcciSession::new(analysis, config, move |e| events.send(e)),
        std::io::stdin(),
        &mut stdout,
    )
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{self, Receiver};

    use super::*;

    const WAIT: Duration = Duration::from_secs(60);

    fn session() -> (UcciSession, Receiver<UcciEvent>) {
        let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: 1, clock_workers: 0 });
        let (tx, rx) = mpsc::channel();
        let s = UcciSession::new(Analysis::local(pool), UcciConfig::default(), move |e| {
            let _ = tx.send(e);
        });
        (s, rx)
    }

    fn finish(s: &mut UcciSession, rx: &Receiver<UcciEvent>) -> Vec<String> {
        let mut out = Vec::new();
        while s.is_thinking() {
            let e = rx.recv_timeout(WAIT).expect("the search reports within the deadline");
            out.extend(s.on_event(e).lines);
        }
        out
    }

    fn says(s: &mut UcciSession, line: &str, expected: &[&str]) {
        assert_eq!(s.on_line(line).lines, expected, "{line}");
    }

    #[test]
    fn commands_options_and_errors() {
        let (mut s, rx) = session();
        let out = s.on_line("ucci").lines;
        assert_eq!(out.last().map(String::as_str), Some("ucciok"));
        says(&mut s, "setoption usemillisec true", &[]);
        says(&mut s, "setoption hashsize 0", &[]);
        says(&mut s, "setoption name threads value 2", &[]);
        says(&mut s, "setoption newgame", &[]);
        says(
            &mut s,
            "setoption threads 0",
            &["info string error: option threads takes an integer from 1 to 64, not `0`"],
        );
        says(&mut s, "setoption batch on", &["info string error: no option named `batch`"]);
        assert_eq!(s.config(), &UcciConfig { use_millisec: true, hash_mb: 64, threads: 2, engine: None });
        says(&mut s, "position startpos moves h2e2 h9g7", &[]);
        let fen = s.game().to_fen();
        let out = s.on_line("position startpos moves h2e2 h2e2").lines;
        assert!(out[0].starts_with("info string error: move 2 `h2e2`"), "{out:?}");
        let out = s.on_line("position fen 9/9 w").lines;
        assert!(out[0].starts_with("info string error: bad FEN"), "{out:?}");
        let out = s.on_line("banmoves a0a5").lines;
        assert!(out[0].starts_with("info string error: banmoves `a0a5`"), "{out:?}");
        says(&mut s, "hello", &["info string error: unknown command `hello`"]);
        assert_eq!(s.game().to_fen(), fen);
        // After a refused position there is none to search: go says why and `nobestmove`.
        let out = s.on_line("go depth 1").lines;
        assert!(out.len() == 2 && out[0].contains("go: no position to search") && out[1] == "nobestmove", "{out:?}");
        says(&mut s, "position startpos moves h2e2 h9g7", &[]);
        // What a go does not understand is left out with a warning; the search runs on the rest.
        for (line, warning) in [
            ("go depth x nodes 300", "info string error: go: depth needs a number, not `x`, ignored"),
            ("go time soon nodes 300", "info string error: go: time needs a number, not `soon`, ignored"),
            ("go fast nodes 300", "info string error: go: unknown word `fast`, ignored"),
            // A missing value does not take the next word of `go` with it (`draw` is still read).
            ("go nodes 300 time draw", "info string error: go: time needs a number, ignored"),
        ] {
            says(&mut s, line, &[warning]);
            let out = finish(&mut s, &rx);
            assert!(out.last().is_some_and(|l| l.starts_with("bestmove ")), "{line}: {out:?}");
        }
        // Banned moves are left out.
        says(&mut s, "banmoves b0c2 H0-G2", &[]);
        says(&mut s, "go depth 2", &[]);
        let out = finish(&mut s, &rx);
        let last = out.last().expect("bestmove");
        assert!(
            last.starts_with("bestmove ") && !last.starts_with("bestmove b0c2") && !last.starts_with("bestmove h0g2"),
            "{out:?}"
        );
        assert!(out.iter().any(|l| l.starts_with("info depth 2 score ")), "{out:?}");
        // With moves banned, the root's probe gives no best move, only the score of the best of the others.
        let out = s.on_line("probe").lines;
        assert!(out[0].starts_with("pophash lowerbound ") && out[0].ends_with(" depth 2"), "{out:?}");
        // `depth infinite` is UCCI's own endless search: no warning, held until `stop`.
        says(&mut s, "go depth infinite", &[]);
        says(&mut s, "stop", &[]);
        let out = finish(&mut s, &rx);
        assert!(out.iter().all(|l| !l.contains("error")), "{out:?}");
        assert!(out.last().is_some_and(|l| l.starts_with("bestmove ")), "{out:?}");
        says(&mut s, "quit", &["bye"]);
    }

    #[test]
    fn clock_ponder_probe_and_no_move() {
        let (mut s, rx) = session();
        says(&mut s, "position startpos", &[]);
        says(&mut s, "go time 2 increment 0 opptime 2", &[]);
        let out = finish(&mut s, &rx);
        let best = out
            .last()
            .and_then(|l| l.strip_prefix("bestmove "))
            .expect("bestmove")
            .split(' ')
            .next()
            .unwrap_or("")
            .to_string();
        // The root is the last search's answer; the position after the best move is in the table.
        let out = s.on_line("probe startpos").lines;
        assert!(out[0].starts_with(&format!("pophash bestmove {best} lowerbound ")), "{out:?}");
        assert!(!out[0].contains("upperbound") && !out[0].ends_with("depth 0"), "{out:?}");
        assert_eq!(s.on_line("probe").lines, out);
        let out = s.on_line(&format!("probe startpos moves {best}")).lines;
        assert!(out[0].starts_with("pophash ") && out[0].contains("bound "), "{out:?}");
        assert_eq!(s.on_line("probe fen 3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1").lines, ["pophash"]);
        says(&mut s, "go ponder depth 2", &[]);
        says(&mut s, "isready", &["readyok"]);
        says(&mut s, "ponderhit draw", &[]);
        let out = finish(&mut s, &rx);
        assert!(out.last().is_some_and(|l| l.starts_with("bestmove ")), "{out:?}");
        says(&mut s, "go", &[]);
        says(&mut s, "stop", &[]);
        let out = finish(&mut s, &rx);
        assert!(out.last().is_some_and(|l| l.starts_with("bestmove ")), "{out:?}");
        says(&mut s, "position fen 3k5/9/9/9/9/9/9/9/3r5/3K1r3 w - - 0 1", &[]);
        says(&mut s, "go depth 3", &["nobestmove"]);
    }
}
