//! The Universal Chess Interface (UCI, the specification distributed with Stockfish) as a transport-free
//! session state machine, for chess and, through `UCI_Variant xiangqi`, for xiangqi as Fairy-Stockfish speaks
//! it (files a-i, ranks 1-10 from Red's side: the central cannon opening is `h3e3`); and [`run_stdio`], the
//! engine on stdin/stdout (`kibitz-uci`, `kibitz engine uci`).
//!
//! | command | answer |
//! |---|---|
//! | `uci` | `id name`, `id author`, one `option` line per option, `uciok` |
//! | `isready` | `readyok` (at once, also while searching; after the lines still waiting and the `bestmove` of a search told to stop) |
//! | `debug on\|off` | nothing |
//! | `setoption name <name> [value <value>]` | nothing (the options are below) |
//! | `ucinewgame` | nothing; the transposition table is cleared |
//! | `position startpos\|fen <fen> [moves <m1> ...]` | nothing; every move is checked legal in turn |
//! | `go [ponder] [wtime/btime/winc/binc/movestogo N] [depth N] [nodes N] [movetime MS] [mate N] [infinite] [searchmoves <m> ...]` | `info` lines, then `bestmove <m> [ponder <m>]` |
//! | `stop` | the search answers with what it has |
//! | `ponderhit` | the pondered move was played: the search goes on as a normal one, on the clock `go ponder` gave |
//! | `quit` | nothing; the engine exits |
//!
//! `info` lines carry `depth`, `seldepth`, `multipv`, `score cp <x>` or `score mate <moves>` (with
//! `lowerbound`/`upperbound` when an aspiration window failed), `nodes`, `nps`, `hashfull`, `time` and `pv`;
//! after a second of searching also `currmove` and `currmovenumber`.
//!
//! Conventions of this engine:
//!
//! * A line that cannot be carried out (an unknown command, a bad FEN, an illegal move, an unknown option or
//!   value) is answered `info string error: <what was wrong>`. A refused `position` leaves no position: the
//!   next `go` answers why and `bestmove (none)` rather than search a position the GUI does not have.
//! * Every `go` gets a `bestmove`. Parts of a `go` that are not understood (an unknown word, a number that is
//!   not one, a `searchmoves` move that is not legal) are left out with an `info string error:` line, as the
//!   specification asks; a number too large is taken as the largest, a decimal by its whole part, and
//!   `movestogo 0` as no count. A `go` that cannot search at all answers why and `bestmove (none)`.
//! * While a search runs, `isready`, `stop`, `ponderhit`, `debug` and `quit` are answered at once; any other
//!   line waits (up to 1024 lines, 4 MiB) and runs after the `bestmove`. `position`, `go` and `ucinewgame`
//!   also stop the running search first (or let out the held `bestmove` of one that has ended), so a GUI that
//!   forgets `stop` is never left hanging. A `stop` or `ponderhit` behind a waiting `go` is that search's, and
//!   an `isready` behind waiting lines, or while a search told to stop has not answered, waits its turn: the
//!   lines are answered in the order they came.
//! * `go infinite` and `go ponder` hold their `bestmove` until `stop` (or `ponderhit`), as the specification
//!   requires, even when the search ends by itself.
//! * `ponderhit` starts the search afresh on the same position with the clock limits of `go ponder`; the
//!   transposition table keeps what pondering found.
//! * The end of input stops a running search (within [`END_OF_INPUT_GRACE`]); the engine writes its
//!   `bestmove`, runs the lines waiting behind it (a `go` among them searching within the grace too) and exits.
//! * In a position without a legal move `go` answers `info depth 0 score mate 0` (or `score cp 0` when it
//!   is a draw) and `bestmove (none)`, held until `stop` or `ponderhit` after `go infinite` or `go ponder`.
//! * A line too long to read ([`stdio::MAX_LINE`]) is answered with an error; it may have been a `position`,
//!   so the next `go` is refused as after a refused `position` until a `position` is read.
//!
//! Options:
//!
//! | name | type | default | range |
//! |---|---|---|---|
//! | `Threads` | spin | 1 | 1-64 |
//! | `Hash` | spin | 64 (MiB) | 1-4096 |
//! | `MultiPV` | spin | 1 | 1-[`MAX_MULTIPV`] |
//! | `Move Overhead` | spin | 10 (ms) | 0-5000: kept back from the clock for the GUI's round trip |
//! | `Ponder` | check | false | whether the GUI may ponder (the engine ponders only when told `go ponder`) |
//! | `UCI_Chess960` | check | false | castling written king-takes-rook in every position (else only in Chess960 set-ups) |
//! | `UCI_Variant` | combo | chess | `chess` or `xiangqi`; a change sets the variant's start position |

use std::sync::Arc;
use std::time::Duration;

use crate::analysis::{Analysis, Request};
use crate::engines::Engines;
use crate::engines::notation::UciNotation;
use crate::game::{Game, NotationError, Outcome, Score, Side};
use crate::games::chess::Chess;
use crate::games::xiangqi::Xiangqi;
use crate::pool::{JobHandle, Pool, PoolConfig, Priority};
use crate::search::{Clock, Info, Limits, MAX_MULTIPV, ScoreBound};

use super::session::{
    ErrorForm, SearchReport, SessionError, WaitingLines, failure_message, lenient_integer, shorten, start_search,
};
pub use super::stdio::Reply;
use super::stdio::{self, EventSender, LineSession};

/// The deepest `go depth` searched (a larger number is searched this deep).
pub const MAX_DEPTH: u32 = 64;
/// The longest time a `go` accepts (longer clocks and move times are cut to this).
pub const MAX_TIME_MS: u64 = 7 * 24 * 3600 * 1000;
/// How long a search goes on once the input has ended.
const END_OF_INPUT_GRACE: Duration = Duration::from_millis(200);

/// The answer of a search that has no move to give.
const NO_MOVE: &str = "bestmove (none)";

/// UCI has no error reply; errors are written as an `info string`, which every GUI shows or logs.
pub const ERRORS: ErrorForm = ErrorForm { command: "info string error:", invalid_move: "info string error:" };

/// The variants `UCI_Variant` selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Chess,
    Xiangqi,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Chess, Variant::Xiangqi];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Chess => "chess",
            Variant::Xiangqi => "xiangqi",
        }
    }

    fn start(self) -> Board {
        match self {
            Variant::Chess => Board::Chess(Chess::start()),
            Variant::Xiangqi => Board::Xiangqi(Xiangqi::start()),
        }
    }
}

/// The options and their values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciConfig {
    pub threads: u32,
    pub hash_mb: u32,
    pub multipv: u32,
    pub move_overhead_ms: u32,
    pub ponder: bool,
    /// `UCI_Chess960`: castling is written king-takes-rook in every chess position (without it, only in
    /// positions whose king and rooks do not stand where standard chess has them).
    pub chess960: bool,
    pub variant: Variant,
    /// Search with this external engine of the engines file instead of kibitz's own (`-engine`), for the
    /// games it plays.
    pub engine: Option<String>,
}

impl Default for UciConfig {
    fn default() -> Self {
        UciConfig {
            threads: 1,
            hash_mb: 64,
            multipv: 1,
            move_overhead_ms: 10,
            ponder: false,
            chess960: false,
            variant: Variant::Chess,
            engine: None,
        }
    }
}

/// A spin option: its name, its range and where its value lives.
struct Spin {
    name: &'static str,
    min: u32,
    max: u32,
    get: fn(&UciConfig) -> u32,
    set: fn(&mut UciConfig, u32),
}

const SPINS: [Spin; 4] = [
    Spin { name: "Threads", min: 1, max: 64, get: |c| c.threads, set: |c, v| c.threads = v },
    Spin { name: "Hash", min: 1, max: 4096, get: |c| c.hash_mb, set: |c, v| c.hash_mb = v },
    Spin { name: "MultiPV", min: 1, max: MAX_MULTIPV as u32, get: |c| c.multipv, set: |c, v| c.multipv = v },
    Spin { name: "Move Overhead", min: 0, max: 5000, get: |c| c.move_overhead_ms, set: |c, v| c.move_overhead_ms = v },
];

/// The position of the game being played, in the selected variant (one board lives per session: the size
/// difference costs nothing).
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
enum Board {
    Chess(Chess),
    Xiangqi(Xiangqi),
}

/// Run `$body` with `$g` bound to the board's game, whatever its type.
macro_rules! with_board {
    ($board:expr, $g:ident => $body:expr) => {
        match $board {
            Board::Chess($g) => $body,
            Board::Xiangqi($g) => $body,
        }
    };
}

/// What the session's searches report (on a worker thread), tagged with the search's number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UciEvent {
    /// A progress line, written as it is.
    Info { id: u64, line: String },
    /// The search ended: its `bestmove` line.
    Done { id: u64, bestmove: String },
    /// The search's external engine failed: the search is over without a move.
    Failed { id: u64, message: String },
}

/// A search under way.
struct Thinking {
    id: u64,
    job: JobHandle,
    /// `go infinite` or `go ponder`: the `bestmove` waits for `stop` or `ponderhit`.
    hold: bool,
    /// `go ponder`: the search to run at `ponderhit`.
    on_ponderhit: Option<Plan>,
    /// The answer of a held search that has ended (its `bestmove` line, after anything else it has to say).
    answer: Option<Vec<String>>,
    /// Asked to stop (by `stop`, or by a line that stops it first), not yet answered.
    stopping: bool,
}

/// What a `go` asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Plan {
    limits: Limits,
    /// Root moves not to search (`searchmoves` lists the others), by the game's move key.
    excluded: Vec<u32>,
}

/// One UCI session: the options, the position and the search under way.
pub struct UciSession {
    analysis: Analysis,
    notify: Arc<dyn Fn(UciEvent) + Send + Sync>,
    config: UciConfig,
    board: Board,
    thinking: Option<Thinking>,
    waiting: WaitingLines,
    input_ended: bool,
    next_id: u64,
    /// Why the last `position` was refused: the board is then not the GUI's, and `go` searches nothing.
    refused: Option<String>,
}

impl UciSession {
    /// A session searching through `analysis` (whose pool's table should have `config.hash_mb` MiB);
    /// `notify` (called on a worker thread) must bring each [`UciEvent`] back to [`UciSession::on_event`].
    pub fn new(analysis: Analysis, config: UciConfig, notify: impl Fn(UciEvent) + Send + Sync + 'static) -> Self {
        UciSession {
            analysis,
            notify: Arc::new(notify),
            board: config.variant.start(),
            config,
            thinking: None,
            waiting: WaitingLines::default(),
            input_ended: false,
            next_id: 0,
            refused: None,
        }
    }

    pub fn config(&self) -> &UciConfig {
        &self.config
    }

    pub fn is_thinking(&self) -> bool {
        self.thinking.is_some()
    }

    /// The current position as FEN.
    pub fn fen(&self) -> String {
        with_board!(&self.board, g => g.format_position(None).unwrap_or_default())
    }

    /// One input line.
    pub fn on_line(&mut self, line: &str) -> Reply {
        let word = line.split_whitespace().next().unwrap_or("");
        if self.thinking.is_some() {
            match word {
                // Behind a waiting `go`, `stop` and `ponderhit` are about the search it starts (found by an
                // audit: they stopped the search already stopping, and the next one ran on for ever); `isready`
                // behind any waiting line is answered after it, in order (its `readyok` came before the stopped
                // search's `bestmove`, which a GUI then took for the answer to its next `go`).
                "isready" | "stop" | "ponderhit"
                    if self.waiting.holds_command("go")
                        || word == "isready" && (!self.waiting.is_empty() || self.stopping()) =>
                {
                    self.waiting.push(line);
                    return Reply::none();
                }
                "isready" | "stop" | "ponderhit" | "quit" | "debug" => {}
                "" => return Reply::none(),
                _ => {
                    if matches!(word, "position" | "go" | "ucinewgame") {
                        // A held search that has ended already: its answer goes out now, then this line runs.
                        if let Some(answer) = self.thinking.as_mut().and_then(|t| t.answer.take()) {
                            self.thinking = None;
                            self.waiting.push(line);
                            return self.answered(answer);
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

    /// A discarded over-long line. It may have been a `position` (a game of a great many moves): the position is
    /// then not the GUI's, so the next `go` is refused until a `position` is read, in the order the lines came.
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
            return self.answered(answer);
        }
        Reply::none()
    }

    /// After the end of input: the running search holds its answer no longer and ends within the grace; its
    /// answer if it has one already.
    fn wind_down(&mut self) -> Option<Vec<String>> {
        let t = self.thinking.as_mut()?;
        t.hold = false;
        t.on_ponderhit = None;
        if t.answer.is_none() {
            super::session::stop_after(&t.job, END_OF_INPUT_GRACE, "kibitz-uci-eof");
        }
        t.answer.take()
    }

    /// A search's progress or end.
    pub fn on_event(&mut self, event: UciEvent) -> Reply {
        let current = self.thinking.as_ref().map(|t| t.id);
        match event {
            UciEvent::Info { id, line } if Some(id) == current => Reply::line(line),
            UciEvent::Done { id, bestmove } if Some(id) == current => {
                let Some(t) = self.thinking.as_mut() else { return Reply::none() };
                if t.hold {
                    t.answer = Some(vec![bestmove]);
                    return Reply::none();
                }
                self.thinking = None;
                self.answered(vec![bestmove])
            }
            UciEvent::Failed { id, message } if Some(id) == current => {
                let Some(t) = self.thinking.as_mut() else { return Reply::none() };
                // Why at once; the `bestmove` when one would come (after `stop` when held).
                let why = ERRORS.line(&SessionError::command(message));
                if t.hold {
                    // A `ponderhit` still starts its own search (on a fresh process).
                    t.answer = Some(vec![NO_MOVE.to_string()]);
                    return Reply::line(why);
                }
                self.thinking = None;
                self.answered(vec![why, NO_MOVE.to_string()])
            }
            _ => Reply::none(),
        }
    }

    /// A search has answered with `lines`: then the lines that waited for it run.
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
            let reply = self.answered(answer);
            lines.extend(reply.lines);
            return Reply { lines, quit: reply.quit };
        }
        quit |= self.input_ended && self.thinking.is_none();
        Reply { lines, quit }
    }

    /// Stop the running search and let its answer out when it comes.
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

    /// One command (not one that waits for a search).
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
            "uci" => Ok(self.uci_lines()),
            "isready" => Ok(vec!["readyok".to_string()]),
            "debug" => match args.as_slice() {
                ["on"] | ["off"] | [] => Ok(Vec::new()),
                _ => Err(SessionError::command(format!("debug takes on or off, not `{}`", shorten(&args.join(" "))))),
            },
            "setoption" => self.setoption(&args).map(|()| Vec::new()),
            "register" => Ok(Vec::new()),
            "ucinewgame" => {
                self.analysis.pool().clear_hash();
                self.board = self.config.variant.start();
                self.settle_castling();
                self.refused = None;
                Ok(Vec::new())
            }
            "position" => {
                let done = self.position(&args);
                self.refused = done.as_ref().err().map(|e| e.message().to_string());
                done.map(|()| Vec::new())
            }
            "go" => return self.go(&args),
            "stop" => return self.stop(),
            "ponderhit" => return self.ponderhit(),
            "quit" => return Reply::quit(Vec::new()),
            _ => Err(SessionError::command(format!("unknown command `{}`", shorten(word)))),
        };
        match result {
            Ok(lines) => Reply { lines, quit: false },
            Err(e) => ERRORS.reply(&e),
        }
    }

    fn uci_lines(&self) -> Vec<String> {
        let defaults = UciConfig::default();
        let mut lines =
            vec![format!("id name kibitz {}", env!("CARGO_PKG_VERSION")), "id author the kibitz authors".to_string()];
        for s in &SPINS {
            lines.push(format!(
                "option name {} type spin default {} min {} max {}",
                s.name,
                (s.get)(&defaults),
                s.min,
                s.max
            ));
        }
        lines.push(format!("option name Ponder type check default {}", defaults.ponder));
        lines.push(format!("option name UCI_Chess960 type check default {}", defaults.chess960));
        let vars: Vec<String> = Variant::ALL.iter().map(|v| format!("var {}", v.name())).collect();
        lines.push(format!(
            "option name UCI_Variant type combo default {} {}",
            defaults.variant.name(),
            vars.join(" ")
        ));
        lines.push("uciok".to_string());
        lines
    }

    fn setoption(&mut self, args: &[&str]) -> Result<(), SessionError> {
        if args.first() != Some(&"name") {
            return Err(SessionError::command("setoption needs `name <option> [value <value>]`"));
        }
        let value_at = args.iter().position(|t| *t == "value");
        let name = args[1..value_at.unwrap_or(args.len())].join(" ");
        let value = value_at.map(|i| args[i + 1..].join(" ")).unwrap_or_default();
        if let Some(s) = SPINS.iter().find(|s| s.name.eq_ignore_ascii_case(&name)) {
            let v = value.parse::<u32>().ok().filter(|v| (s.min..=s.max).contains(v)).ok_or_else(|| {
                SessionError::command(format!(
                    "option {} takes an integer from {} to {}, not `{}`",
                    s.name,
                    s.min,
                    s.max,
                    shorten(&value)
                ))
            })?;
            let old_hash = self.config.hash_mb;
            (s.set)(&mut self.config, v);
            if self.config.hash_mb != old_hash {
                self.analysis.pool().set_hash_mb(self.config.hash_mb as usize);
            }
            return Ok(());
        }
        if let Some(option) = ["Ponder", "UCI_Chess960"].into_iter().find(|o| name.eq_ignore_ascii_case(o)) {
            let on = match value.to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                _ => {
                    return Err(SessionError::command(format!(
                        "option {option} takes true or false, not `{}`",
                        shorten(&value)
                    )));
                }
            };
            if option == "Ponder" {
                self.config.ponder = on;
            } else {
                self.config.chess960 = on;
                self.settle_castling();
            }
            return Ok(());
        }
        if name.eq_ignore_ascii_case("UCI_Variant") {
            let variant =
                Variant::ALL.into_iter().find(|v| v.name().eq_ignore_ascii_case(&value)).ok_or_else(|| {
                    SessionError::command(format!(
                        "UCI_Variant `{}` is not known (known: chess, xiangqi)",
                        shorten(&value)
                    ))
                })?;
            if variant != self.config.variant {
                self.config.variant = variant;
                self.board = variant.start();
                self.settle_castling();
                self.refused = None;
            }
            return Ok(());
        }
        Err(SessionError::command(format!("no option named `{}`", shorten(&name))))
    }

    /// `position startpos|fen <fen> [moves ...]`: the new position, or an error and the old one kept.
    fn position(&mut self, args: &[&str]) -> Result<(), SessionError> {
        let moves_at = args.iter().position(|t| *t == "moves");
        let (setup, moves) = match moves_at {
            Some(i) => (&args[..i], &args[i + 1..]),
            None => (args, &[][..]),
        };
        let variant = self.config.variant;
        let mut board = match setup {
            ["startpos"] => variant.start(),
            ["fen", fen @ ..] if !fen.is_empty() => {
                let text = fen.join(" ");
                let bad = |e: NotationError| {
                    SessionError::command(format!("bad {} FEN: {} `{}`", variant.name(), e.message, shorten(&e.token)))
                };
                match variant {
                    Variant::Chess => Board::Chess(Chess::parse_position(&text, None).map_err(bad)?),
                    Variant::Xiangqi => Board::Xiangqi(Xiangqi::parse_position(&text, None).map_err(bad)?),
                }
            }
            _ => return Err(SessionError::command("position needs `startpos` or `fen <fen>`, then `moves ...`")),
        };
        with_board!(&mut board, g => play_uci_moves(g, moves))?;
        self.board = board;
        self.settle_castling();
        Ok(())
    }

    /// Castling written as `UCI_Chess960` asks, in the current position and the searches from it.
    fn settle_castling(&mut self) {
        if let Board::Chess(g) = &mut self.board
            && self.config.chess960
        {
            g.write_chess960_castling();
        }
    }

    fn go(&mut self, args: &[&str]) -> Reply {
        // Every `go` is answered by a `bestmove`, a refused one by `bestmove (none)` after why.
        let refuse = |e: &SessionError| {
            let mut lines = ERRORS.reply(e).lines;
            lines.push(NO_MOVE.to_string());
            Reply { lines, quit: false }
        };
        if let Some(why) = &self.refused {
            return refuse(&SessionError::command(format!(
                "go: no position to search, the last `position` was refused ({why})"
            )));
        }
        let (plan, ponder, mut lines) = with_board!(&self.board, g => go_plan(g, args, &self.config));
        let hold = ponder || plan.limits.infinite;
        let (limits, on_ponderhit) =
            if ponder { (Limits::infinite(), Some(plan.clone())) } else { (plan.limits.clone(), None) };
        if let Some(answer) = with_board!(&self.board, g => no_move_answer(g)) {
            if hold {
                // Held like any other until `stop` or `ponderhit` (found by an audit: a GUI pondering on a mate
                // got its `bestmove` before it asked).
                self.next_id += 1;
                let (job, _finished) = JobHandle::external();
                self.thinking =
                    Some(Thinking { id: self.next_id, job, hold, on_ponderhit, answer: Some(answer), stopping: false });
            } else {
                lines.extend(answer);
            }
            return Reply { lines, quit: false };
        }
        match self.start(limits, plan.excluded, hold, on_ponderhit) {
            Ok(()) => Reply { lines, quit: false },
            Err(e) => {
                lines.extend(refuse(&e).lines);
                Reply { lines, quit: false }
            }
        }
    }

    fn start(
        &mut self,
        limits: Limits,
        excluded: Vec<u32>,
        hold: bool,
        on_ponderhit: Option<Plan>,
    ) -> Result<(), SessionError> {
        self.next_id += 1;
        let id = self.next_id;
        let notify = Arc::clone(&self.notify);
        let (multipv, threads) = (self.config.multipv, self.config.threads.max(1) as usize);
        let analysis = self.analysis.clone();
        let engine = self.config.engine.clone();
        let job = with_board!(&self.board, g => {
            let request = Request::new(g.clone(), limits)
                .multipv(multipv)
                .threads(threads)
                .priority(Priority::High)
                .currmove_after(Duration::from_secs(1))
                .excluded(excluded);
            let root = g.clone();
            start_search(&analysis, engine.as_deref(), request, move |e| notify(event_of(&root, id, e)))
        })
        .map_err(|e| SessionError::command(format!("cannot search now: {e}")))?;
        self.thinking = Some(Thinking { id, job, hold, on_ponderhit, answer: None, stopping: false });
        Ok(())
    }

    fn stop(&mut self) -> Reply {
        let Some(t) = &mut self.thinking else { return Reply::none() };
        t.hold = false;
        t.on_ponderhit = None;
        if let Some(answer) = t.answer.take() {
            self.thinking = None;
            return self.answered(answer);
        }
        t.stopping = true;
        t.job.stop();
        Reply::none()
    }

    fn ponderhit(&mut self) -> Reply {
        let Some(t) = &mut self.thinking else { return Reply::none() };
        let Some(plan) = t.on_ponderhit.take() else { return Reply::none() };
        // The pondering search is dropped (which cancels it); its late events carry an old number.
        self.thinking = None;
        if let Some(answer) = with_board!(&self.board, g => no_move_answer(g)) {
            return self.answered(answer);
        }
        let hold = plan.limits.infinite;
        match self.start(plan.limits, plan.excluded, hold, None) {
            Ok(()) => Reply::none(),
            Err(e) => ERRORS.reply(&e),
        }
    }
}

fn error(message: String) -> Reply {
    ERRORS.reply(&SessionError::command(message))
}

/// Moves of a `position` line past which the game is set up afresh at each irreversible move.
const LONG_GAME: usize = 256;

/// Play `moves` (in the engine's coordinates) from `game`, each checked legal where it stands. A long list
/// keeps only the moves since the last irreversible one (all that the draw rules can look back to), so that a
/// line of many thousand moves does not make every copy of the game large.
fn play_uci_moves<G: UciNotation>(game: &mut G, moves: &[&str]) -> Result<(), SessionError> {
    for (i, text) in moves.iter().enumerate() {
        let m = game
            .parse_uci_move(text)
            .map_err(|e| SessionError::invalid_move(format!("move {} `{}`: {}", i + 1, shorten(text), e.message)))?;
        game.make(m);
        if i >= LONG_GAME
            && let Some(fresh) = game.without_history()
        {
            *game = fresh;
        }
    }
    Ok(())
}

/// The answer to `go` in a position without a legal move, if it is one.
fn no_move_answer<G: Game>(game: &G) -> Option<Vec<String>> {
    let mut moves = Vec::new();
    game.generate_moves(&mut moves);
    if !moves.is_empty() {
        return None;
    }
    let end = game.no_move_end();
    let score = match end.outcome {
        Outcome::Win(side) if side != game.side_to_move() => "mate 0",
        _ => "cp 0",
    };
    Some(vec![format!("info depth 0 score {score}"), "bestmove (none)".to_string()])
}

/// A number argument of `go` (see [`lenient_integer`]).
fn number(args: &[&str], i: usize) -> Option<i64> {
    args.get(i).and_then(|t| lenient_integer(t))
}

fn millis(ms: i64) -> Duration {
    Duration::from_millis(ms.clamp(0, MAX_TIME_MS as i64) as u64)
}

/// What `go <args>` asks of `game`: the search plan, whether it is `go ponder`, and a warning line for each
/// part that was not understood and left out (as the specification asks: unknown tokens are ignored).
fn go_plan<G: UciNotation>(game: &G, args: &[&str], config: &UciConfig) -> (Plan, bool, Vec<String>) {
    const WORDS: [&str; 12] = [
        "wtime",
        "btime",
        "winc",
        "binc",
        "movestogo",
        "depth",
        "nodes",
        "movetime",
        "mate",
        "infinite",
        "ponder",
        "searchmoves",
    ];
    let mut limits = Limits::default();
    let (mut time, mut inc) = ([None, None], [0i64, 0i64]);
    let mut moves_to_go = None;
    let mut ponder = false;
    let mut searchmoves: Option<Vec<G::Move>> = None;
    let mut warnings = Vec::new();
    let mut warn = |text: String| warnings.push(ERRORS.line(&SessionError::command(format!("go: {text}, ignored"))));
    let mut i = 0;
    while i < args.len() {
        let word = args[i];
        let takes_number = !matches!(word, "infinite" | "ponder" | "searchmoves") && WORDS.contains(&word);
        let n = if takes_number {
            match number(args, i + 1) {
                Some(n) => n,
                None => {
                    match args.get(i + 1).filter(|t| !WORDS.contains(t)) {
                        Some(text) => {
                            warn(format!("{word} needs a number, not `{}`", shorten(text)));
                            i += 2;
                        }
                        None => {
                            warn(format!("{word} needs a number"));
                            i += 1;
                        }
                    }
                    continue;
                }
            }
        } else {
            0
        };
        match word {
            "wtime" | "btime" => time[(word == "btime") as usize] = Some(n),
            "winc" | "binc" => inc[(word == "binc") as usize] = n,
            // Zero or fewer moves to go is no count at all (as some GUIs send it).
            "movestogo" => moves_to_go = (n > 0).then(|| n.min(1000) as u32),
            "depth" => limits.depth = Some(n.clamp(1, MAX_DEPTH as i64) as u32),
            "nodes" => limits.nodes = Some(n.max(1) as u64),
            "movetime" => limits.movetime = Some(millis(n.max(1))),
            "mate" => {
                let n = n.clamp(1, (MAX_DEPTH / 2) as i64) as u32;
                limits.depth = Some(limits.depth.map_or(2 * n, |d| d.min(2 * n)));
            }
            "infinite" => limits.infinite = true,
            "ponder" => ponder = true,
            "searchmoves" => {
                let mut list = Vec::new();
                while let Some(text) = args.get(i + 1).filter(|t| !WORDS.contains(t)) {
                    match game.parse_uci_move(text) {
                        Ok(m) => list.push(m),
                        Err(e) => warn(format!("searchmoves `{}`: {}", shorten(text), e.message)),
                    }
                    i += 1;
                }
                searchmoves = Some(list);
                i += 1;
                continue;
            }
            _ => {
                warn(format!("unknown word `{}`", shorten(word)));
                i += 1;
                continue;
            }
        }
        i += if matches!(word, "infinite" | "ponder") { 1 } else { 2 };
    }
    let side = (game.side_to_move() == Side::Second) as usize;
    if time[side].is_none() && time[1 - side].is_some() {
        // Only the other side's clock: nothing to manage this move's time by.
        let (given, missing, mover) = if side == 0 { ("btime", "wtime", "white") } else { ("wtime", "btime", "black") };
        warn(format!("{given} is the clock of the side not to move ({mover} is to move and has no {missing})"));
    }
    if let Some(t) = time[side] {
        let overhead = Duration::from_millis(config.move_overhead_ms as u64);
        limits.clock = Some(Clock {
            remaining: millis(t).saturating_sub(overhead).max(Duration::from_millis(1)),
            increment: millis(inc[side]),
            moves_to_go,
        });
    }
    let excluded = match searchmoves {
        Some(keep) if !keep.is_empty() => {
            let mut all = Vec::new();
            game.generate_moves(&mut all);
            all.into_iter().filter(|m| !keep.contains(m)).map(G::move_key).collect()
        }
        _ => Vec::new(),
    };
    (Plan { limits, excluded }, ponder, warnings)
}

/// Moves from `game` in the engine's coordinates, stopping at the first that is not legal where it stands.
pub fn uci_line<G: UciNotation>(game: &G, moves: &[G::Move]) -> Vec<String> {
    let mut g = game.clone();
    let mut legal = Vec::new();
    let mut out = Vec::with_capacity(moves.len());
    for &m in moves {
        g.generate_moves(&mut legal);
        if !legal.contains(&m) {
            break;
        }
        out.push(g.uci_move(m));
        g.make(m);
    }
    out
}

/// A score as UCI writes it: centi-units, or the moves to the end (negative: the side to move is mated).
pub fn score_text(score: Score) -> String {
    match score {
        Score::Cp(cp) => format!("cp {cp}"),
        Score::Mate(plies) if plies > 0 => format!("mate {}", (plies + 1) / 2),
        Score::Mate(plies) => format!("mate -{}", plies.saturating_neg() / 2),
    }
}

/// A progress report as an `info` line.
pub fn info_line<G: UciNotation>(root: &G, info: &Info<G::Move>) -> String {
    if let (Some(m), true) = (info.currmove, info.pv.is_empty()) {
        let mut line = format!("info depth {} currmove {}", info.depth, root.uci_move(m));
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
    let mut line = format!(
        "info depth {} seldepth {} multipv {} score {}{bound} nodes {} nps {} hashfull {} time {}",
        info.depth,
        info.seldepth.max(info.depth),
        info.multipv,
        score_text(info.score),
        info.nodes,
        info.nps,
        info.hashfull,
        info.time_ms
    );
    let pv = uci_line(root, &info.pv);
    if !pv.is_empty() {
        line.push_str(" pv ");
        line.push_str(&pv.join(" "));
    }
    line
}

/// A search event of search `id` as the session receives it.
fn event_of<G: UciNotation>(root: &G, id: u64, event: SearchReport<G::Move>) -> UciEvent {
    match event {
        SearchReport::Info(info) => UciEvent::Info { id, line: info_line(root, &info) },
        SearchReport::End(Err(failure)) => UciEvent::Failed { id, message: failure_message(&failure) },
        SearchReport::End(Ok(done)) => {
            let legal = root.legal_moves_vec();
            let bestmove = match done.best.filter(|m| legal.contains(m)) {
                None => NO_MOVE.to_string(),
                Some(best) => {
                    let line = uci_line(root, &[best, done.ponder.unwrap_or(best)]);
                    match line.as_slice() {
                        [b, p] => format!("bestmove {b} ponder {p}"),
                        _ => format!("bestmove {}", root.uci_move(best)),
                    }
                }
            };
            UciEvent::Done { id, bestmove }
        }
    }
}

/// Every legal move of a position.
trait LegalMoves: Game {
    fn legal_moves_vec(&self) -> Vec<Self::Move> {
        let mut v = Vec::new();
        self.generate_moves(&mut v);
        v
    }
}

impl<G: Game> LegalMoves for G {}

impl LineSession for UciSession {
    type Event = UciEvent;

    fn greeting(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn on_line(&mut self, line: &str) -> Reply {
        UciSession::on_line(self, line)
    }

    fn on_event(&mut self, event: UciEvent) -> Reply {
        UciSession::on_event(self, event)
    }

    fn on_line_too_long(&mut self, bytes: usize) -> Reply {
        UciSession::on_line_too_long(self, bytes)
    }

    fn on_end_of_input(&mut self) -> Reply {
        UciSession::on_end_of_input(self)
    }

    fn may_drop(event: &UciEvent) -> bool {
        matches!(event, UciEvent::Info { .. })
    }
}

/// Run the UCI engine on stdin/stdout until `quit` or the end of stdin. One search job at a time (on as many
/// threads as the `Threads` option says), or on `config.engine` of `engines`; logging, if any, must go to stderr.
pub fn run_stdio(config: UciConfig, engines: Engines) -> std::io::Result<()> {
    let span = tracing::info_span!("uci_session", transport = "stdio");
    let _enter = span.enter();
    let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: config.hash_mb as usize, clock_workers: 0 });
    let analysis = Analysis::with_engines(pool, None, engines);
    let mut stdout = std::io::stdout().lock();
    stdio::run(
        move |events: EventSender<UciEvent>| UciSession::new(analysis, config, move |e| events.send(e)),
        std::io::stdin(),
        &mut stdout,
    )
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{self, Receiver};

    use super::*;

    const WAIT: Duration = Duration::from_secs(60);

    fn session() -> (UciSession, Receiver<UciEvent>) {
        let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: 1, clock_workers: 0 });
        let (tx, rx) = mpsc::channel();
        let s = UciSession::new(Analysis::local(pool), UciConfig::default(), move |e| {
            let _ = tx.send(e);
        });
        (s, rx)
    }

    /// Feed events until the session has no search left; the lines written meanwhile.
    fn finish(s: &mut UciSession, rx: &Receiver<UciEvent>) -> Vec<String> {
        let mut out = Vec::new();
        while s.is_thinking() {
            let e = rx.recv_timeout(WAIT).expect("the search reports within the deadline");
            out.extend(s.on_event(e).lines);
        }
        out
    }

    fn says(s: &mut UciSession, line: &str, expected: &[&str]) {
        assert_eq!(s.on_line(line).lines, expected, "{line}");
    }

    #[test]
    fn scores_in_moves() {
        assert_eq!(score_text(Score::Cp(-12)), "cp -12");
        assert_eq!(score_text(Score::Mate(1)), "mate 1");
        assert_eq!(score_text(Score::Mate(3)), "mate 2");
        assert_eq!(score_text(Score::Mate(-2)), "mate -1");
        assert_eq!(score_text(Score::Mate(0)), "mate -0");
        assert_eq!(score_text(Score::Mate(i32::MIN)), format!("mate -{}", i32::MAX / 2));
    }

    #[test]
    fn handshake_options_and_errors() {
        let (mut s, _rx) = session();
        let out = s.on_line("uci").lines;
        assert_eq!(
            out.first().map(String::as_str),
            Some(format!("id name kibitz {}", env!("CARGO_PKG_VERSION")).as_str())
        );
        assert!(out.contains(&"option name MultiPV type spin default 1 min 1 max 64".to_string()), "{out:?}");
        assert!(out.contains(&"option name UCI_Variant type combo default chess var chess var xiangqi".to_string()));
        assert_eq!(out.last().map(String::as_str), Some("uciok"));
        says(&mut s, "isready", &["readyok"]);
        says(&mut s, "setoption name MultiPV value 3", &[]);
        says(&mut s, "setoption name Move Overhead value 50", &[]);
        says(&mut s, "setoption name Ponder value true", &[]);
        says(
            &mut s,
            "setoption name MultiPV value 0",
            &["info string error: option MultiPV takes an integer from 1 to 64, not `0`"],
        );
        says(&mut s, "setoption name Nope value 1", &["info string error: no option named `Nope`"]);
        says(
            &mut s,
            "setoption name UCI_Variant value shogi",
            &["info string error: UCI_Variant `shogi` is not known (known: chess, xiangqi)"],
        );
        says(&mut s, "setoption MultiPV 3", &["info string error: setoption needs `name <option> [value <value>]`"]);
        says(&mut s, "frob", &["info string error: unknown command `frob`"]);
        says(&mut s, "", &[]);
        assert_eq!(s.config(), &UciConfig { multipv: 3, move_overhead_ms: 50, ponder: true, ..UciConfig::default() });
    }

    #[test]
    fn bad_positions_change_nothing() {
        let (mut s, _rx) = session();
        says(&mut s, "position startpos moves e2e4 e7e5", &[]);
        let fen = s.fen();
        for bad in [
            "position startpos moves e2e4 e2e4",
            "position startpos moves e2e4 Nf6",
            "position fen 8/8/8 w - - 0 1",
            "position fen",
            "position",
            "position start",
            "position startpos moves e7e5",
        ] {
            let out = s.on_line(bad).lines;
            assert_eq!(out.len(), 1, "{bad}: {out:?}");
            assert!(out[0].starts_with("info string error: "), "{bad}: {out:?}");
            assert_eq!(s.fen(), fen, "{bad}");
        }
        let out = s.on_line("position startpos moves e2e4 e2e4").lines;
        assert!(out[0].starts_with("info string error: move 2 `e2e4`"), "{out:?}");
        says(&mut s, "position fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1 moves e1g1", &[]);
        assert_eq!(s.fen(), "4k3/8/8/8/8/8/8/5RK1 b - - 1 1");
    }

    #[test]
    fn go_answers_with_info_and_a_legal_bestmove() {
        let (mut s, rx) = session();
        says(&mut s, "setoption name MultiPV value 2", &[]);
        says(&mut s, "position startpos moves e2e4", &[]);
        says(&mut s, "go depth 3", &[]);
        let out = finish(&mut s, &rx);
        let last = out.last().expect("bestmove");
        assert!(last.starts_with("bestmove "), "{out:?}");
        let best = last.split_whitespace().nth(1).expect("a move");
        let mut g = Chess::start();
        play_uci_moves(&mut g, &["e2e4", best]).expect("legal");
        assert!(out.iter().any(|l| l.starts_with("info depth 3 ") && l.contains(" multipv 2 ")), "{out:?}");
        // What a go does not understand is left out with a warning; the search runs on the rest.
        for (line, warning) in [
            ("go depth x nodes 500", "go: depth needs a number, not `x`, ignored"),
            ("go frob nodes 500", "go: unknown word `frob`, ignored"),
            ("go nodes 500 searchmoves e2e4", "go: searchmoves `e2e4`: "),
            (
                "go wtime 5000 nodes 500",
                "go: wtime is the clock of the side not to move (black is to move and has no btime), ignored",
            ),
        ] {
            let out = s.on_line(line).lines;
            assert!(out.len() == 1 && out[0].starts_with(&format!("info string error: {warning}")), "{line}: {out:?}");
            assert!(s.is_thinking(), "{line}");
            let out = finish(&mut s, &rx);
            assert!(out.last().is_some_and(|l| l.starts_with("bestmove ")), "{line}: {out:?}");
        }
    }

    #[test]
    fn moves_to_go_of_zero_or_less_is_no_count() {
        let clock = |args: &[&str]| {
            let (plan, _, warnings) = go_plan(&Chess::start(), args, &UciConfig::default());
            assert!(warnings.is_empty(), "{args:?}: {warnings:?}");
            plan.limits.clock.map(|c| c.moves_to_go)
        };
        assert_eq!(clock(&["wtime", "10000", "btime", "10000", "movestogo", "0"]), Some(None));
        assert_eq!(clock(&["wtime", "10000", "movestogo", "-3"]), Some(None));
        assert_eq!(clock(&["wtime", "10000", "movestogo", "30"]), Some(Some(30)));
        assert_eq!(number(&["1000.9"], 0), Some(1000));
        assert_eq!(number(&["-99999999999999999999"], 0), Some(i64::MIN));
        assert_eq!(number(&["1e9"], 0), None);
        assert_eq!(number(&["nan"], 0), None);
    }

    #[test]
    fn infinite_and_ponder_hold_the_answer_until_stop_or_ponderhit() {
        let (mut s, rx) = session();
        says(&mut s, "position startpos", &[]);
        says(&mut s, "go infinite", &[]);
        says(&mut s, "isready", &["readyok"]);
        says(&mut s, "position startpos moves d2d4", &[]);
        // `position` stopped the search: its answer, then the waiting line ran.
        let out = finish(&mut s, &rx);
        assert!(out.last().is_some_and(|l| l.starts_with("bestmove ")), "{out:?}");
        assert!(s.fen().starts_with("rnbqkbnr/pppppppp/8/8/3P4/"), "{}", s.fen());
        says(&mut s, "go ponder depth 2", &[]);
        // Pondering searches until told: nothing is written before `ponderhit`.
        assert!(
            rx.recv_timeout(Duration::from_millis(200)).map_or(true, |e| s
                .on_event(e)
                .lines
                .iter()
                .all(|l| l.starts_with("info ")))
        );
        assert!(s.is_thinking());
        says(&mut s, "ponderhit", &[]);
        let out = finish(&mut s, &rx);
        assert!(out.iter().any(|l| l.starts_with("info depth 2 ")), "{out:?}");
        assert!(out.last().is_some_and(|l| l.starts_with("bestmove ")), "{out:?}");
        says(&mut s, "go ponder infinite", &[]);
        assert!(s.on_line("stop").lines.is_empty() || !s.is_thinking());
        let out = finish(&mut s, &rx);
        assert!(out.last().is_some_and(|l| l.starts_with("bestmove ")), "{out:?}");
    }

    #[test]
    fn xiangqi_through_uci_variant_with_ranks_one_to_ten() {
        let (mut s, rx) = session();
        says(&mut s, "setoption name UCI_Variant value xiangqi", &[]);
        says(&mut s, "position startpos moves h3e3 h10g8", &[]);
        assert_eq!(s.fen(), "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR w - - 2 2");
        let out = s.on_line("position startpos moves h2e2").lines;
        assert!(out[0].starts_with("info string error: move 1 `h2e2`"), "{out:?}");
        says(&mut s, "position startpos moves h3e3 h10g8", &[]);
        says(&mut s, "go depth 2 searchmoves b1c3 h1g3", &[]);
        let out = finish(&mut s, &rx);
        let last = out.last().expect("bestmove");
        assert!(last.starts_with("bestmove b1c3") || last.starts_with("bestmove h1g3"), "{out:?}");
        // Red is mated: no move.
        says(&mut s, "position fen 3k5/9/9/9/9/9/9/9/3r5/3K1r3 w - - 0 1", &[]);
        let out = s.on_line("go depth 3").lines;
        assert_eq!(out, ["info depth 0 score mate 0", "bestmove (none)"]);
    }

    #[test]
    fn end_of_input_answers_and_quits() {
        let (mut s, rx) = session();
        says(&mut s, "go infinite", &[]);
        assert!(!s.on_end_of_input().quit);
        let mut quit = false;
        let mut lines = Vec::new();
        while !quit {
            let e = rx.recv_timeout(WAIT).expect("an answer");
            let r = s.on_event(e);
            lines.extend(r.lines);
            quit = r.quit;
        }
        assert!(lines.last().is_some_and(|l| l.starts_with("bestmove ")), "{lines:?}");
    }
}
