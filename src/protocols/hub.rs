//! The Hub protocol, version 2 (`protocol.txt` of Scan 3.x: international draughts), as a transport-free
//! session state machine, and [`run_stdio`], the engine on stdin/stdout (`kibitz-hub`, `kibitz engine hub`).
//!
//! Every line is `<command> <arg>=<value> ...`, a value in double quotes when it holds a space or `=`, or is
//! empty; an argument without `=` is a flag.
//!
//! | command | answer |
//! |---|---|
//! | `hub` | `id name=kibitz version=... author="..."`, one `param` line per parameter, `wait` |
//! | `set-param name=<n> value=<v>` | nothing |
//! | `init` | `ready` |
//! | `new-game` | nothing; the transposition table is cleared |
//! | `pos pos=<W\|B + 50 squares> [moves="<m1> <m2> ..."]` | nothing; every move is checked legal in turn |
//! | `level depth=N \| move-time=S \| nodes=N \| [moves=N] time=S [inc=S] \| infinite` | nothing; the limit of the next searches |
//! | `go think\|ponder\|analyze` | `info` lines, then `done move=<m> [ponder=<m>]` |
//! | `ponder-hit` | the pondered move was played: the search goes on as `go think` with the `level` given |
//! | `stop` | the search answers with what it has |
//! | `ping` | `pong` (at once, also while searching) |
//! | `quit` | nothing; the engine exits |
//!
//! Moves are `32-28` for a step and `28x19x23` for a capture (start, end, then every captured square, in any
//! order when read; ascending when written). Times are in seconds (real numbers).
//!
//! `info` lines carry `depth`, `seldepth` (the deepest line looked at), `score` (in men: 1.00 is a man; a
//! win in n plies is written `100 - n/100`, as the GUIs that read Scan expect), `nodes`, `time` (seconds),
//! `nps` (millions of nodes a second, like Scan) and `pv` (quoted). Kibitz's search does not measure an
//! average leaf depth, so Scan's `mean-depth` is not written (the protocol lets an engine choose its fields).
//!
//! Conventions of this engine:
//!
//! * Commands and arguments it does not know are ignored, as the protocol requires. A known command with a
//!   value it cannot use (a bad position, an illegal move, a number that is not one, a parameter value out of
//!   range) is answered `error message="<what was wrong>"` and changes nothing, but for a refused `pos`: the
//!   position is then not the GUI's, so `go` answers `error` (why) and searches nothing until a `pos` is read.
//!   A line too long to read may have been a `pos`, and counts as a refused one.
//! * `level` replaces the limit of the previous `level` (a GUI sends one before each search); without any,
//!   a search goes to depth [`Limits::DEFAULT_DEPTH`]. The increment of `level time= inc=` is added to the
//!   time left before the move, as the protocol says.
//! * While a search runs, `ping`, `ponder-hit`, `stop` and `quit` are answered at once; any other line waits
//!   (up to 1024 lines, 4 MiB) and runs after `done`; `pos`, `go` and `new-game` also stop the search. Behind
//!   a waiting `go`, `stop` and `ponder-hit` wait too (they are about the search it starts), and `ping` waits
//!   behind any waiting line.
//! * `go ponder` searches until `ponder-hit` or `stop`; `ponder-hit` starts the search afresh with the
//!   `level` limit (the transposition table keeps what pondering found). A ponder or analysis search may end
//!   by itself when nothing deeper is left to search (a forced win seen to the end), as the protocol allows.
//! * `go` in a position without a legal move answers `error` and starts nothing (the protocol says a GUI
//!   never asks for it).
//! * The end of input stops a running search (within [`END_OF_INPUT_GRACE`]); after its `done` the lines
//!   waiting behind it run (a `go` among them searching within the grace too), then the engine exits.
//!
//! Parameters (`param` lines): `threads` (int, 1-64, default 1), `hash` (int, MiB, 1-4096, default 64),
//! `variant` (enum, `normal` only: international draughts).

use std::sync::Arc;
use std::time::Duration;

use crate::analysis::{Analysis, Request};
use crate::engines::Engines;
use crate::game::{Game, NotationError};
use crate::games::draughts::{Draughts, Move};
use crate::pool::{JobHandle, Pool, PoolConfig, Priority};
use crate::search::{Clock, Info, Limits, ScoreBound};

use super::session::{
    ErrorForm, SearchReport, SessionError, WaitingLines, describe_end, failure_message, score_number, shorten,
    start_search,
};
pub use super::stdio::Reply;
use super::stdio::{self, EventSender, LineSession};

/// The deepest `level depth` searched.
pub const MAX_DEPTH: u32 = 64;
/// The longest time a `level` accepts, in seconds (longer ones are cut to this).
pub const MAX_SECONDS: f64 = 7.0 * 24.0 * 3600.0;
/// How long a search goes on once the input has ended.
const END_OF_INPUT_GRACE: Duration = Duration::from_millis(200);

/// The shared error form; [`error_line`] writes it as Hub's `error message="..."`.
const ERRORS: ErrorForm = ErrorForm { command: "error", invalid_move: "error" };

/// The parameters and their values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HubConfig {
    pub threads: u32,
    pub hash_mb: u32,
    /// Search with this external engine of the engines file instead of kibitz's own (`-engine`).
    pub engine: Option<String>,
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig { threads: 1, hash_mb: 64, engine: None }
    }
}

/// One Hub line: the command and its arguments (`None` for a flag).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HubLine {
    pub command: String,
    pub args: Vec<(String, Option<String>)>,
}

impl HubLine {
    /// The value of argument `name` (`Some("")` for a flag).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.args.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_deref().unwrap_or(""))
    }

    pub fn has(&self, name: &str) -> bool {
        self.args.iter().any(|(n, _)| n == name)
    }
}

/// Split a line into its command and arguments; an unclosed quote is an error.
pub fn parse_line(line: &str) -> Result<HubLine, String> {
    let mut chars = line.trim().chars().peekable();
    let mut words: Vec<(String, Option<String>)> = Vec::new();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut name = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() || c == '=' {
                break;
            }
            name.push(c);
            chars.next();
        }
        let value = if chars.peek() == Some(&'=') {
            chars.next();
            let mut value = String::new();
            if chars.peek() == Some(&'"') {
                chars.next();
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some(c) => value.push(c),
                        None => return Err(format!("unclosed quote in the value of `{}`", shorten(&name))),
                    }
                }
            } else {
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() {
                        break;
                    }
                    value.push(c);
                    chars.next();
                }
            }
            Some(value)
        } else {
            None
        };
        words.push((name, value));
    }
    let mut words = words.into_iter();
    let command = words.next().map(|(n, _)| n).unwrap_or_default();
    Ok(HubLine { command, args: words.collect() })
}

/// A value as Hub writes it: quoted when it is empty or holds a space, `=` or a quote (which becomes `'`).
pub fn quote(value: &str) -> String {
    if value.is_empty() || value.contains([' ', '=', '"']) {
        format!("\"{}\"", value.replace('"', "'"))
    } else {
        value.to_string()
    }
}

/// An error as Hub writes it: `error message="..."` (one line, whatever it quotes).
pub fn error_line(e: &SessionError) -> String {
    let line = ERRORS.line(e);
    let message = line.strip_prefix("error ").unwrap_or(&line);
    format!("error message={}", quote(message))
}

fn error(message: impl Into<String>) -> Reply {
    Reply::line(error_line(&SessionError::command(message)))
}

/// What the session's searches report (on a worker thread), tagged with the search's number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HubEvent {
    Info { id: u64, line: String },
    Done { id: u64, line: String },
}

/// A search under way.
struct Thinking {
    id: u64,
    job: JobHandle,
    /// `go ponder`: the limits to search with at `ponder-hit`.
    on_ponderhit: Option<Limits>,
}

/// One Hub session.
pub struct HubSession {
    analysis: Analysis,
    notify: Arc<dyn Fn(HubEvent) + Send + Sync>,
    config: HubConfig,
    game: Draughts,
    limits: Limits,
    thinking: Option<Thinking>,
    waiting: WaitingLines,
    /// Why the last `pos` was refused: the position is then not the GUI's, and `go` searches nothing.
    refused: Option<String>,
    input_ended: bool,
    next_id: u64,
}

impl HubSession {
    /// A session searching through `analysis` (whose pool's table should have `config.hash_mb` MiB);
    /// `notify` (called on a worker thread) must bring each [`HubEvent`] back to [`HubSession::on_event`].
    pub fn new(analysis: Analysis, config: HubConfig, notify: impl Fn(HubEvent) + Send + Sync + 'static) -> Self {
        HubSession {
            analysis,
            notify: Arc::new(notify),
            config,
            game: Draughts::start(),
            limits: Limits::default(),
            thinking: None,
            waiting: WaitingLines::default(),
            refused: None,
            input_ended: false,
            next_id: 0,
        }
    }

    pub fn config(&self) -> &HubConfig {
        &self.config
    }

    pub fn game(&self) -> &Draughts {
        &self.game
    }

    pub fn is_thinking(&self) -> bool {
        self.thinking.is_some()
    }

    /// One input line.
    pub fn on_line(&mut self, line: &str) -> Reply {
        if self.thinking.is_some() {
            let word = line.split_whitespace().next().unwrap_or("");
            match word {
                // Behind a waiting `go`, `stop` and `ponder-hit` are about the search it starts (found by an
                // audit: they stopped the search already stopping, and the next one ran on for ever); `ping`
                // behind any waiting line is answered after it, in order.
                "ping" | "ponder-hit" | "stop"
                    if self.waiting.holds_command("go") || !self.waiting.is_empty() && word == "ping" =>
                {
                    self.waiting.push(line);
                    return Reply::none();
                }
                "ping" | "ponder-hit" | "stop" | "quit" => {}
                "" => return Reply::none(),
                _ => {
                    if matches!(word, "pos" | "go" | "new-game") {
                        self.stop_search();
                    }
                    self.waiting.push(line);
                    return Reply::none();
                }
            }
        }
        self.command(line)
    }

    /// A discarded over-long line: it may have been a `pos`, refused then, in the order the lines came.
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

    /// The input ended: the running search stops within [`END_OF_INPUT_GRACE`], the lines waiting behind it run
    /// after its `done`, then the engine quits.
    pub fn on_end_of_input(&mut self) -> Reply {
        self.input_ended = true;
        self.wind_down();
        Reply { lines: Vec::new(), quit: self.thinking.is_none() }
    }

    /// After the end of input: the running search ends within the grace.
    fn wind_down(&mut self) {
        if let Some(t) = &mut self.thinking {
            t.on_ponderhit = None;
            super::session::stop_after(&t.job, END_OF_INPUT_GRACE, "kibitz-hub-eof");
        }
    }

    /// A search's progress or end.
    pub fn on_event(&mut self, event: HubEvent) -> Reply {
        let current = self.thinking.as_ref().map(|t| t.id);
        match event {
            HubEvent::Info { id, line } if Some(id) == current => Reply::line(line),
            HubEvent::Done { id, line } if Some(id) == current => {
                self.thinking = None;
                let mut lines = vec![line];
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
                    // A waiting `go` has started a search: the lines behind it meet it as if they came now (a
                    // `stop` or `ponder-hit` acts on it, the rest wait again, in order).
                    let rest: Vec<String> = std::iter::from_fn(|| self.waiting.pop()).collect();
                    for line in rest {
                        let reply = self.on_line(&line);
                        lines.extend(reply.lines);
                        if reply.quit {
                            quit = true;
                            break;
                        }
                    }
                }
                if self.thinking.is_none()
                    && let Some(e) = self.waiting.take_dropped()
                {
                    lines.push(error_line(&e));
                }
                if self.input_ended {
                    // A `go` that waited behind the end of input searches within the grace too.
                    self.wind_down();
                }
                quit |= self.input_ended && self.thinking.is_none();
                Reply { lines, quit }
            }
            _ => Reply::none(),
        }
    }

    fn stop_search(&mut self) {
        if let Some(t) = &mut self.thinking {
            t.on_ponderhit = None;
            t.job.stop();
        }
    }

    fn command(&mut self, line: &str) -> Reply {
        if let Some(why) = super::session::too_long_refusal(line) {
            self.refused = Some(why);
            return Reply::none();
        }
        let parsed = match parse_line(line) {
            Ok(p) => p,
            Err(e) => return error(e),
        };
        tracing::debug!(command = %parsed.command, args = parsed.args.len(), "command");
        let result: Result<Vec<String>, SessionError> = match parsed.command.as_str() {
            "" => Ok(Vec::new()),
            "hub" => Ok(self.hub_lines()),
            "set-param" => self.set_param(&parsed).map(|()| Vec::new()),
            "init" => Ok(vec!["ready".to_string()]),
            "new-game" => {
                self.analysis.pool().clear_hash();
                Ok(Vec::new())
            }
            "pos" => {
                let done = self.pos(&parsed);
                self.refused = done.as_ref().err().map(|e| e.message().to_string());
                done.map(|()| Vec::new())
            }
            "level" => self.level(&parsed).map(|()| Vec::new()),
            "go" => self.go(&parsed).map(|()| Vec::new()),
            "ping" => Ok(vec!["pong".to_string()]),
            "ponder-hit" => self.ponder_hit().map(|()| Vec::new()),
            "stop" => {
                self.stop_search();
                Ok(Vec::new())
            }
            "quit" => return Reply::quit(Vec::new()),
            // The protocol: unknown commands are ignored.
            _ => Ok(Vec::new()),
        };
        match result {
            Ok(lines) => Reply { lines, quit: false },
            Err(e) => Reply::line(error_line(&e)),
        }
    }

    fn hub_lines(&self) -> Vec<String> {
        let d = HubConfig::default();
        vec![
            format!("id name=kibitz version={} author={}", env!("CARGO_PKG_VERSION"), quote("the kibitz authors")),
            format!("param name=threads value={} type=int min=1 max=64", d.threads),
            format!("param name=hash value={} type=int min=1 max=4096", d.hash_mb),
            "param name=variant value=normal type=enum values=normal".to_string(),
            "wait".to_string(),
        ]
    }

    fn set_param(&mut self, line: &HubLine) -> Result<(), SessionError> {
        let (Some(name), Some(value)) = (line.get("name"), line.get("value")) else {
            return Err(SessionError::command("set-param needs name= and value="));
        };
        let int = |min: u32, max: u32| {
            value.parse::<u32>().ok().filter(|v| (min..=max).contains(v)).ok_or_else(|| {
                SessionError::command(format!(
                    "parameter {name} takes an integer from {min} to {max}, not `{}`",
                    shorten(value)
                ))
            })
        };
        match name {
            "threads" => self.config.threads = int(1, 64)?,
            "hash" => {
                let mb = int(1, 4096)?;
                if mb != self.config.hash_mb {
                    self.config.hash_mb = mb;
                    self.analysis.pool().set_hash_mb(mb as usize);
                }
            }
            "variant" if value != "normal" => {
                return Err(SessionError::command(format!(
                    "variant `{}` is not played here (only normal)",
                    shorten(value)
                )));
            }
            // Unknown parameters are ignored, as the protocol requires.
            _ => {}
        }
        Ok(())
    }

    fn pos(&mut self, line: &HubLine) -> Result<(), SessionError> {
        let text = line.get("pos").ok_or_else(|| SessionError::command("pos needs pos="))?;
        let mut game = Draughts::from_hub(text)
            .map_err(|e| SessionError::command(format!("bad position: {} `{}`", e.message, shorten(&e.token))))?;
        for (i, m) in line.get("moves").unwrap_or("").split_whitespace().enumerate() {
            let mv = game.parse_hub_move(m).map_err(|e: NotationError| {
                SessionError::invalid_move(format!("move {} `{}`: {}", i + 1, shorten(m), e.message))
            })?;
            game.make(mv);
        }
        self.game = game;
        Ok(())
    }

    fn level(&mut self, line: &HubLine) -> Result<(), SessionError> {
        let seconds = |name: &str| -> Result<Option<Duration>, SessionError> {
            let Some(text) = line.get(name) else { return Ok(None) };
            let s: f64 = text.parse().ok().filter(|s: &f64| s.is_finite()).ok_or_else(|| {
                SessionError::command(format!("level {name}= needs a number of seconds, not `{}`", shorten(text)))
            })?;
            Ok(Some(Duration::from_secs_f64(s.clamp(0.0, MAX_SECONDS))))
        };
        let count = |name: &str| -> Result<Option<u64>, SessionError> {
            let Some(text) = line.get(name) else { return Ok(None) };
            text.parse::<u64>().map(Some).map_err(|_| {
                SessionError::command(format!("level {name}= needs a whole number, not `{}`", shorten(text)))
            })
        };
        let mut limits = Limits::default();
        if line.has("infinite") {
            limits.infinite = true;
        }
        if let Some(d) = count("depth")? {
            limits.depth = Some(d.clamp(1, MAX_DEPTH as u64) as u32);
        }
        if let Some(n) = count("nodes")? {
            limits.nodes = Some(n.max(1));
        }
        if let Some(t) = seconds("move-time")? {
            limits.movetime = Some(t.max(Duration::from_millis(1)));
        }
        let inc = seconds("inc")?.unwrap_or_default();
        let moves = count("moves")?;
        if let Some(time) = seconds("time")? {
            limits.clock = Some(Clock {
                remaining: (time + inc).max(Duration::from_millis(1)),
                increment: inc,
                // Zero moves is no count at all (as UCI's and UCCI's `movestogo 0`), not the last move.
                moves_to_go: moves.filter(|&m| m > 0).map(|m| m.min(1000) as u32),
            });
        }
        self.limits = limits;
        Ok(())
    }

    fn go(&mut self, line: &HubLine) -> Result<(), SessionError> {
        // Found by an audit: after a refused `pos`, `go` played a move of the position before it, which the GUI
        // (pydraughts) then failed to read.
        if let Some(why) = &self.refused {
            return Err(SessionError::command(format!(
                "go: no position to search, the last `pos` was refused ({why})"
            )));
        }
        if let Some(end) = self.game.outcome().filter(|_| self.game.legal_moves().is_empty()) {
            return Err(SessionError::command(format!("the game is over: {}", describe_end::<Draughts>(end))));
        }
        if line.has("ponder") {
            self.start(Limits::infinite(), Some(self.limits.clone()))
        } else {
            self.start(self.limits.clone(), None)
        }
    }

    fn ponder_hit(&mut self) -> Result<(), SessionError> {
        let Some(limits) = self.thinking.as_mut().and_then(|t| t.on_ponderhit.take()) else { return Ok(()) };
        // The pondering search is dropped (which cancels it); its late events carry an old number.
        self.thinking = None;
        self.start(limits, None)
    }

    fn start(&mut self, limits: Limits, on_ponderhit: Option<Limits>) -> Result<(), SessionError> {
        self.next_id += 1;
        let id = self.next_id;
        let notify = Arc::clone(&self.notify);
        let root = self.game.clone();
        let request = Request::new(self.game.clone(), limits)
            .threads(self.config.threads.max(1) as usize)
            .priority(Priority::High);
        let job = start_search(&self.analysis, self.config.engine.as_deref(), request, move |e| {
            if let Some(event) = event_of(&root, id, e) {
                notify(event);
            }
        })
        .map_err(|e| SessionError::command(format!("cannot search now: {e}")))?;
        self.thinking = Some(Thinking { id, job, on_ponderhit });
        Ok(())
    }
}

/// Moves from `game` in Hub notation, stopping at the first that is not legal where it stands.
fn hub_line(game: &Draughts, moves: &[Move]) -> Vec<String> {
    let mut g = game.clone();
    let mut out = Vec::with_capacity(moves.len());
    for &m in moves {
        if !g.legal_moves().contains(&m) {
            break;
        }
        out.push(Draughts::hub_move(m));
        g.make(m);
    }
    out
}

/// A progress report as an `info` line (`None` for reports Hub has no words for: bounds, the move searched).
pub fn info_line(root: &Draughts, info: &Info<Move>) -> Option<String> {
    if info.bound != ScoreBound::Exact || info.pv.is_empty() || info.multipv != 1 {
        return None;
    }
    let seconds = info.time_ms as f64 / 1000.0;
    Some(format!(
        "info depth={} seldepth={} score={:.2} nodes={} time={seconds:.3} nps={:.2} pv=\"{}\"",
        info.depth,
        info.seldepth.max(info.depth),
        score_number(info.score) as f64 / 100.0,
        info.nodes,
        info.nps as f64 / 1e6,
        hub_line(root, &info.pv).join(" ")
    ))
}

fn event_of(root: &Draughts, id: u64, event: SearchReport<Move>) -> Option<HubEvent> {
    match event {
        SearchReport::Info(info) => info_line(root, &info).map(|line| HubEvent::Info { id, line }),
        // The search is over without a move: its answer is the error, and the next command runs.
        SearchReport::End(Err(failure)) => {
            Some(HubEvent::Done { id, line: error_line(&SessionError::command(failure_message(&failure))) })
        }
        SearchReport::End(Ok(done)) => {
            let line = match done.best.filter(|m| root.legal_moves().contains(m)) {
                None => error_line(&SessionError::command("the search found no move")),
                Some(best) => match hub_line(root, &[best, done.ponder.unwrap_or(best)]).as_slice() {
                    [b, p] => format!("done move={b} ponder={p}"),
                    _ => format!("done move={}", Draughts::hub_move(best)),
                },
            };
            Some(HubEvent::Done { id, line })
        }
    }
}

impl LineSession for HubSession {
    type Event = HubEvent;

    fn greeting(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn on_line(&mut self, line: &str) -> Reply {
        HubSession::on_line(self, line)
    }

    fn on_event(&mut self, event: HubEvent) -> Reply {
        HubSession::on_event(self, event)
    }

    fn on_line_too_long(&mut self, bytes: usize) -> Reply {
        HubSession::on_line_too_long(self, bytes)
    }

    fn on_end_of_input(&mut self) -> Reply {
        HubSession::on_end_of_input(self)
    }

    fn may_drop(event: &HubEvent) -> bool {
        matches!(event, HubEvent::Info { .. })
    }
}

/// Run the Hub engine on stdin/stdout until `quit` or the end of stdin, searching with kibitz's own engine or
/// `config.engine` of `engines`. Logging, if any, must go to stderr.
pub fn run_stdio(config: HubConfig, engines: Engines) -> std::io::Result<()> {
    let span = tracing::info_span!("hub_session", transport = "stdio");
    let _enter = span.enter();
    let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: config.hash_mb as usize, clock_workers: 0 });
    let analysis = Analysis::with_engines(pool, None, engines);
    let mut stdout = std::io::stdout().lock();
    stdio::run(
        move |events: EventSender<HubEvent>| HubSession::new(analysis, config, move |e| events.send(e)),
        std::io::stdin(),
        &mut stdout,
    )
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{self, Receiver};

    use super::*;

    const WAIT: Duration = Duration::from_secs(60);
    const START: &str = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww";

    fn session() -> (HubSession, Receiver<HubEvent>) {
        let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: 1, clock_workers: 0 });
        let (tx, rx) = mpsc::channel();
        let s = HubSession::new(Analysis::local(pool), HubConfig::default(), move |e| {
            let _ = tx.send(e);
        });
        (s, rx)
    }

    fn finish(s: &mut HubSession, rx: &Receiver<HubEvent>) -> Vec<String> {
        let mut out = Vec::new();
        while s.is_thinking() {
            let e = rx.recv_timeout(WAIT).expect("the search reports within the deadline");
            out.extend(s.on_event(e).lines);
        }
        out
    }

    fn says(s: &mut HubSession, line: &str, expected: &[&str]) {
        assert_eq!(s.on_line(line).lines, expected, "{line}");
    }

    /// Found by an audit: a `stop` (or `ponder-hit`) sent right behind a `go` that waited for the previous
    /// search's end acted on that search, already stopping, and the new one ran on for ever: two `done` were
    /// due, one came.
    #[test]
    fn a_stop_behind_a_waiting_go_stops_the_search_it_starts() {
        let (mut s, rx) = session();
        says(&mut s, "init", &["ready"]);
        says(&mut s, &format!("pos pos={START}"), &[]);
        for line in ["level infinite", "go think", "stop", "go think", "stop", "ping"] {
            says(&mut s, line, &[]);
        }
        let out = finish(&mut s, &rx);
        let done: Vec<usize> = out.iter().enumerate().filter(|(_, l)| l.starts_with("done ")).map(|(i, _)| i).collect();
        assert_eq!(done.len(), 2, "{out:?}");
        // The ping waited behind the second go, and is answered once that search has started (as a ping during
        // a search is), after the first search's done.
        let pong = out.iter().position(|l| l == "pong").expect("pong");
        assert!(done[0] < pong, "{out:?}");
    }

    #[test]
    fn lines_split_into_arguments() {
        let l = parse_line(r#"pos pos=W123 moves="32-28 19-23" flag x="" y=a=b"#).expect("parses");
        assert_eq!(l.command, "pos");
        assert_eq!(l.get("pos"), Some("W123"));
        assert_eq!(l.get("moves"), Some("32-28 19-23"));
        assert_eq!(l.get("flag"), Some(""));
        assert_eq!(l.get("x"), Some(""));
        assert_eq!(l.get("y"), Some("a=b"));
        assert!(parse_line(r#"pos moves="32-28"#).is_err());
        assert_eq!(parse_line("").map(|l| l.command), Ok(String::new()));
        assert_eq!(quote("a b"), "\"a b\"");
        assert_eq!(quote(""), "\"\"");
        assert_eq!(quote("x"), "x");
        assert_eq!(error_line(&SessionError::command("bad \"x\"\r")), "error message=\"bad 'x'?\"");
    }

    #[test]
    fn handshake_parameters_and_errors() {
        let (mut s, _rx) = session();
        let out = s.on_line("hub").lines;
        assert_eq!(
            out[0],
            format!("id name=kibitz version={} author=\"the kibitz authors\"", env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(out.last().map(String::as_str), Some("wait"));
        says(&mut s, "set-param name=threads value=2", &[]);
        says(&mut s, "set-param name=book value=false", &[]);
        says(
            &mut s,
            "set-param name=threads value=0",
            &["error message=\"parameter threads takes an integer from 1 to 64, not `0`\""],
        );
        says(
            &mut s,
            "set-param name=variant value=killer",
            &["error message=\"variant `killer` is not played here (only normal)\""],
        );
        says(&mut s, "init", &["ready"]);
        says(&mut s, "ping", &["pong"]);
        says(&mut s, "frobnicate now=1", &[]);
        says(&mut s, "pos pos=Wxyz", &["error message=\"bad position: a Hub position has 50 squares, not 3 `xyz`\""]);
        let out = s.on_line(&format!("pos pos={START} moves=\"32-28 32-28\"")).lines;
        assert!(out[0].starts_with("error message=\"move 2 `32-28`: "), "{out:?}");
        assert_eq!(s.game().to_hub(), START);
        says(&mut s, "level depth=x", &["error message=\"level depth= needs a whole number, not `x`\""]);
        says(&mut s, "level time=soon", &["error message=\"level time= needs a number of seconds, not `soon`\""]);
        // Zero moves is no count (found by an audit: it was the last move before a control, the whole clock).
        says(&mut s, "level moves=0 time=60", &[]);
        assert_eq!(s.limits.clock.map(|c| c.moves_to_go), Some(None));
        says(&mut s, "level moves=40 time=60", &[]);
        assert_eq!(s.limits.clock.map(|c| c.moves_to_go), Some(Some(40)));
        says(&mut s, "pos moves=\"32-28", &["error message=\"unclosed quote in the value of `moves`\""]);
        assert_eq!(s.config(), &HubConfig { threads: 2, hash_mb: 64, engine: None });
        assert!(s.on_line("quit").quit);
    }

    #[test]
    fn think_ponder_and_analyze() {
        let (mut s, rx) = session();
        says(&mut s, &format!("pos pos={START} moves=\"32-28 19-23 28x19x23\""), &[]);
        says(&mut s, "level depth=3", &[]);
        says(&mut s, "go think", &[]);
        says(&mut s, "ping", &["pong"]);
        let out = finish(&mut s, &rx);
        let done = out.last().expect("done");
        assert!(done.starts_with("done move=14x23") || done.starts_with("done move=13x24"), "{out:?}");
        assert!(out.iter().any(|l| l.starts_with("info depth=3 ") && l.contains(" pv=")), "{out:?}");
        says(&mut s, "level move-time=0.2", &[]);
        says(&mut s, "go ponder", &[]);
        says(&mut s, "ponder-hit", &[]);
        let out = finish(&mut s, &rx);
        assert!(out.last().is_some_and(|l| l.starts_with("done move=")), "{out:?}");
        says(&mut s, "level infinite", &[]);
        says(&mut s, "go analyze", &[]);
        says(&mut s, "stop", &[]);
        let out = finish(&mut s, &rx);
        assert!(out.last().is_some_and(|l| l.starts_with("done move=")), "{out:?}");
        // No move: an error, no search.
        says(&mut s, &format!("pos pos=W{}b{}", "e".repeat(24), "e".repeat(25)), &[]);
        let out = s.on_line("go think").lines;
        assert!(out[0].starts_with("error message=\"the game is over"), "{out:?}");
        assert!(!s.is_thinking());
    }
}
