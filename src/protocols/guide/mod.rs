//! GUIDE 0.5 (Graphical Universal Interface Draughts Engines, Tuyt & Grimminck, 2004) for international
//! draughts, as a transport-free session state machine; [`net`] serves it on TCP (the `kibitz serve` gateway
//! and the `kibitz-guide` executable) and [`run_stdio`] on stdin/stdout.
//!
//! Handshake: on connection, and again on `guide`, the engine writes `name kibitz <version>`, `author ...`,
//! one `option` line per setting and `engineok`.
//!
//! | command | reply |
//! |---|---|
//! | `guide` | the handshake again |
//! | `capabilities` | `capabilities <every command> #kibitz eval #kibitz fen #kibitz setfen #kibitz pdn` |
//! | `new` | nothing; the start position, normal mode, own clocks reset (the table cleared when it is the engine's own) |
//! | `position <white\|black> <50 chars>` | nothing; a new game from that position |
//! | `game <position> <n> m <move> ...` | nothing; the game loaded, the current move its last |
//! | `move <from> <to> <n> [kills]` | nothing; played at the current move (later moves of the game are dropped) |
//! | `forward <n>`, `jumpto <n>` | nothing; the current move changes (`forward -1` takes one back; move 0 is the start) |
//! | `enginemode 0`, `enginemode 1 <threshold>`, `enginemode 2` | nothing; normal, game analysis, position analysis |
//! | `levelsfixeddepth <plies>`, `levelsfixedtime <s>`, `levelsinfiniteanalysis`, `levelsblitzgame <total> <inc>`, `levelslonggame <t1> <m1> <t2> <m2> <t3>` | nothing; the time control of the next searches |
//! | `opponents <player\|engine>-<player\|engine>` | nothing; which sides the engine plays (white first) |
//! | `go [<white_time> <black_time>]` | see below |
//! | `halt 0\|1` | stops the search at once: `halt 1` writes `move` and plays it, `halt 0` drops it |
//! | `requestposition` | `position <side> <50 chars> m <legal move> m ...` |
//! | `requestgame` | `game <start> <n> m <move> ...` (every move of the game, also those after the current one) |
//! | `ping <text>` | `pong <text>` |
//! | `setoption <id> <value>` | nothing, or `error` when the id or value is bad |
//! | `setcomment <n> <text>` | nothing (checked and ignored: the engine has no use for comments) |
//! | `showwindow 0\|1` | nothing (the engine has no window) |
//! | `offerdraw` | `debug draw offer declined` (the protocol has no message to accept one) |
//! | `quit` | `quit`, and the connection closes |
//!
//! `go` depends on the engine mode:
//!
//! * normal: a search with the level's time control, `searchInfo` after every completed depth and at least
//!   every second, then `move <from> <to> <n> [kills]`; the move is played on the board when the engine
//!   plays the side to move (`opponents`; by default it plays both sides). `go`'s times are the time used so
//!   far by White and Black in seconds; in blitz and long games the engine computes its clock from them (from
//!   its own thinking time when `go` gives none).
//! * game analysis (`enginemode 1 <threshold>`): every move of the loaded game is searched (the level's fixed
//!   depth or time, else the `Analysis_depth` option). For each move whose loss for the mover (the best
//!   move's score minus the played move's, in centi-men: a man = 100) is at least the threshold, the engine
//!   writes `setcomment <n> <text>` naming the move, the loss, the better move and the score change; `n` is
//!   the number of the position the move leads to (the first move of the game is 1, as with `jumpto`). A
//!   `searchInfo string` line reports each move analysed, a `debug` line the end.
//! * position analysis (`enginemode 2`): an infinite search of the current position, streaming
//!   `searchInfo`, until `halt`.
//!
//! `searchInfo` tokens: `ply` (depth), `score` (centi-men from the side to move; a won game 10000 minus the
//! plies to the end, a lost one the negative), `nodes`, `neval`, `time` (seconds), `currmove` and
//! `currmovenumber` (while searching a root move), `pv` (PDN moves `32-28 17-21 26x37`, last on the line) or
//! `string` (free text, last on the line).
//!
//! Conventions:
//!
//! * Commands are separated by any character below 32; a command's words by spaces. Command words are read
//!   in any case. Text after `#` is ignored, unless it is `#kibitz <extension>`: `eval` (`debug eval <cp>`,
//!   the static evaluation from the side to move), `fen` (`debug fen <PDN FEN>`), `setfen <PDN FEN>` (a new
//!   game from that position), `pdn` (`debug pdn <the moves to the current one in PDN>`).
//! * Every bad command (unknown word, missing or extra argument, number out of range, malformed position,
//!   illegal move, overlong line) is answered `error <what was wrong>` and changes nothing.
//! * While a search runs, the engine still answers every command. `go` gets `error`; a command that changes
//!   the board or the mode (`new`, `position`, `game`, `move`, `forward`, `jumpto`, `enginemode`,
//!   `#kibitz setfen`) first drops the search, as `halt 0` would; `quit` and a closed connection cancel it.
//! * A session idle longer than its limit (no command and no search) is closed with an `error` line.

pub mod net;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::session::{ErrorForm, MATE_VALUE, SessionError, describe_end, score_number, shorten};
use crate::analysis::{Analysis, EngineChoice, EngineFailure, Request};
use crate::annotate::judge::{Value, judge};
use crate::game::{Game, NotationError, Side};
use crate::games::draughts::{Draughts, Move};
use crate::pool::{JobHandle, Pool, PoolConfig, Priority};
use crate::search::{Clock, Done, Event, Info, Limits, ScoreBound};

pub use super::stdio::Reply;
use super::stdio::{self, EventSender, LineSession, Transport};

/// The port GUIDE uses unless told otherwise.
pub const DEFAULT_PORT: u16 = 27533;
/// The longest command line accepted by default, in bytes (a `game` of several hundred moves fits).
pub const DEFAULT_MAX_LINE: usize = 64 * 1024;
/// The deepest fixed depth accepted, in plies.
pub const MAX_DEPTH: u32 = 60;
/// The longest time accepted anywhere (levels, `go`), in seconds: 30 days.
pub const MAX_SECONDS: f64 = 30.0 * 86_400.0;
/// The most moves a game may have.
pub const MAX_GAME_MOVES: usize = 2_000;
/// How often a search reports at least.
const REPORT_EVERY: Duration = Duration::from_secs(1);

/// Option types as the document's examples number them.
const TYPE_SPIN: u32 = 2;

/// Every command the engine takes, in the order `capabilities` lists them.
pub const COMMANDS: [&str; 24] = [
    "guide",
    "capabilities",
    "enginemode",
    "forward",
    "game",
    "go",
    "halt",
    "jumpto",
    "levelsblitzgame",
    "levelslonggame",
    "levelsfixeddepth",
    "levelsfixedtime",
    "levelsinfiniteanalysis",
    "move",
    "new",
    "opponents",
    "offerdraw",
    "ping",
    "position",
    "requestgame",
    "requestposition",
    "setcomment",
    "setoption",
    "showwindow",
];

/// The `#kibitz` extensions.
pub const EXTENSIONS: [&str; 4] = ["eval", "fen", "setfen", "pdn"];

/// A session's settings and limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuideConfig {
    /// Search threads per search (the `Threads` option's default).
    pub threads: u32,
    /// The most threads the `Threads` option allows.
    pub max_threads: u32,
    /// Depth of game analysis when the level is neither a fixed depth nor a fixed time.
    pub analysis_depth: u32,
    /// The pool (and its table) belongs to this session alone: the `Hash_MB` option is offered and `new`
    /// clears the table. False when sessions share a server's pool.
    pub own_pool: bool,
    /// The table size in MiB the pool starts with (the `Hash_MB` option's default).
    pub hash_mb: u32,
    /// The longest command line, in bytes.
    pub max_line: usize,
    /// Close a session that has neither a command nor a search for this long.
    pub idle: Option<Duration>,
    /// Search with this external engine of the engines file instead of kibitz's own (`--guide-engine`).
    pub engine: Option<String>,
    /// Who the session is (its key or address) for the pool's fair queue.
    pub client: Option<Arc<str>>,
}

impl Default for GuideConfig {
    fn default() -> Self {
        GuideConfig {
            threads: 1,
            max_threads: std::thread::available_parallelism().map_or(1, |n| n.get()).min(64) as u32,
            analysis_depth: 10,
            own_pool: true,
            hash_mb: 64,
            max_line: DEFAULT_MAX_LINE,
            idle: None,
            engine: None,
            client: None,
        }
    }
}

/// A setting the GUI may change with `setoption`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OptionId {
    Threads = 0,
    AnalysisDepth = 1,
    HashMb = 2,
}

/// The time control of the searches `go` starts in normal mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Level {
    FixedDepth(u32),
    /// Seconds per move.
    FixedTime(f64),
    Infinite,
    /// Seconds for the game, seconds added after each move.
    Blitz {
        total: f64,
        increment: f64,
    },
    /// Three time controls: `ftc` seconds for the first `ftc_moves` moves, `stc` more for the next `stc_moves`,
    /// `ttc` more for the rest of the game.
    Long {
        ftc: f64,
        ftc_moves: u32,
        stc: f64,
        stc_moves: u32,
        ttc: f64,
    },
}

impl Default for Level {
    fn default() -> Self {
        Level::FixedTime(1.0)
    }
}

/// What `go` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Normal,
    /// Comment moves losing at least this many centi-men.
    GameAnalysis {
        threshold: i32,
    },
    PositionAnalysis,
}

/// What a search reports back through the session's notifier.
#[derive(Clone, Debug, PartialEq)]
pub enum GuideEvent {
    /// An event of search number `id`.
    Search { id: u64, event: Event<Move> },
    /// Search number `id` has run another second.
    Tick { id: u64 },
    /// Search number `id` ended without an answer: its external engine failed (and is restarted).
    Failed { id: u64, message: String },
}

/// The state of a game analysis: the positions searched so far.
struct GameScan {
    threshold: i32,
    /// The position being searched: `game` after `index` moves.
    game: Draughts,
    index: usize,
    /// The best move and the value for the side to move of every position searched.
    results: Vec<(Option<Move>, Option<Value>)>,
    comments: usize,
}

enum Task {
    /// A normal-mode search: play the move when `play`.
    Play {
        play: bool,
    },
    /// Position analysis.
    Analyse,
    GameScan(Box<GameScan>),
}

/// A search under way.
struct Thinking {
    id: u64,
    job: JobHandle,
    task: Task,
    started: Instant,
    /// The position searched (for writing its moves).
    root: Draughts,
    /// `halt 1` was received: play the answer whatever `opponents` says.
    halted: bool,
    /// Set when the search ends or is dropped: its ticker stops.
    over: Arc<AtomicBool>,
    /// The ticker's thread, woken and joined when this is dropped (no thread outlives its search).
    ticker: Option<JoinHandle<()>>,
    last_report: Instant,
    last_depth: u32,
}

impl Drop for Thinking {
    fn drop(&mut self) {
        self.over.store(true, Ordering::Relaxed);
        if let Some(ticker) = self.ticker.take() {
            ticker.thread().unpark();
            // The ticker never blocks (its `Tick` is dropped when the session's queue is full), so it ends at once.
            let _ = ticker.join();
        }
    }
}

type Notify = Arc<dyn Fn(GuideEvent) + Send + Sync>;

/// One GUIDE session: the game, the current move, the mode, the level and the search under way.
pub struct GuideSession {
    analysis: Analysis,
    notify: Notify,
    config: GuideConfig,
    threads: u32,
    analysis_depth: u32,
    hash_mb: u32,
    /// The game's start position, its moves, and how many of them are played on `board`.
    start: Draughts,
    moves: Vec<Move>,
    current: usize,
    board: Draughts,
    mode: Mode,
    level: Level,
    /// The engine plays White, Black.
    engine_plays: [bool; 2],
    /// Time used by White and Black as the last `go` said, in seconds.
    reported: Option<[f64; 2]>,
    /// Time the engine's own searches used for White and Black.
    own_used: [Duration; 2],
    thinking: Option<Thinking>,
    /// The input ended while the engine was thinking of a game's move: it answers with what it has, then the
    /// session ends.
    closing: bool,
    next_id: u64,
    /// Since when the session has been idle: no command and no search.
    idle_since: Instant,
}

/// GUIDE's error form: `error <text>`.
const ERRORS: ErrorForm = ErrorForm { command: "error", invalid_move: "error" };

fn error(e: impl Into<SessionError>) -> Reply {
    ERRORS.reply(&e.into())
}

fn notation(e: &NotationError) -> String {
    format!("{} `{}`", e.message, shorten(&e.token))
}

fn side_index(side: Side) -> usize {
    if side == Draughts::WHITE_SIDE { 0 } else { 1 }
}

fn seconds(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64())
}

/// The moves of a line in PDN, from `root`.
fn pdn_line(root: &Draughts, moves: &[Move]) -> String {
    crate::game::format_line(root, moves).join(" ")
}

/// The `searchInfo` line of a completed depth, or of the root move being searched.
pub fn info_line(root: &Draughts, info: &Info<Move>) -> String {
    let mut line = format!("searchInfo ply {}", info.depth);
    if let Some(m) = info.currmove {
        line.push_str(&format!(" currmove {}", root.pdn_move(m)));
        if let Some(n) = info.currmovenumber {
            line.push_str(&format!(" currmovenumber {n}"));
        }
    } else {
        line.push_str(&format!(" score {}", score_number(info.score)));
    }
    line.push_str(&format!(
        " nodes {} neval {} time {}",
        info.nodes,
        info.neval,
        seconds(Duration::from_millis(info.time_ms))
    ));
    if info.currmove.is_none() && !info.pv.is_empty() {
        line.push_str(" pv ");
        line.push_str(&pdn_line(root, &info.pv));
    }
    line
}

/// Read a number of seconds: finite, 0 to [`MAX_SECONDS`].
fn parse_seconds(what: &str, text: &str) -> Result<f64, String> {
    // A GUI on a Windows locale with a decimal comma (Dutch, French) writes `12,5`: one comma, as a point.
    let number = if text.matches(',').count() == 1 && !text.contains('.') {
        std::borrow::Cow::Owned(text.replace(',', "."))
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=MAX_SECONDS).contains(&v) => Ok(v),
        Ok(_) => Err(format!("{what} `{}` is out of range (0-{MAX_SECONDS} seconds)", shorten(text))),
        Err(_) => Err(format!("{what} `{}` is not a number of seconds", shorten(text))),
    }
}

fn parse_int<T: std::str::FromStr + PartialOrd + std::fmt::Display>(
    what: &str,
    text: &str,
    lo: T,
    hi: T,
) -> Result<T, String> {
    match text.parse::<T>() {
        Ok(v) if v >= lo && v <= hi => Ok(v),
        Ok(_) => Err(format!("{what} `{}` is out of range ({lo}-{hi})", shorten(text))),
        Err(_) => Err(format!("{what} `{}` is not a whole number", shorten(text))),
    }
}

/// The arguments must be exactly `n`.
fn arity(command: &str, args: &[&str], n: usize, usage: &str) -> Result<(), String> {
    match args.len().cmp(&n) {
        std::cmp::Ordering::Equal => Ok(()),
        std::cmp::Ordering::Less => Err(format!("{command} needs {usage}")),
        std::cmp::Ordering::Greater => {
            Err(format!("{command} takes {usage}, got also `{}`", shorten(&args[n..].join(" "))))
        }
    }
}

impl GuideSession {
    /// A session searching on `pool`; `notify` (called on worker threads) must bring each [`GuideEvent`] back
    /// to [`GuideSession::on_event`], and must not block on a `Tick` (drop it rather: a search's ticker thread is
    /// joined when the search is dropped). With `config.own_pool` the pool's table should have `config.hash_mb` MiB.
    pub fn new(analysis: Analysis, config: GuideConfig, notify: impl Fn(GuideEvent) + Send + Sync + 'static) -> Self {
        let threads = config.threads.clamp(1, config.max_threads.max(1));
        GuideSession {
            analysis,
            notify: Arc::new(notify),
            threads,
            analysis_depth: config.analysis_depth.clamp(1, MAX_DEPTH),
            hash_mb: config.hash_mb.max(1),
            config,
            start: Draughts::start(),
            moves: Vec::new(),
            current: 0,
            board: Draughts::start(),
            mode: Mode::Normal,
            level: Level::default(),
            engine_plays: [true, true],
            reported: None,
            own_used: [Duration::ZERO; 2],
            thinking: None,
            closing: false,
            next_id: 0,
            idle_since: Instant::now(),
        }
    }

    /// The position at the current move.
    pub fn board(&self) -> &Draughts {
        &self.board
    }

    /// The game: its start, its moves, and the current move number.
    pub fn game(&self) -> (&Draughts, &[Move], usize) {
        (&self.start, &self.moves, self.current)
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn level(&self) -> Level {
        self.level
    }

    pub fn is_thinking(&self) -> bool {
        self.thinking.is_some()
    }

    /// The handshake: name, author, options, `engineok`.
    pub fn handshake(&self) -> Vec<String> {
        let mut lines =
            vec![format!("name kibitz {}", env!("CARGO_PKG_VERSION")), "author the kibitz authors".to_string()];
        for (id, name, default, min, max) in self.options() {
            lines.push(format!("option {} {name} type {TYPE_SPIN} default {default} min {min} max {max}", id as u32));
        }
        lines.push("engineok".to_string());
        lines
    }

    /// The options offered: id, name, current value, range.
    fn options(&self) -> Vec<(OptionId, &'static str, u32, u32, u32)> {
        let mut v = vec![
            (OptionId::Threads, "Threads", self.threads, 1, self.config.max_threads.max(1)),
            (OptionId::AnalysisDepth, "Analysis_depth", self.analysis_depth, 1, MAX_DEPTH),
        ];
        if self.config.own_pool {
            v.push((OptionId::HashMb, "Hash_MB", self.hash_mb, 1, 1024));
        }
        v
    }

    /// One command line (commands are already split at control characters).
    pub fn on_line(&mut self, line: &str) -> Reply {
        // Only a command holds the idle limit off: separators alone (an empty line) do not.
        if !line.trim().is_empty() {
            self.idle_since = Instant::now();
        }
        let (command, escape) = match line.split_once('#') {
            Some((c, e)) => (c, Some(e)),
            None => (line, None),
        };
        let mut reply = if command.trim().is_empty() { Reply::none() } else { self.command(command) };
        if let Some(escape) = escape
            && !reply.quit
        {
            reply.lines.extend(self.escape(escape).lines);
        }
        reply
    }

    fn command(&mut self, line: &str) -> Reply {
        let mut words = line.split(' ').filter(|w| !w.is_empty());
        let Some(word) = words.next() else { return Reply::none() };
        let args: Vec<&str> = words.collect();
        let name = word.to_ascii_lowercase();
        tracing::debug!(command = %name, args = args.len(), "command");
        let result = match name.as_str() {
            "guide" => self.no_args("guide", &args).map(|()| Reply { lines: self.handshake(), quit: false }),
            "capabilities" => self.no_args("capabilities", &args).map(|()| self.capabilities()),
            "new" => self.no_args("new", &args).map(|()| self.new_game()),
            "position" => self.position(line),
            "game" => self.load_game(line),
            "move" => self.play_move(&args),
            "forward" => self.forward(&args),
            "jumpto" => self.jumpto(&args),
            "enginemode" => self.enginemode(&args),
            "levelsfixeddepth" => self.fixed_depth(&args),
            "levelsfixedtime" => self.fixed_time(&args),
            "levelsinfiniteanalysis" => self.no_args("levelsinfiniteanalysis", &args).map(|()| {
                self.level = Level::Infinite;
                Reply::none()
            }),
            "levelsblitzgame" => self.blitz(&args),
            "levelslonggame" => self.long_game(&args),
            "opponents" => self.opponents(&args),
            "go" => self.go(&args),
            "halt" => self.halt(&args),
            "requestposition" => self.no_args("requestposition", &args).map(|()| self.request_position()),
            "requestgame" => self
                .no_args("requestgame", &args)
                .map(|()| Reply::line(format!("game {}", Draughts::format_guide_game(&self.start, &self.moves)))),
            "ping" => Ok(Reply::line(format!("pong {}", Self::rest_of(line)).trim_end().to_string())),
            "setoption" => self.set_option(&args),
            "setcomment" => self.set_comment(&args),
            "showwindow" => self.show_window(&args),
            "offerdraw" => self.no_args("offerdraw", &args).map(|()| Reply::line("debug draw offer declined")),
            "quit" => Ok(self.quit()),
            _ => Err(format!("unknown command `{}`", shorten(word))),
        };
        result.unwrap_or_else(error)
    }

    /// Text after `#`: a `#kibitz` extension, or ignored.
    fn escape(&mut self, text: &str) -> Reply {
        let text = text.trim();
        let (program, rest) = text.split_once(' ').unwrap_or((text, ""));
        if !program.eq_ignore_ascii_case("kibitz") {
            return Reply::none();
        }
        let rest = rest.trim();
        let (word, arg) = rest.split_once(' ').unwrap_or((rest, ""));
        let arg = arg.trim();
        let result = match word.to_ascii_lowercase().as_str() {
            "eval" | "fen" | "pdn" if !arg.is_empty() => {
                Err(format!("#kibitz {word} takes no argument, got `{}`", shorten(arg)))
            }
            "eval" => Ok(Reply::line(format!("debug eval {}", self.board.evaluate()))),
            "fen" => Ok(Reply::line(format!("debug fen {}", self.board.to_fen()))),
            "pdn" => Ok(Reply::line(format!("debug pdn {}", pdn_line(&self.start, &self.moves[..self.current])))),
            "setfen" if arg.is_empty() => Err("#kibitz setfen needs a PDN FEN position".to_string()),
            "setfen" => match Draughts::from_fen(arg) {
                Ok(g) => {
                    self.set_game(g, Vec::new());
                    Ok(Reply::none())
                }
                Err(e) => Err(format!("#kibitz setfen: bad position: {}", notation(&e))),
            },
            "" => Err("#kibitz needs an extension (eval, fen, setfen, pdn)".to_string()),
            _ => Err(format!("unknown #kibitz extension `{}` (known: eval, fen, setfen, pdn)", shorten(word))),
        };
        result.unwrap_or_else(error)
    }

    fn no_args(&self, command: &str, args: &[&str]) -> Result<(), String> {
        arity(command, args, 0, "no argument")
    }

    fn capabilities(&self) -> Reply {
        let mut line = String::from("capabilities");
        for c in COMMANDS.iter().chain(&["quit"]) {
            line.push(' ');
            line.push_str(c);
        }
        for e in EXTENSIONS {
            line.push_str(" #kibitz ");
            line.push_str(e);
        }
        Reply::line(line)
    }

    /// Drop a running search without its answer.
    fn abandon(&mut self) {
        if let Some(t) = self.thinking.take() {
            t.job.cancel();
        }
    }

    /// A new game from `start` with `moves` (legal in turn), the current move the last.
    fn set_game(&mut self, start: Draughts, moves: Vec<Move>) {
        self.abandon();
        let mut board = start.clone();
        for &m in &moves {
            board.make(m);
        }
        self.start = start;
        self.current = moves.len();
        self.moves = moves;
        self.board = board;
        self.reported = None;
        self.own_used = [Duration::ZERO; 2];
    }

    fn new_game(&mut self) -> Reply {
        self.set_game(Draughts::start(), Vec::new());
        self.mode = Mode::Normal;
        if self.config.own_pool {
            self.analysis.pool().clear_hash();
        }
        Reply::none()
    }

    /// Everything after the command word.
    fn rest_of(line: &str) -> &str {
        let t = line.trim_start_matches(' ');
        t.split_once(' ').map_or("", |(_, rest)| rest).trim_matches(' ')
    }

    fn position(&mut self, line: &str) -> Result<Reply, String> {
        let text = Self::rest_of(line);
        if text.is_empty() {
            return Err("position needs `white` or `black` and 50 squares".into());
        }
        let g = Draughts::from_guide(text).map_err(|e| format!("position: bad position: {}", notation(&e)))?;
        self.set_game(g, Vec::new());
        Ok(Reply::none())
    }

    fn load_game(&mut self, line: &str) -> Result<Reply, String> {
        let text = Self::rest_of(line);
        if text.is_empty() {
            return Err("game needs a position, a number of moves and the moves".into());
        }
        let (start, moves) = Draughts::parse_guide_game(text).map_err(|e| format!("game: {}", notation(&e)))?;
        if moves.len() > MAX_GAME_MOVES {
            return Err(format!("game: {} moves, at most {MAX_GAME_MOVES} allowed", moves.len()));
        }
        self.set_game(start, moves);
        Ok(Reply::none())
    }

    fn play_move(&mut self, args: &[&str]) -> Result<Reply, String> {
        if args.is_empty() {
            return Err("move needs `<from> <to> <nkill> [kills]`, e.g. move 32 28 0".into());
        }
        let text = args.join(" ");
        let m = self
            .board
            .parse_guide_move(&text)
            .map_err(|e| format!("move {}: {} (position {})", shorten(&text), notation(&e), self.board.to_fen()))?;
        if self.current >= MAX_GAME_MOVES {
            return Err(format!("move: the game has reached {MAX_GAME_MOVES} moves, the most allowed"));
        }
        self.abandon();
        self.play(m);
        Ok(Reply::none())
    }

    /// Play a legal move at the current move; the game's later moves are dropped.
    fn play(&mut self, m: Move) {
        self.moves.truncate(self.current);
        self.moves.push(m);
        self.current += 1;
        self.board.make(m);
    }

    /// Move the current move to `target` (0..=moves).
    fn goto(&mut self, target: usize) {
        while self.current > target {
            self.board.unmake();
            self.current -= 1;
        }
        while self.current < target {
            self.board.make(self.moves[self.current]);
            self.current += 1;
        }
    }

    fn forward(&mut self, args: &[&str]) -> Result<Reply, String> {
        arity("forward", args, 1, "a number of moves")?;
        let n: i64 = parse_int("forward", args[0], -(MAX_GAME_MOVES as i64), MAX_GAME_MOVES as i64)?;
        let target = self.current as i64 + n;
        if target < 0 || target > self.moves.len() as i64 {
            return Err(format!(
                "forward {n}: the current move is {} of a game of {} moves",
                self.current,
                self.moves.len()
            ));
        }
        self.abandon();
        self.goto(target as usize);
        Ok(Reply::none())
    }

    fn jumpto(&mut self, args: &[&str]) -> Result<Reply, String> {
        arity("jumpto", args, 1, "a move number")?;
        let n: usize = parse_int("jumpto", args[0], 0, self.moves.len())
            .map_err(|e| format!("{e}: the game has {} moves", self.moves.len()))?;
        self.abandon();
        self.goto(n);
        Ok(Reply::none())
    }

    fn enginemode(&mut self, args: &[&str]) -> Result<Reply, String> {
        let mode = match args {
            ["0"] => Mode::Normal,
            ["2"] => Mode::PositionAnalysis,
            ["1", threshold] => {
                Mode::GameAnalysis { threshold: parse_int("enginemode 1 threshold", threshold, 1, MATE_VALUE)? }
            }
            ["1"] => return Err("enginemode 1 needs a threshold (a man = 100)".into()),
            ["0" | "2", extra, ..] | ["1", _, extra, ..] => {
                return Err(format!("enginemode: unexpected `{}`", shorten(extra)));
            }
            [] => {
                return Err(
                    "enginemode needs 0 (normal), 1 <threshold> (game analysis) or 2 (position analysis)".into()
                );
            }
            [other, ..] => return Err(format!("enginemode `{}`: expected 0, 1 or 2", shorten(other))),
        };
        self.abandon();
        self.mode = mode;
        Ok(Reply::none())
    }

    fn fixed_depth(&mut self, args: &[&str]) -> Result<Reply, String> {
        arity("levelsfixeddepth", args, 1, "a depth in plies")?;
        self.level = Level::FixedDepth(parse_int("levelsfixeddepth", args[0], 1, MAX_DEPTH)?);
        Ok(Reply::none())
    }

    fn fixed_time(&mut self, args: &[&str]) -> Result<Reply, String> {
        arity("levelsfixedtime", args, 1, "a time in seconds")?;
        let t = parse_seconds("levelsfixedtime", args[0])?;
        if t <= 0.0 {
            return Err("levelsfixedtime must be more than 0 seconds".into());
        }
        self.level = Level::FixedTime(t);
        Ok(Reply::none())
    }

    fn blitz(&mut self, args: &[&str]) -> Result<Reply, String> {
        arity("levelsblitzgame", args, 2, "the game time and the increment in seconds")?;
        let total = parse_seconds("levelsblitzgame time", args[0])?;
        let increment = parse_seconds("levelsblitzgame increment", args[1])?;
        if total <= 0.0 {
            return Err("levelsblitzgame: the game time must be more than 0 seconds".into());
        }
        self.level = Level::Blitz { total, increment };
        Ok(Reply::none())
    }

    fn long_game(&mut self, args: &[&str]) -> Result<Reply, String> {
        arity("levelslonggame", args, 5, "<ftc_time> <ftc_moves> <stc_time> <stc_moves> <ttc_time>")?;
        let ftc = parse_seconds("levelslonggame first time control", args[0])?;
        let ftc_moves = parse_int("levelslonggame first control moves", args[1], 1, MAX_GAME_MOVES as u32)?;
        let stc = parse_seconds("levelslonggame second time control", args[2])?;
        let stc_moves = parse_int("levelslonggame second control moves", args[3], 0, MAX_GAME_MOVES as u32)?;
        let ttc = parse_seconds("levelslonggame third time control", args[4])?;
        if ftc <= 0.0 {
            return Err("levelslonggame: the first time control must be more than 0 seconds".into());
        }
        self.level = Level::Long { ftc, ftc_moves, stc, stc_moves, ttc };
        Ok(Reply::none())
    }

    fn opponents(&mut self, args: &[&str]) -> Result<Reply, String> {
        arity("opponents", args, 1, "player-player, player-engine, engine-player or engine-engine")?;
        let text = args[0].to_ascii_lowercase();
        let who = |w: &str| match w {
            "engine" => Some(true),
            "player" => Some(false),
            _ => None,
        };
        let plays = text.split_once('-').and_then(|(w, b)| Some([who(w)?, who(b)?])).ok_or_else(|| {
            format!(
                "opponents `{}`: expected player-player, player-engine, engine-player or engine-engine",
                shorten(args[0])
            )
        })?;
        self.engine_plays = plays;
        Ok(Reply::none())
    }

    /// The position and its legal moves; a finished game has none, and a `debug` line says how it ended (the
    /// protocol has no word for it, and a position without moves alone reads as lost for the side to move, which
    /// a draw by the rules is not).
    fn request_position(&self) -> Reply {
        let mut line = format!("position {}", self.board.to_guide());
        match self.board.outcome() {
            None => {
                for m in self.board.legal_moves() {
                    line.push_str(" m ");
                    line.push_str(&self.board.guide_move(m));
                }
                Reply::line(line)
            }
            Some(end) => {
                Reply { lines: vec![line, format!("debug game over: {}", describe_end::<Draughts>(end))], quit: false }
            }
        }
    }

    fn set_option(&mut self, args: &[&str]) -> Result<Reply, String> {
        arity("setoption", args, 2, "an option id and a value")?;
        let options = self.options();
        let id: u32 = parse_int("setoption id", args[0], 0, u32::MAX)?;
        let Some(&(option, name, _, min, max)) = options.iter().find(|o| o.0 as u32 == id) else {
            let known: Vec<String> = options.iter().map(|o| format!("{} {}", o.0 as u32, o.1)).collect();
            return Err(format!("setoption: no option {id} (known: {})", known.join(", ")));
        };
        let value: u32 = parse_int(&format!("setoption {name}"), args[1], min, max)?;
        match option {
            OptionId::Threads => self.threads = value,
            OptionId::AnalysisDepth => self.analysis_depth = value,
            OptionId::HashMb => {
                if value != self.hash_mb {
                    self.analysis.pool().set_hash_mb(value as usize);
                }
                self.hash_mb = value;
            }
        }
        Ok(Reply::none())
    }

    fn set_comment(&mut self, args: &[&str]) -> Result<Reply, String> {
        let Some(n) = args.first() else { return Err("setcomment needs a move number and a comment".into()) };
        parse_int("setcomment move number", n, 0, self.moves.len())?;
        Ok(Reply::none())
    }

    fn show_window(&mut self, args: &[&str]) -> Result<Reply, String> {
        arity("showwindow", args, 1, "0 or 1")?;
        match args[0] {
            "0" | "1" => Ok(Reply::none()),
            other => Err(format!("showwindow `{}`: expected 0 or 1", shorten(other))),
        }
    }

    fn quit(&mut self) -> Reply {
        self.abandon();
        Reply::quit(vec!["quit".to_string()])
    }

    /// The number of moves `side` has played in this game.
    fn moves_played_by(&self, side: Side) -> u32 {
        let first = self.start.side_to_move();
        let plies = self.current as u32;
        // Plies 0, 2, 4... are played by the side to move at the start.
        if side == first { plies.div_ceil(2) } else { plies / 2 }
    }

    /// Time `side` has used, in seconds: what `go` said, else the engine's own searches.
    fn used(&self, side: Side) -> f64 {
        let i = side_index(side);
        match self.reported {
            Some(times) => times[i],
            None => self.own_used[i].as_secs_f64(),
        }
    }

    /// How long the search `go` starts in normal mode may take.
    fn limits(&self) -> Limits {
        let side = self.board.side_to_move();
        let clock = |total: f64, increment: f64, moves_to_go: Option<u32>| {
            let left = (total - self.used(side)).max(0.05);
            Limits {
                clock: Some(Clock {
                    remaining: Duration::from_secs_f64(left.min(MAX_SECONDS)),
                    increment: Duration::from_secs_f64(increment.min(MAX_SECONDS)),
                    moves_to_go,
                }),
                ..Limits::default()
            }
        };
        let done = self.moves_played_by(side);
        match self.level {
            Level::FixedDepth(d) => Limits::depth(d),
            Level::FixedTime(t) => Limits::movetime(Duration::from_secs_f64(t)),
            Level::Infinite => Limits::infinite(),
            Level::Blitz { total, increment } => clock(total + increment * done as f64, increment, None),
            Level::Long { ftc, ftc_moves, stc, stc_moves, ttc } => {
                if done < ftc_moves {
                    clock(ftc, 0.0, Some(ftc_moves - done))
                } else if done < ftc_moves + stc_moves {
                    clock(ftc + stc, 0.0, Some(ftc_moves + stc_moves - done))
                } else {
                    clock(ftc + stc + ttc, 0.0, None)
                }
            }
        }
    }

    /// The limits of one position of a game analysis.
    fn analysis_limits(&self) -> Limits {
        match self.level {
            Level::FixedDepth(d) => Limits::depth(d),
            Level::FixedTime(t) => Limits::movetime(Duration::from_secs_f64(t)),
            _ => Limits::depth(self.analysis_depth),
        }
    }

    fn go(&mut self, args: &[&str]) -> Result<Reply, String> {
        if self.thinking.is_some() {
            return Err("go: already searching; send halt first".into());
        }
        let reported = match args {
            [] => None,
            [w, b] => Some([parse_seconds("go white time", w)?, parse_seconds("go black time", b)?]),
            [_] => return Err("go takes the time used by white and by black, got one number".into()),
            [_, _, extra, ..] => return Err(format!("go takes two times, got also `{}`", shorten(extra))),
        };
        // The clock times count only for a `go` that starts: a refused one changes nothing (an audit found a
        // refused game analysis's times used by the next game's move).
        let previous = self.reported;
        if reported.is_some() {
            self.reported = reported;
        }
        let started = self.start_go();
        if started.is_err() {
            self.reported = previous;
        }
        started
    }

    /// The search `go` asks for in the current mode.
    fn start_go(&mut self) -> Result<Reply, String> {
        match self.mode {
            Mode::Normal | Mode::PositionAnalysis => {
                if let Some(end) = self.board.outcome() {
                    return Err(format!("go: the game is over: {}", describe_end::<Draughts>(end)));
                }
                // A game's move goes before analyses, and a clock worker may take it; not an endless search
                // (`levelsinfiniteanalysis`), which is an analysis that ends when the GUI says.
                let (limits, task, priority) = if self.mode == Mode::Normal {
                    let play = self.engine_plays[side_index(self.board.side_to_move())];
                    let priority = if self.level == Level::Infinite { Priority::High } else { Priority::Play };
                    (self.limits(), Task::Play { play }, priority)
                } else {
                    (Limits::infinite(), Task::Analyse, Priority::High)
                };
                self.submit(self.board.clone(), limits, task, priority)?;
                Ok(Reply::none())
            }
            Mode::GameAnalysis { threshold } => {
                if self.moves.is_empty() {
                    return Err("go: game analysis needs a game with moves (send game ...)".into());
                }
                let scan = GameScan {
                    threshold,
                    game: self.start.clone(),
                    index: 0,
                    results: Vec::with_capacity(self.moves.len() + 1),
                    comments: 0,
                };
                self.scan_next(Box::new(scan)).map(|lines| Reply { lines, quit: false })
            }
        }
    }

    /// Start search number `next_id` of `game`.
    fn submit(&mut self, game: Draughts, limits: Limits, task: Task, priority: Priority) -> Result<(), String> {
        let engine = match &self.config.engine {
            None => EngineChoice::Own,
            Some(name) => self
                .analysis
                .choose(<Draughts as Game>::NAME.parse().map_err(|e| format!("{e}"))?, Some(name))
                .map_err(|e| format!("go: {e}"))?,
        };
        let request = Request::new(game.clone(), limits)
            .priority(priority)
            .threads(self.threads.max(1) as usize)
            .currmove_after(REPORT_EVERY)
            .engine(engine)
            .client(self.config.client.clone());
        self.next_id += 1;
        let id = self.next_id;
        let notify = Arc::clone(&self.notify);
        let over = Arc::new(AtomicBool::new(false));
        let sink_over = Arc::clone(&over);
        let sink = move |event: Event<Move>| {
            if matches!(event, Event::Done(_)) {
                sink_over.store(true, Ordering::Relaxed);
            }
            notify(GuideEvent::Search { id, event });
        };
        let failed_notify = Arc::clone(&self.notify);
        let failed_over = Arc::clone(&over);
        let on_failure = move |failure: EngineFailure| {
            failed_over.store(true, Ordering::Relaxed);
            failed_notify(GuideEvent::Failed { id, message: failure.message });
        };
        let job = self
            .analysis
            .search_or_fail(&request, sink, on_failure)
            .map_err(|e| format!("go: cannot search now: {e}"))?;
        let ticker = spawn_ticker(id, Arc::clone(&over), Arc::clone(&self.notify));
        let now = Instant::now();
        self.thinking = Some(Thinking {
            id,
            job,
            task,
            started: now,
            root: game,
            halted: false,
            over,
            ticker,
            last_report: now,
            last_depth: 0,
        });
        Ok(())
    }

    fn halt(&mut self, args: &[&str]) -> Result<Reply, String> {
        arity("halt", args, 1, "0 (drop the best move) or 1 (play it)")?;
        let play = match args[0] {
            "0" => false,
            "1" => true,
            other => return Err(format!("halt `{}`: expected 0 or 1", shorten(other))),
        };
        let Some(thinking) = &mut self.thinking else { return Ok(Reply::none()) };
        match (&thinking.task, play) {
            (Task::GameScan(scan), _) => {
                let line = format!(
                    "debug game analysis halted after {} of {} moves, {} comments",
                    scan.index.saturating_sub(1),
                    self.moves.len(),
                    scan.comments
                );
                self.abandon();
                Ok(Reply::line(line))
            }
            (_, false) => {
                self.abandon();
                Ok(Reply::none())
            }
            (_, true) => {
                thinking.halted = true;
                thinking.job.stop();
                Ok(Reply::none())
            }
        }
    }

    /// One event from a search.
    pub fn on_event(&mut self, event: GuideEvent) -> Reply {
        let id = match &event {
            GuideEvent::Search { id, .. } | GuideEvent::Tick { id } | GuideEvent::Failed { id, .. } => *id,
        };
        if self.thinking.as_ref().is_none_or(|t| t.id != id) {
            // A dropped search, or one whose answer was already taken.
            return Reply::none();
        }
        let reply = match event {
            GuideEvent::Tick { .. } => self.tick(),
            GuideEvent::Search { event: Event::Info(info), .. } => self.info(&info),
            GuideEvent::Search { event: Event::Done(done), .. } => self.done(done),
            GuideEvent::Failed { message, .. } => {
                // The search is over without a move: the GUI is told why and may ask again (a fresh process).
                self.thinking = None;
                error(format!("the engine failed: {message}"))
            }
        };
        if self.closing && self.thinking.is_none() {
            self.abandon();
            return Reply::quit(reply.lines);
        }
        reply
    }

    fn tick(&mut self) -> Reply {
        let Some(t) = &mut self.thinking else { return Reply::none() };
        if matches!(t.task, Task::GameScan(_)) || t.last_report.elapsed() < REPORT_EVERY {
            return Reply::none();
        }
        t.last_report = Instant::now();
        Reply::line(format!("searchInfo ply {} time {}", t.last_depth, seconds(t.started.elapsed())))
    }

    fn info(&mut self, info: &Info<Move>) -> Reply {
        let Some(t) = &mut self.thinking else { return Reply::none() };
        if matches!(t.task, Task::GameScan(_)) || info.multipv != 1 {
            return Reply::none();
        }
        let report = if info.currmove.is_some() {
            t.last_report.elapsed() >= REPORT_EVERY
        } else {
            // Completed depths; failed aspiration windows only when nothing was said for a second.
            info.bound == ScoreBound::Exact || t.last_report.elapsed() >= REPORT_EVERY
        };
        if !report {
            return Reply::none();
        }
        t.last_report = Instant::now();
        t.last_depth = t.last_depth.max(info.depth);
        Reply::line(info_line(&t.root, info))
    }

    fn done(&mut self, done: Done<Move>) -> Reply {
        let Some(mut thinking) = self.thinking.take() else { return Reply::none() };
        let task = std::mem::replace(&mut thinking.task, Task::Analyse);
        match task {
            Task::GameScan(scan) => {
                drop(thinking);
                let lines = self.scan_result(scan, &done);
                Reply { lines, quit: false }
            }
            Task::Play { play } => self.answer(&thinking, &done, play || thinking.halted),
            Task::Analyse => self.answer(&thinking, &done, thinking.halted),
        }
    }

    /// The `move` of a finished search, played when `play`.
    fn answer(&mut self, thinking: &Thinking, done: &Done<Move>, play: bool) -> Reply {
        let Some(best) = done.best else {
            let end = done.game_end.unwrap_or_else(|| self.board.no_move_end());
            return error(format!("the game is over: {}", describe_end::<Draughts>(end)));
        };
        if !self.board.legal_moves().contains(&best) {
            // Cannot happen: the board does not change while a search runs.
            return error("internal error: the search answered a move that is not legal here");
        }
        let line = format!("move {}", self.board.guide_move(best));
        if play && self.current < MAX_GAME_MOVES {
            let side = side_index(self.board.side_to_move());
            self.own_used[side] += thinking.started.elapsed();
            self.play(best);
        }
        Reply::line(line)
    }

    /// Search the next position of a game analysis, or finish it.
    fn scan_next(&mut self, mut scan: Box<GameScan>) -> Result<Vec<String>, String> {
        let mut lines = Vec::new();
        let total = self.moves.len();
        // A finished position needs no search.
        while let Some(end) = scan.game.outcome() {
            let value = Value::of_end(end, scan.game.side_to_move());
            lines.extend(self.record(&mut scan, None, Some(value)));
            if scan.index > total {
                lines.push(format!(
                    "debug game analysis done: {total} moves, {} comments (threshold {})",
                    scan.comments, scan.threshold
                ));
                return Ok(lines);
            }
        }
        if scan.index < total {
            lines.push(format!("searchInfo string analysing move {} of {total}", scan.index + 1));
        }
        let game = scan.game.clone();
        let limits = self.analysis_limits();
        self.submit(game, limits, Task::GameScan(scan), Priority::Normal)?;
        Ok(lines)
    }

    /// Record the result of position `scan.index` and advance to the next; the comment on the move that led
    /// to it, if it deserves one.
    fn record(&mut self, scan: &mut GameScan, best: Option<Move>, value: Option<Value>) -> Option<String> {
        scan.results.push((best, value));
        let index = scan.index;
        scan.index += 1;
        let comment = if index > 0 { self.comment(scan, index - 1) } else { None };
        if index < self.moves.len() {
            scan.game.make(self.moves[index]);
        }
        comment
    }

    /// The comment on move `i` (from position `i` to `i + 1`), when it is flagged: judged exactly as an
    /// annotation job judges it ([`judge`]: the same values, caps and threshold rule).
    fn comment(&self, scan: &mut GameScan, i: usize) -> Option<String> {
        // A position without a value (an external engine that reported no evaluation) judges no move.
        let (best, before) = scan.results[i];
        let (best, before, after) = (best?, before?, scan.results[i + 1].1?.negate());
        let played = self.moves[i];
        let verdict = judge(before, after, best == played, scan.threshold);
        if !verdict.over_threshold {
            return None;
        }
        let mut position = self.start.clone();
        for &m in &self.moves[..i] {
            position.make(m);
        }
        scan.comments += 1;
        let side = Draughts::side_name(position.side_to_move());
        Some(format!(
            "setcomment {} {} loses {} (a man = 100; {}): better {}, score for {side} {before} instead of {after}",
            i + 1,
            position.pdn_move(played),
            verdict.loss,
            verdict.class.label().to_lowercase(),
            position.pdn_move(best),
        ))
    }

    fn scan_result(&mut self, mut scan: Box<GameScan>, done: &Done<Move>) -> Vec<String> {
        let value = match done.lines.first() {
            Some(line) => Some(Value::of_score(line.score)),
            None => done.game_end.map(|end| Value::of_end(end, scan.game.side_to_move())),
        };
        let mut lines: Vec<String> = self.record(&mut scan, done.best, value).into_iter().collect();
        let total = self.moves.len();
        if scan.index > total {
            lines.push(format!(
                "debug game analysis done: {total} moves, {} comments (threshold {})",
                scan.comments, scan.threshold
            ));
            return lines;
        }
        match self.scan_next(scan) {
            Ok(more) => lines.extend(more),
            Err(e) => lines.push(ERRORS.line(&SessionError::command(e))),
        }
        lines
    }

    /// The reply to a discarded over-long input line.
    pub fn on_line_too_long(&mut self, bytes: usize) -> Reply {
        error(format!("line of {bytes} bytes is longer than the limit of {} bytes, ignored", self.config.max_line))
    }

    /// The input was quiet for a while (the transport asks every quarter of the idle limit): close the session
    /// once it has been idle, with no command and no search, for the whole limit.
    pub fn on_idle(&mut self) -> Reply {
        let Some(idle) = self.config.idle else { return Reply::none() };
        if self.thinking.is_some() {
            self.idle_since = Instant::now();
            return Reply::none();
        }
        if self.idle_since.elapsed() < idle {
            return Reply::none();
        }
        let limit = idle.as_secs();
        self.abandon();
        Reply::quit(vec![format!("error no command for {limit} seconds (the idle limit): closing the connection")])
    }

    /// The input ended: stop any search and end the session.
    /// The input ended (the GUI closed its side, or the server is stopping and closed the reading side): a
    /// game's move being thought of is answered with what the search has, then the session ends; anything else
    /// is dropped at once.
    pub fn on_end_of_input(&mut self) -> Reply {
        if let Some(t) = &self.thinking
            && matches!(t.task, Task::Play { .. })
        {
            self.closing = true;
            t.job.stop();
            return Reply::none();
        }
        self.abandon();
        Reply::quit(Vec::new())
    }
}

/// A thread that sends `Tick { id }` every second until `over` is set (it sleeps parked: unpark it after setting
/// `over` and it ends at once).
fn spawn_ticker(id: u64, over: Arc<AtomicBool>, notify: Notify) -> Option<JoinHandle<()>> {
    let spawned = std::thread::Builder::new().name("kibitz-guide-tick".into()).spawn(move || {
        let mut next = Instant::now() + REPORT_EVERY;
        while !over.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now >= next {
                notify(GuideEvent::Tick { id });
                next = now + REPORT_EVERY;
            }
            std::thread::park_timeout(next.saturating_duration_since(now));
        }
    });
    match spawned {
        Ok(ticker) => Some(ticker),
        Err(e) => {
            tracing::warn!(error = %e, "no ticker thread: searchInfo comes only per depth");
            None
        }
    }
}

impl LineSession for GuideSession {
    type Event = GuideEvent;

    fn greeting(&mut self) -> Vec<String> {
        self.handshake()
    }

    fn on_line(&mut self, line: &str) -> Reply {
        GuideSession::on_line(self, line)
    }

    fn on_event(&mut self, event: GuideEvent) -> Reply {
        GuideSession::on_event(self, event)
    }

    fn on_line_too_long(&mut self, bytes: usize) -> Reply {
        GuideSession::on_line_too_long(self, bytes)
    }

    fn on_end_of_input(&mut self) -> Reply {
        GuideSession::on_end_of_input(self)
    }

    fn may_drop(event: &GuideEvent) -> bool {
        matches!(event, GuideEvent::Tick { .. } | GuideEvent::Search { event: Event::Info(_), .. })
    }

    fn is_separator(byte: u8) -> bool {
        byte < 32
    }

    fn on_idle(&mut self) -> Reply {
        GuideSession::on_idle(self)
    }
}

/// The transport settings of a session with `config`.
pub fn transport(config: &GuideConfig) -> Transport {
    Transport { max_line: config.max_line, reader_name: "kibitz-guide-read" }
}

/// Run a GUIDE session on stdin/stdout (for testing by hand; GUIs connect over TCP) on a pool of its own, or
/// on `config.engine` of `engines`.
pub fn run_stdio(config: GuideConfig, engines: crate::engines::Engines) -> std::io::Result<()> {
    let span = tracing::info_span!("guide_session", transport = "stdio");
    let _enter = span.enter();
    let pool =
        Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: config.hash_mb.max(1) as usize, clock_workers: 0 });
    let analysis = Analysis::with_engines(pool, None, engines);
    let mut stdout = std::io::stdout().lock();
    let transport = transport(&config);
    let config = GuideConfig { idle: None, own_pool: true, ..config };
    stdio::run_with(
        move |events: EventSender<GuideEvent>| GuideSession::new(analysis, config, move |e| events.send(e)),
        std::io::stdin(),
        &mut stdout,
        transport,
    )
}
