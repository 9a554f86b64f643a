//! The Qianhong plugin protocol (QHPLUGIN V1.3, the plugin document published with Qianhong) as a transport-free
//! session state machine, [`info_lines`] (what `-info` prints) and [`run_stdio`] (the `-plugin` mode on
//! stdin/stdout).
//!
//! | command | reply |
//! |---|---|
//! | `LEVEL` | the current level number |
//! | `LEVEL <n>` | `OK - Set AI level to <n>`, or `ERROR` when `n` is not a level |
//! | `FEN <fen>` | `OK`, or `ERROR bad FEN ...` naming the bad token |
//! | `PLAY <move>` | `OK`, or `ERROR` naming the move and why it is not legal |
//! | `LOAD <count>` + count move lines | `OK` once all lines are read and every move is legal in turn; else `ERROR` |
//! | `AI` | the move in ICCS (`B9-C7`), played on the internal board; `ERROR game over: ...` when the game is over |
//! | `HINTS` | up to [`MAX_HINTS`] lines `<move> score <s> depth <d> pv <moves>`, best first, then `ENDHINTS` |
//! | `BAN <count>` + count move lines | `OK` (the moves are excluded from the next `AI` or `HINTS`), or `ERROR` |
//! | `UNDO` | `OK`, or `ERROR` when no move was played since the start or the last `FEN` |
//! | `BGTHINK OFF` | `OK` (background thinking is not implemented: `-info` says `BGTHINK 0`) |
//! | `BGTHINK ON` | `ERROR background thinking is not supported` |
//! | `TIMEOUT` | nothing; a running `AI` or `HINTS` answers at once with its best result so far |
//! | `ABORT` | nothing; a running `AI` or `HINTS` answers `ABORTED` |
//! | `QUIT` | `BYE`, and the plugin exits |
//!
//! Conventions of this plugin:
//!
//! * Commands are read case-insensitively, tokens separated by any whitespace; empty lines are ignored.
//!   Moves are read in ICCS (`H2-E2`, any case) or as coordinates (`h2e2`) and written in ICCS upper case.
//! * Any command other than `TIMEOUT` that arrives while `AI` or `HINTS` is running first stops it, which
//!   answers `ABORTED`, then the command runs. If the search was already told `TIMEOUT` (its answer is on its
//!   way), its answer is written instead of `ABORTED`.
//! * Every malformed command, FEN or move is answered `ERROR <what was wrong>` and changes nothing. `LOAD`
//!   and `BAN` read all their lines first and check every move before anything changes; a count must be
//!   0-[`MAX_LIST`]: a larger one, or one that is not a number, gets `ERROR` at once and no lines are read for
//!   it (so a huge count cannot swallow the commands after it). A `LOAD` cut short by the end of input changes
//!   nothing.
//! * `BAN` replaces the banned moves; they hold for the next `AI` or `HINTS` that answers (an aborted one, or
//!   one answered `ERROR`, keeps them) and are forgotten when the board changes. If every legal move is
//!   banned, `AI` and `HINTS` answer `ERROR`.
//! * The game is over (for `AI` and `HINTS`, which answer `ERROR game over: ...`) when the side to move has no
//!   legal move or the game's own rules end it (repetition, perpetual check, 60 moves without capture).
//! * A line longer than 1 MiB is discarded and answered with `ERROR`. The end of input ends the plugin.

use std::sync::Arc;
use std::time::Duration;

use crate::analysis::{Analysis, Request};
use crate::engines::Engines;
use crate::game::{Game, NotationError};
use crate::games::xiangqi::{Move, Xiangqi};
use crate::pool::{JobHandle, Pool, PoolConfig, Priority};
use crate::search::{Done, Score};

pub use super::session::SearchEnded;
use super::session::{
    AnswerSlot, DEFAULT_LEVEL, Ending, ErrorForm, LEVELS, Level, SessionError, describe_end, failure_message,
    search_to_slot, shorten,
};
pub use super::stdio::Reply;
use super::stdio::{self, EventSender, LineSession};

/// The protocol version line.
pub const VERSION_LINE: &str = "QHPLUGIN V1.3";
/// The engine name Qianhong shows.
pub const ENGINE_NAME: &str = "kibitz";
/// The most moves a `LOAD` or `BAN` may list.
pub const MAX_LIST: usize = 1000;
/// How long an interrupted search is given to let its worker go before the next command runs.
const CANCEL_GRACE: Duration = Duration::from_millis(250);
/// The most lines `HINTS` answers.
pub const MAX_HINTS: usize = 5;
/// How long a command waits for a search told `TIMEOUT` to hand over its answer.
const TIMEOUT_GRACE: Duration = Duration::from_secs(5);

/// What `-info` prints, line by line.
pub fn info_lines() -> Vec<String> {
    let mut lines = vec![VERSION_LINE.to_string(), ENGINE_NAME.to_string(), format!("LEVELS {}", LEVELS.len())];
    lines.extend(LEVELS.iter().enumerate().map(|(i, l)| format!("{} - {}", i + 1, l.description)));
    for line in ["UNDO 1", "HINTS 1", "RULES 1", "BGTHINK 0", "TIMEOUT 1"] {
        lines.push(line.to_string());
    }
    lines.push(format!("kibitz {} Xiangqi engine", env!("CARGO_PKG_VERSION")));
    lines.push("Alpha-beta search with iterative deepening".to_string());
    lines.push("ENDINFO".to_string());
    lines
}

/// Qianhong's error form: `ERROR <text>`.
const ERRORS: ErrorForm = ErrorForm { command: "ERROR", invalid_move: "ERROR" };

fn error(message: impl Into<String>) -> Reply {
    ERRORS.reply(&SessionError::command(message))
}

fn ok(text: Option<&str>) -> Reply {
    Reply::line(match text {
        Some(t) => format!("OK {t}"),
        None => "OK".to_string(),
    })
}

/// What was wrong with a move, naming the part that was wrong when it is not the whole move.
fn move_error(e: &NotationError, text: &str) -> String {
    if e.token == text.trim() {
        format!("`{}`: {}", shorten(text), e.message)
    } else {
        format!("`{}`: {} `{}`", shorten(text), e.message, shorten(&e.token))
    }
}

fn score_text(score: Score) -> String {
    match score {
        Score::Cp(cp) => format!("score {cp}"),
        Score::Mate(plies) if plies > 0 => format!("mate in {}", (plies + 1) / 2),
        Score::Mate(plies) => format!("mated in {}", (plies.saturating_neg() + 1) / 2),
    }
}

/// Which command a search answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    Ai,
    Hints,
}

/// A search under way.
struct Thinking {
    id: u64,
    job: JobHandle,
    purpose: Purpose,
    /// The answer, filled by the worker.
    slot: AnswerSlot<Move>,
    /// TIMEOUT was received: the answer is wanted, not dropped.
    timed_out: bool,
}

/// A `LOAD` or `BAN` whose move lines are being read.
struct Pending {
    purpose: ListPurpose,
    /// Lines still to read.
    remaining: usize,
    /// The lines read (each cut to what an error may quote: a move is a few characters).
    moves: Vec<String>,
    /// A line of the list was too long to read (its length): the list is refused once it has all come.
    too_long: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ListPurpose {
    Load,
    Ban,
}

impl ListPurpose {
    fn name(self) -> &'static str {
        match self {
            ListPurpose::Load => "LOAD",
            ListPurpose::Ban => "BAN",
        }
    }
}

/// One Qianhong plugin session: the internal board, the level, the banned moves and the search under way.
pub struct QianhongSession {
    analysis: Analysis,
    notify: Arc<dyn Fn(SearchEnded) + Send + Sync>,
    /// 1-based.
    level: usize,
    game: Xiangqi,
    banned: Vec<Move>,
    thinking: Option<Thinking>,
    pending: Option<Pending>,
    next_id: u64,
    /// Search with this external engine of the engines file instead of kibitz's own (`-engine`).
    engine: Option<String>,
}

impl QianhongSession {
    /// A session searching on `pool`; `notify` (called on a worker thread) must bring each [`SearchEnded`]
    /// back to [`QianhongSession::on_event`].
    pub fn new(analysis: Analysis, notify: impl Fn(SearchEnded) + Send + Sync + 'static) -> Self {
        QianhongSession {
            analysis,
            notify: Arc::new(notify),
            level: DEFAULT_LEVEL,
            game: Xiangqi::start(),
            banned: Vec::new(),
            thinking: None,
            pending: None,
            next_id: 0,
            engine: None,
        }
    }

    /// The session searching with the external engine `engine` of its analysis's engines file (`None`, or
    /// `kibitz`: kibitz's own).
    pub fn with_engine(mut self, engine: Option<String>) -> Self {
        self.engine = engine;
        self
    }

    /// The internal board.
    pub fn game(&self) -> &Xiangqi {
        &self.game
    }

    pub fn level(&self) -> usize {
        self.level
    }

    pub fn banned(&self) -> &[Move] {
        &self.banned
    }

    pub fn is_thinking(&self) -> bool {
        self.thinking.is_some()
    }

    /// Whether move lines of a `LOAD` or `BAN` are awaited.
    pub fn is_reading_list(&self) -> bool {
        self.pending.is_some()
    }

    /// One input line.
    pub fn on_line(&mut self, line: &str) -> Reply {
        if self.pending.is_some() {
            return self.list_line(line);
        }
        let mut tokens = line.split_whitespace();
        let Some(command) = tokens.next() else { return Reply::none() };
        let args: Vec<&str> = tokens.collect();
        let word = command.to_ascii_uppercase();
        tracing::debug!(command = %word, args = args.len(), "command");
        match word.as_str() {
            "TIMEOUT" => return self.timeout(),
            "ABORT" => return Reply { lines: self.interrupt(), quit: false },
            _ => {}
        }
        let mut lines = self.interrupt();
        let reply = match word.as_str() {
            "LEVEL" => self.level_command(&args),
            "FEN" => self.fen(line),
            "PLAY" => self.play(&args),
            "LOAD" => self.start_list(ListPurpose::Load, &args),
            "AI" => self.search(Purpose::Ai, &args),
            "HINTS" => self.search(Purpose::Hints, &args),
            "UNDO" => self.undo(&args),
            "BAN" => self.start_list(ListPurpose::Ban, &args),
            "BGTHINK" => self.bgthink(&args),
            "QUIT" => Reply::quit(vec!["BYE".to_string()]),
            _ => error(format!("unknown command `{}`", shorten(command))),
        };
        lines.extend(reply.lines);
        Reply { lines, quit: reply.quit }
    }

    /// A search reported its end.
    pub fn on_event(&mut self, event: SearchEnded) -> Reply {
        match &self.thinking {
            Some(t) if t.id == event.0 => {}
            // An aborted search, or one whose answer was already taken.
            _ => return Reply::none(),
        }
        let Some(thinking) = self.thinking.take() else { return Reply::none() };
        match thinking.slot.take() {
            Some(ending) => self.answer(thinking.purpose, ending),
            None => error("internal error: the search ended without an answer"),
        }
    }

    /// The reply to a discarded over-long input line.
    pub fn on_line_too_long(&mut self, bytes: usize) -> Reply {
        if let Some(p) = &mut self.pending {
            // It is one of the list's lines: the list is refused, with one answer, once all of it has come (the
            // lines after it are still the list's, not commands).
            p.remaining -= 1;
            p.too_long.get_or_insert(bytes);
            return self.list_line_counted();
        }
        let mut lines = self.interrupt();
        lines.push(format!(
            "ERROR line of {bytes} bytes is longer than the limit of {} bytes, ignored",
            stdio::MAX_LINE
        ));
        Reply { lines, quit: false }
    }

    /// The end of input: stop any search, drop an unfinished list, quit.
    pub fn on_end_of_input(&mut self) -> Reply {
        self.pending = None;
        if let Some(t) = self.thinking.take() {
            t.job.cancel();
        }
        Reply::quit(Vec::new())
    }

    /// Stop a running search before another command: `ABORTED`, or its answer when TIMEOUT already asked
    /// for it.
    fn interrupt(&mut self) -> Vec<String> {
        let Some(thinking) = self.thinking.take() else { return Vec::new() };
        if thinking.timed_out
            && thinking.job.wait_timeout(TIMEOUT_GRACE)
            && let Some(ending) = thinking.slot.take()
        {
            return self.answer(thinking.purpose, ending).lines;
        }
        thinking.job.cancel();
        // A cancelled search holds its place in the plugin's small pool until its worker lets it go (within
        // milliseconds): waiting for that keeps a quick run of commands from finding every place taken.
        thinking.job.wait_timeout(CANCEL_GRACE);
        vec!["ABORTED".to_string()]
    }

    fn timeout(&mut self) -> Reply {
        if let Some(t) = &mut self.thinking {
            t.timed_out = true;
            t.job.stop();
        }
        Reply::none()
    }

    /// The reply of a finished search (`ERROR` when its external engine failed).
    fn answer(&mut self, purpose: Purpose, ending: Ending<Move>) -> Reply {
        let done: Done<Move> = match ending {
            Ok(done) => done,
            Err(failure) => return error(failure_message(&failure)),
        };
        let Some(best) = done.best else {
            let end = done.game_end.unwrap_or_else(|| self.game.no_move_end());
            return error(format!("game over: {}", describe_end::<Xiangqi>(end)));
        };
        if !self.game.legal_moves().contains(&best) {
            // Cannot happen: the board does not change while thinking.
            return error("internal error: the search answered a move that is not legal here");
        }
        match purpose {
            Purpose::Ai => {
                self.game.make(best);
                self.banned.clear();
                Reply::line(Xiangqi::move_to_iccs(best))
            }
            Purpose::Hints => {
                let mut lines: Vec<String> = done
                    .lines
                    .iter()
                    .filter(|l| !l.pv.is_empty())
                    .take(MAX_HINTS)
                    .map(|l| {
                        let pv: Vec<String> = l.pv.iter().map(|&m| Xiangqi::move_to_iccs(m)).collect();
                        format!("{} {} depth {} pv {}", pv[0], score_text(l.score), l.depth, pv.join(" "))
                    })
                    .collect();
                if lines.is_empty() {
                    lines.push(Xiangqi::move_to_iccs(best));
                }
                lines.push("ENDHINTS".to_string());
                self.banned.clear();
                Reply { lines, quit: false }
            }
        }
    }

    fn no_args(command: &str, args: &[&str]) -> Option<Reply> {
        args.first().map(|extra| error(format!("{command} takes no argument, got `{}`", shorten(extra))))
    }

    fn level_command(&mut self, args: &[&str]) -> Reply {
        let text = match args {
            [] => return Reply::line(self.level.to_string()),
            [text] => text,
            [_, extra, ..] => return error(format!("LEVEL takes one number, got also `{}`", shorten(extra))),
        };
        match text.parse::<usize>() {
            Ok(n) if (1..=LEVELS.len()).contains(&n) => {
                self.level = n;
                ok(Some(&format!("- Set AI level to {n}")))
            }
            _ => error(format!("LEVEL `{}` is not a level (1-{})", shorten(text), LEVELS.len())),
        }
    }

    /// The board changed: bans were for the old position.
    fn set_game(&mut self, game: Xiangqi) {
        self.game = game;
        self.banned.clear();
    }

    fn fen(&mut self, line: &str) -> Reply {
        // Everything after the command word.
        let text = line.trim_start();
        let text = text.split_once(char::is_whitespace).map_or("", |(_, rest)| rest).trim();
        if text.is_empty() {
            return error("FEN needs a position");
        }
        match Xiangqi::from_fen(text) {
            Ok(game) => {
                self.set_game(game);
                self.analysis.pool().clear_hash();
                ok(None)
            }
            Err(e) => error(format!("bad FEN: `{}`: {}", shorten(&e.token), e.message)),
        }
    }

    fn play(&mut self, args: &[&str]) -> Reply {
        let text = match args {
            [text] => text,
            [] => return error("PLAY needs a move, e.g. PLAY H2-E2"),
            [_, extra, ..] => return error(format!("PLAY takes one move, got also `{}`", shorten(extra))),
        };
        match self.game.parse_move_text(text) {
            Ok(m) => {
                let mut game = self.game.clone();
                game.make(m);
                self.set_game(game);
                ok(None)
            }
            Err(e) => error(format!("PLAY {} (position {})", move_error(&e, text), self.game.to_fen())),
        }
    }

    fn undo(&mut self, args: &[&str]) -> Reply {
        if let Some(r) = Self::no_args("UNDO", args) {
            return r;
        }
        if self.game.plies() == 0 {
            return error("UNDO: no move to take back");
        }
        let mut game = self.game.clone();
        game.unmake();
        self.set_game(game);
        ok(None)
    }

    fn bgthink(&mut self, args: &[&str]) -> Reply {
        match args {
            [flag] if flag.eq_ignore_ascii_case("OFF") => ok(None),
            [flag] if flag.eq_ignore_ascii_case("ON") => error("background thinking is not supported"),
            [flag] => error(format!("BGTHINK `{}`: expected ON or OFF", shorten(flag))),
            [] => error("BGTHINK needs ON or OFF"),
            [_, extra, ..] => error(format!("BGTHINK takes ON or OFF, got also `{}`", shorten(extra))),
        }
    }

    fn start_list(&mut self, purpose: ListPurpose, args: &[&str]) -> Reply {
        let name = purpose.name();
        let text = match args {
            [text] => text,
            [] => return error(format!("{name} needs a count")),
            [_, extra, ..] => return error(format!("{name} takes one count, got also `{}`", shorten(extra))),
        };
        let Ok(count) = text.parse::<usize>() else {
            return error(format!("{name} count `{}` is not a number", shorten(text)));
        };
        // Checked before any line is read: a huge count would swallow every later command.
        if count > MAX_LIST {
            return error(format!("{name} of {count} moves: at most {MAX_LIST} allowed; nothing changed"));
        }
        if count == 0 {
            return self.finish_list(purpose, Vec::new());
        }
        self.pending = Some(Pending { purpose, remaining: count, moves: Vec::new(), too_long: None });
        Reply::none()
    }

    fn list_line(&mut self, line: &str) -> Reply {
        let Some(p) = &mut self.pending else { return Reply::none() };
        if line.trim().is_empty() {
            // Ignored here too, as everywhere: not one of the list's moves.
            return Reply::none();
        }
        p.remaining -= 1;
        // Kept only as far as an error would quote it: a list of long lines holds no memory.
        p.moves.push(shorten(line.trim()));
        self.list_line_counted()
    }

    /// A line of the pending list has been counted: the list's answer once the last one has come.
    fn list_line_counted(&mut self) -> Reply {
        if self.pending.as_ref().is_none_or(|p| p.remaining > 0) {
            return Reply::none();
        }
        let Some(p) = self.pending.take() else { return Reply::none() };
        if let Some(bytes) = p.too_long {
            let name = p.purpose.name();
            return error(format!("{name}: a move line of {bytes} bytes is too long; nothing changed"));
        }
        self.finish_list(p.purpose, p.moves)
    }

    /// Check every move of a complete list, then apply it.
    fn finish_list(&mut self, purpose: ListPurpose, moves: Vec<String>) -> Reply {
        let name = purpose.name();
        match purpose {
            ListPurpose::Load => {
                let mut game = self.game.clone();
                for (i, text) in moves.iter().enumerate() {
                    match game.parse_move_text(text) {
                        Ok(m) => game.make(m),
                        Err(e) => {
                            return error(format!(
                                "LOAD move {} {} (position {}); nothing changed",
                                i + 1,
                                move_error(&e, text),
                                game.to_fen()
                            ));
                        }
                    }
                }
                if !moves.is_empty() {
                    self.set_game(game);
                }
                ok(None)
            }
            ListPurpose::Ban => {
                let mut banned = Vec::with_capacity(moves.len());
                for (i, text) in moves.iter().enumerate() {
                    match self.game.parse_move_text(text) {
                        Ok(m) => banned.push(m),
                        Err(e) => {
                            return error(format!("{name} move {} {}; nothing changed", i + 1, move_error(&e, text)));
                        }
                    }
                }
                self.banned = banned;
                ok(None)
            }
        }
    }

    fn search(&mut self, purpose: Purpose, args: &[&str]) -> Reply {
        let name = if purpose == Purpose::Ai { "AI" } else { "HINTS" };
        if let Some(r) = Self::no_args(name, args) {
            return r;
        }
        // The bans hold until a search answers (one aborted, or one that cannot start, keeps them).
        let banned = self.banned.clone();
        if let Some(end) = self.game.outcome() {
            return error(format!("game over: {}", describe_end::<Xiangqi>(end)));
        }
        let allowed = self.game.legal_moves().into_iter().filter(|m| !banned.contains(m)).count();
        if allowed == 0 {
            return error("every legal move is banned");
        }
        let level = Level::numbered(self.level);
        let multipv = if purpose == Purpose::Hints { allowed.min(MAX_HINTS) } else { 1 };
        let request = Request::new(self.game.clone(), level.limits())
            .multipv(multipv as u32)
            .priority(Priority::High)
            .threads(level.threads())
            .excluded(banned.iter().map(|&m| Xiangqi::move_key(m)).collect());
        self.next_id += 1;
        let id = self.next_id;
        let notify = Arc::clone(&self.notify);
        match search_to_slot(&self.analysis, self.engine.as_deref(), request, id, notify) {
            Ok((job, slot)) => {
                self.thinking = Some(Thinking { id, job, purpose, slot, timed_out: false });
                Reply::none()
            }
            Err(e) => error(format!("{name}: cannot search now: {e}")),
        }
    }
}

impl LineSession for QianhongSession {
    type Event = SearchEnded;

    fn greeting(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn on_line(&mut self, line: &str) -> Reply {
        QianhongSession::on_line(self, line)
    }

    fn on_event(&mut self, event: SearchEnded) -> Reply {
        QianhongSession::on_event(self, event)
    }

    fn on_line_too_long(&mut self, bytes: usize) -> Reply {
        QianhongSession::on_line_too_long(self, bytes)
    }

    fn on_end_of_input(&mut self) -> Reply {
        QianhongSession::on_end_of_input(self)
    }

    fn may_drop(_: &SearchEnded) -> bool {
        false
    }
}

/// Run the plugin mode on stdin/stdout until `QUIT` or the end of stdin. One search worker (its search may
/// use several threads at the timed levels), or the external engine `engine` of `engines`; logging, if any,
/// must go to stderr.
pub fn run_stdio(engine: Option<String>, engines: Engines) -> std::io::Result<()> {
    let span = tracing::info_span!("qianhong_session", transport = "stdio");
    let _enter = span.enter();
    let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: 64, clock_workers: 0 });
    let analysis = Analysis::with_engines(pool, None, engines);
    let mut stdout = std::io::stdout().lock();
    stdio::run(
        move |events: EventSender<SearchEnded>| {
            QianhongSession::new(analysis, move |e| events.send(e)).with_engine(engine)
        },
        std::io::stdin(),
        &mut stdout,
    )
}

/// What the executable's arguments ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `-info`: print [`info_lines`] and exit.
    Info,
    /// `-plugin [debug]`: the command loop; `debug` traces to stderr.
    Plugin { debug: bool },
}

/// Read the executable's arguments (without the program name): `-info` or `-plugin [debug]`, any case.
pub fn parse_mode<S: AsRef<str>>(args: &[S]) -> Option<Mode> {
    let args: Vec<String> = args.iter().map(|a| a.as_ref().to_ascii_lowercase()).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["-info"] => Some(Mode::Info),
        ["-plugin"] => Some(Mode::Plugin { debug: false }),
        ["-plugin", "debug"] => Some(Mode::Plugin { debug: true }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{self, Receiver};

    use super::*;

    const WAIT: Duration = Duration::from_secs(20);

    /// A session on its own one-worker pool; its events arrive on the receiver and are fed back by hand.
    fn session() -> (QianhongSession, Receiver<SearchEnded>) {
        let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: 1, clock_workers: 0 });
        let (tx, rx) = mpsc::channel();
        let s = QianhongSession::new(Analysis::local(pool), move |e| {
            let _ = tx.send(e);
        });
        (s, rx)
    }

    fn lines(s: &mut QianhongSession, line: &str) -> Vec<String> {
        let reply = s.on_line(line);
        assert!(!reply.quit, "{line} quits");
        reply.lines
    }

    fn says(s: &mut QianhongSession, line: &str, expected: &[&str]) {
        assert_eq!(lines(s, line), expected, "{line}");
    }

    fn errs(s: &mut QianhongSession, line: &str, needle: &str) {
        let out = lines(s, line);
        assert_eq!(out.len(), 1, "{line}: {out:?}");
        assert!(out[0].starts_with("ERROR ") && out[0].contains(needle), "{line}: {out:?} lacks {needle}");
    }

    /// Feed events back until the search ends; every line it produced.
    fn finish(s: &mut QianhongSession, rx: &Receiver<SearchEnded>) -> Vec<String> {
        let mut out = Vec::new();
        while s.is_thinking() {
            let e = rx.recv_timeout(WAIT).expect("the search reports within the deadline");
            out.extend(s.on_event(e).lines);
        }
        out
    }

    #[test]
    fn info_block() {
        let info = info_lines();
        assert_eq!(info[0], "QHPLUGIN V1.3");
        assert_eq!(info[1], "kibitz");
        assert_eq!(info[2], "LEVELS 8");
        assert_eq!(info[3], "1 - Very easy (1 ply)");
        assert_eq!(info[11..16], ["UNDO 1", "HINTS 1", "RULES 1", "BGTHINK 0", "TIMEOUT 1"]);
        assert_eq!(info.last().map(String::as_str), Some("ENDINFO"));
        assert_eq!(parse_mode(&["-info"]), Some(Mode::Info));
        assert_eq!(parse_mode(&["-PLUGIN", "debug"]), Some(Mode::Plugin { debug: true }));
        assert_eq!(parse_mode(&["-plugin"]), Some(Mode::Plugin { debug: false }));
        assert_eq!(parse_mode::<&str>(&[]), None);
        assert_eq!(parse_mode(&["-plugin", "x"]), None);
    }

    #[test]
    fn level_play_undo_fen() {
        let (mut s, _rx) = session();
        says(&mut s, "LEVEL", &["5"]);
        says(&mut s, "level 3", &["OK - Set AI level to 3"]);
        says(&mut s, "LEVEL", &["3"]);
        errs(&mut s, "LEVEL 0", "`0`");
        errs(&mut s, "LEVEL 9", "`9`");
        errs(&mut s, "LEVEL x", "`x`");
        errs(&mut s, "LEVEL 1 2", "`2`");
        assert_eq!(s.level(), 3);
        says(&mut s, "PLAY H2-E2", &["OK"]);
        says(&mut s, "play h9g7", &["OK"]);
        let mut g = Xiangqi::start();
        for m in ["H2-E2", "H9-G7"] {
            let mv = g.parse_move_text(m).expect("legal");
            g.make(mv);
        }
        assert_eq!(s.game().to_fen(), g.to_fen());
        errs(&mut s, "PLAY H2-E2", "`H2-E2`");
        errs(&mut s, "PLAY A0-A5", "`A0-A5`: illegal move");
        errs(&mut s, "PLAY Z9-Z8", "Z9-Z8");
        errs(&mut s, "PLAY", "needs a move");
        assert_eq!(s.game().to_fen(), g.to_fen());
        says(&mut s, "UNDO", &["OK"]);
        says(&mut s, "UNDO", &["OK"]);
        errs(&mut s, "UNDO", "no move");
        assert_eq!(s.game().to_fen(), Xiangqi::start().to_fen());
        let fen = "4k4/9/9/9/9/9/9/9/9/3K5 b - - 0 1";
        says(&mut s, &format!("FEN {fen}"), &["OK"]);
        assert_eq!(s.game().to_fen(), fen);
        errs(&mut s, "FEN rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNX w", "`");
        errs(&mut s, "FEN", "needs a position");
        assert_eq!(s.game().to_fen(), fen);
        errs(&mut s, "UNDO", "no move");
        errs(&mut s, "FROB", "unknown command `FROB`");
        says(&mut s, "", &[]);
        says(&mut s, "BGTHINK OFF", &["OK"]);
        errs(&mut s, "BGTHINK ON", "not supported");
        errs(&mut s, "BGTHINK maybe", "`maybe`");
    }

    #[test]
    fn load_checks_every_move_first() {
        let (mut s, _rx) = session();
        says(&mut s, "LOAD 3", &[]);
        assert!(s.is_reading_list());
        says(&mut s, "H2-E2", &[]);
        says(&mut s, "H9-G7", &[]);
        says(&mut s, "H0-G2", &["OK"]);
        assert_eq!(s.game().plies(), 3);
        let before = s.game().to_fen();
        says(&mut s, "LOAD 2", &[]);
        says(&mut s, "I9-H9", &[]);
        let out = lines(&mut s, "I9-I8");
        assert!(out.len() == 1 && out[0].starts_with("ERROR LOAD move 2 `I9-I8`"), "{out:?}");
        assert_eq!(s.game().to_fen(), before);
        says(&mut s, "LOAD 0", &["OK"]);
        errs(&mut s, "LOAD x", "`x`");
        errs(&mut s, "LOAD -1", "`-1`");
        // A count above the maximum is refused before any line is read: the next lines are commands again.
        errs(&mut s, "LOAD 1001", "at most 1000");
        errs(&mut s, "BAN 2147483648", "at most 1000");
        says(&mut s, "LEVEL 1", &["OK - Set AI level to 1"]);
        assert_eq!(s.game().to_fen(), before);
        says(&mut s, "LOAD 2", &[]);
        says(&mut s, "I9-H9", &[]);
        assert!(s.on_end_of_input().quit);
        assert_eq!(s.game().to_fen(), before);
    }

    #[test]
    fn ai_plays_and_hints_respect_bans() {
        let (mut s, rx) = session();
        says(&mut s, "LEVEL 3", &["OK - Set AI level to 3"]);
        says(&mut s, "BAN 2", &[]);
        says(&mut s, "H2-E2", &[]);
        says(&mut s, "b2e2", &["OK"]);
        assert_eq!(s.banned().len(), 2);
        says(&mut s, "HINTS", &[]);
        let out = finish(&mut s, &rx);
        assert_eq!(out.last().map(String::as_str), Some("ENDHINTS"), "{out:?}");
        assert!(out.len() >= 2 && out.len() <= MAX_HINTS + 1, "{out:?}");
        for line in &out[..out.len() - 1] {
            let m = line.split_whitespace().next().expect("a move");
            assert!(Xiangqi::start().parse_move_text(m).is_ok(), "{line}");
            assert!(m != "H2-E2" && m != "B2-E2", "banned move hinted: {out:?}");
        }
        assert!(s.banned().is_empty(), "bans hold for one search");
        says(&mut s, "AI", &[]);
        let out = finish(&mut s, &rx);
        assert_eq!(out.len(), 1, "{out:?}");
        let mut g = Xiangqi::start();
        let m = g.parse_move_text(&out[0]).expect("legal");
        assert_eq!(Xiangqi::move_to_iccs(m), out[0]);
        g.make(m);
        assert_eq!(s.game().to_fen(), g.to_fen());
        let out = lines(&mut s, "BAN 1");
        assert!(out.is_empty());
        errs(&mut s, "H2-E2", "BAN move 1 `H2-E2`");
        says(&mut s, "BAN 0", &["OK"]);
    }

    /// Found by an audit: a search aborted (or stopped by `LEVEL`) took the bans with it, and the host's next
    /// `AI` played a banned move; an empty line in a list was read as one of its moves.
    #[test]
    fn bans_outlive_an_aborted_search_and_lists_skip_empty_lines() {
        let (mut s, rx) = session();
        says(&mut s, "LEVEL 8", &["OK - Set AI level to 8"]);
        says(&mut s, "BAN 2", &[]);
        says(&mut s, "", &[]);
        says(&mut s, "H2-E2", &[]);
        says(&mut s, "  ", &[]);
        says(&mut s, "b2e2", &["OK"]);
        assert_eq!(s.banned().len(), 2);
        says(&mut s, "AI", &[]);
        says(&mut s, "ABORT", &["ABORTED"]);
        assert_eq!(s.banned().len(), 2, "an aborted search keeps the bans");
        says(&mut s, "HINTS", &[]);
        says(&mut s, "LEVEL 2", &["ABORTED", "OK - Set AI level to 2"]);
        assert_eq!(s.banned().len(), 2, "a search stopped by another command keeps the bans");
        says(&mut s, "AI", &[]);
        let out = finish(&mut s, &rx);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(out[0] != "H2-E2" && out[0] != "B2-E2", "banned move played: {out:?}");
        assert!(s.banned().is_empty(), "an answered search uses the bans up");
        says(&mut s, "LOAD 1", &[]);
        says(&mut s, "", &[]);
        says(&mut s, "H7-E7", &["OK"]);
    }

    #[test]
    fn abort_timeout_and_commands_while_thinking() {
        let (mut s, rx) = session();
        says(&mut s, "LEVEL 8", &["OK - Set AI level to 8"]);
        says(&mut s, "AI", &[]);
        says(&mut s, "ABORT", &["ABORTED"]);
        assert!(!s.is_thinking());
        says(&mut s, "TIMEOUT", &[]);
        says(&mut s, "HINTS", &[]);
        says(&mut s, "LEVEL", &["ABORTED", "8"]);
        says(&mut s, "AI", &[]);
        std::thread::sleep(Duration::from_millis(50));
        says(&mut s, "TIMEOUT", &[]);
        let out = finish(&mut s, &rx);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(Xiangqi::start().parse_move_text(&out[0]).is_ok(), "{out:?}");
        assert_eq!(s.game().plies(), 1);
        // TIMEOUT then another command at once: the answer comes before the command's reply.
        says(&mut s, "AI", &[]);
        says(&mut s, "TIMEOUT", &[]);
        let out = lines(&mut s, "LEVEL");
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[1], "8");
        assert_eq!(s.game().plies(), 2);
        // Stray reports of finished searches are ignored.
        while let Ok(e) = rx.recv_timeout(Duration::from_millis(200)) {
            assert_eq!(s.on_event(e), Reply::none());
        }
        assert!(s.on_line("quit").quit);
    }

    #[test]
    fn game_over_and_everything_banned() {
        let (mut s, _rx) = session();
        // Black to move, checkmated: the red chariot checks on the back rank, the generals face each other.
        says(&mut s, "FEN 3k5/R8/9/9/9/9/9/9/9/4K4 b - - 0 1", &["OK"]);
        assert!(s.game().legal_moves().is_empty());
        errs(&mut s, "AI", "game over: red wins (no legal move)");
        errs(&mut s, "HINTS", "game over");
        says(&mut s, "FEN 4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1", &["OK"]);
        let all: Vec<String> = s.game().legal_moves().into_iter().map(Xiangqi::move_to_iccs).collect();
        says(&mut s, &format!("BAN {}", all.len()), &[]);
        for (i, m) in all.iter().enumerate() {
            let expected: &[&str] = if i + 1 == all.len() { &["OK"] } else { &[] };
            says(&mut s, m, expected);
        }
        errs(&mut s, "AI", "banned");
    }

    #[test]
    fn long_lines_and_scores() {
        let (mut s, _rx) = session();
        assert!(s.on_line_too_long(2 << 20).lines[0].starts_with("ERROR line of 2097152 bytes"));
        says(&mut s, "LOAD 1", &[]);
        assert!(s.on_line_too_long(2 << 20).lines[0].starts_with("ERROR LOAD"));
        assert!(!s.is_reading_list());
        assert_eq!(score_text(Score::Cp(-35)), "score -35");
        assert_eq!(score_text(Score::Mate(3)), "mate in 2");
        assert_eq!(score_text(Score::Mate(-2)), "mated in 1");
        assert_eq!(score_text(Score::Mate(0)), "mated in 0");
    }
}
