//! The CEBoard engine interface (CEBoard's engine interface v2 document): the engine as a
//! transport-free state machine ([`Engine`] and its [`Host`] trait) and, in [`ffi`], the C ABI that
//! `libkibitz.so` exports: `LoadEngine(ICEBoard20 *) -> IEngine *`, with `include/ceboard.h` for hosts.
//!
//! Threading: every `IEngine` call returns at once (it queues a [`Command`]), except `GetProperties`,
//! `IsAlive` (answered on the caller's thread) and `Release` (which stops the engine thread and waits for
//! it). The engine runs its own thread, `kibitz-ceboard`, and a one-worker search [`Pool`]; **every call into
//! the host (`ICEBoard20`) is made from the engine thread**, one at a time, never from the thread that called
//! into `IEngine`. The spec says as much: "the Engine and CEBoard will run on different threads".
//!
//! Conventions of this engine (the spec leaves them open):
//!
//! * `StartGame(bPlayBlack, bAnalyze, sFen)`: a NULL or empty FEN is the start position. Playing, the engine
//!   moves for Black when `bPlayBlack`, else for White, and thinks at once when it is its turn. Analysing,
//!   it searches the position until told otherwise, sending `EngineFeedback` (when messages are on).
//! * `SendMove`: a move in UCI coordinates (`e2e4`, `e7e8q`, `e1g1`) or SAN (`Nf3`, `O-O`, `e8=Q`).
//! * `EngineMove`: UCI coordinates (the engine sets `MOVES_UCI`), promotion letter in upper case as the spec
//!   writes it (`e7e8Q`).
//! * `SetPosition(sFEN)`: the user went back in the game; the engine stops thinking and waits (it analyses
//!   the new position in analysis mode). `MoveNow` makes it play from there. A finished position (mate,
//!   stalemate, the 50-move rule, insufficient material) is reported with `GameFinished`, as after a move.
//! * `MoveNow`: thinking, it plays its best move at once; analysing, it plays the best move found and goes on
//!   analysing; on the user's turn it takes the side to move (`SwitchSides`) and thinks. The user's turn
//!   starts when `EngineMove` has returned: a `MoveNow` sent before (the search over, its move on the way)
//!   asked for that move and does nothing more, unless a command that changes the game (`StartGame`,
//!   `SendMove`, `SetPosition`, `EndGame`) was sent between the two.
//! * `GameFinished(result, comment)`: `1-0`, `0-1` or `1/2-1/2`; `Checkmate`, `Stalemate`, `Threefold
//!   repetition`, `50-move rule`, `Insufficient material`; sent once, after the move that ended the game, or
//!   on `StartGame` or `SetPosition` with a finished position (a FEN has no history: no repetition there).
//! * `EngineFeedback(depth, nodesSec, totalNodes, nTime, sEval, sVariante)`: time in milliseconds, the
//!   score from White's point of view in pawns (`+0.35`) or as a mate in moves (`#3`, `-#2`), the line in
//!   SAN. Counts beyond `INT_MAX` are clamped. Reports never hold the move back: the host gets the newest
//!   one when it is ready for another (those it was too slow for are skipped), none once the move is ready
//!   or after `MoveNow`, and none that, at the pace the host took the last ones, it would still be taking
//!   when the move's time is up.
//! * Time: with a fixed time per move (`KIBITZ_CEBOARD_SECONDS`, announced to the host by `SetTimeControl`
//!   at `StartGame`) the engine thinks that long; otherwise it asks `GetTimeInfo` (milliseconds left for
//!   White and Black, moves to the next control, 0 = sudden death) before each move, and thinks one second
//!   when the host has no clock (all zero).
//! * A bad FEN, an illegal move or a command without a game calls `FatalError` with the reason.

pub mod ffi;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::session::shorten;
use crate::analysis::{Analysis, Request};
use crate::game::{Game, GameEnd, Outcome, Score, Side};
use crate::games::chess::{Chess, Move};
use crate::pool::{JobHandle, Pool, PoolConfig, Priority};
use crate::search::{Clock, Done, Event, Info, Limits, ScoreBound};

/// The name `GetProperties` reports (and `WhoPlays` announces).
pub const ENGINE_NAME: &str = "kibitz";
/// Commands and search events waiting for the engine thread, at most.
const QUEUE: usize = 1024;
/// Thinking time per move when the host has no clock.
const DEFAULT_MOVE_TIME: Duration = Duration::from_secs(1);

/// What the engine calls on its host (`ICEBoard20`), always from the engine thread.
pub trait Host: Send {
    fn engine_move(&mut self, mv: &str);
    fn fatal_error(&mut self, reason: &str);
    fn game_finished(&mut self, result: &str, comment: &str);
    fn who_plays(&mut self, name: &str);
    fn switch_sides(&mut self);
    fn show_thinking(&mut self, show: bool);
    fn set_time_control(&mut self, tc: &TimeControl);
    fn engine_feedback(&mut self, feedback: &Feedback);
    /// Milliseconds left for White and Black and moves to the next time control (0: none).
    fn time_info(&mut self) -> (i32, i32, i32);
}

/// The arguments of `SetTimeControl`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeControl {
    pub sec_by_move: i32,
    pub moves1: i32,
    pub sec1: i32,
    pub moves2: i32,
    pub sec2: i32,
    pub sec3: i32,
    pub inc: i32,
}

/// The arguments of `EngineFeedback`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Feedback {
    pub depth: i32,
    pub nodes_sec: i32,
    pub total_nodes: i32,
    pub time_ms: i32,
    pub eval: String,
    pub pv: String,
}

/// The engine's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Fixed thinking time per move; 0 = follow the host's clock (`GetTimeInfo`).
    pub seconds_per_move: u32,
    /// Transposition table size in MiB.
    pub hash_mb: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config { seconds_per_move: 0, hash_mb: 64 }
    }
}

impl Config {
    /// The defaults, overridden by `KIBITZ_CEBOARD_SECONDS` and `KIBITZ_CEBOARD_HASH_MB` when they hold a
    /// number in range (0-3600 seconds, 1-1024 MiB).
    pub fn from_env() -> Config {
        let mut c = Config::default();
        if let Some(s) = std::env::var("KIBITZ_CEBOARD_SECONDS").ok().and_then(|v| v.trim().parse::<u32>().ok())
            && s <= 3600
        {
            c.seconds_per_move = s;
        }
        if let Some(h) = std::env::var("KIBITZ_CEBOARD_HASH_MB").ok().and_then(|v| v.trim().parse::<usize>().ok())
            && (1..=1024).contains(&h)
        {
            c.hash_mb = h;
        }
        c
    }
}

/// What the host asks of the engine (one `IEngine` call each).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    StartGame { play_black: bool, analyze: bool, fen: Option<String> },
    EndGame,
    SendMove(String),
    SetPosition(String),
    MoveNow,
    GetMessages(bool),
    Quit,
}

enum Msg {
    Command(Command),
    /// The search of this id has a new progress report in its [`Progress`].
    Progress(u64),
    /// The answer (`Event::Done`) of the search of this id.
    Search(u64, Event<Move>),
}

/// The newest progress report of one search that the host has not had yet. The search overwrites it and
/// queues one [`Msg::Progress`] at a time to wake the engine thread, which takes it: a host slow to take
/// `EngineFeedback` makes reports be skipped, never pile up in the queue in front of the search's answer. When
/// the answer is ready the report still waiting is dropped: it is stale, and the move must not wait for it.
#[derive(Default)]
struct Progress(Mutex<ProgressSlot>);

#[derive(Default)]
struct ProgressSlot {
    latest: Option<Info<Move>>,
    /// A `Msg::Progress` for this search is in the queue.
    queued: bool,
    /// The search has answered: no report is kept any more.
    done: bool,
}

impl Progress {
    fn lock(&self) -> MutexGuard<'_, ProgressSlot> {
        // The slot is plain data, valid whatever a panicking holder was doing.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A report `EngineFeedback` shows: the main line with an exact score (not a report on the move being
/// searched, another line or a bound).
fn reportable(info: &Info<Move>) -> bool {
    info.currmove.is_none() && info.multipv == 1 && info.bound == ScoreBound::Exact
}

/// What the search `id` hands the engine thread: its answer through the queue, always; its progress through
/// `progress`, newest only (see [`Progress`]).
fn search_sink(id: u64, tx: SyncSender<Msg>, progress: Arc<Progress>) -> impl FnMut(Event<Move>) + Send + 'static {
    move |event| match event {
        Event::Info(info) => {
            if !reportable(&info) {
                return;
            }
            let mut slot = progress.lock();
            if slot.done {
                return;
            }
            slot.latest = Some(info);
            // When the queue is full the wake-up is not sent; the next report tries again.
            if !slot.queued && tx.try_send(Msg::Progress(id)).is_ok() {
                slot.queued = true;
            }
        }
        Event::Done(_) => {
            {
                let mut slot = progress.lock();
                slot.done = true;
                slot.latest = None;
            }
            let _ = tx.send(Msg::Search(id, event));
        }
    }
}

/// The report of a search's answer: its best line as a main-line report, `None` without a line.
fn final_report(done: &Done<Move>) -> Option<Info<Move>> {
    let line = done.lines.first().filter(|l| !l.pv.is_empty())?;
    Some(Info {
        depth: line.depth,
        seldepth: line.seldepth,
        multipv: 1,
        score: line.score,
        bound: ScoreBound::Exact,
        nodes: done.nodes,
        nps: done.nps,
        time_ms: done.time_ms,
        pv: line.pv.clone(),
        currmove: None,
        currmovenumber: None,
        neval: done.neval,
        hashfull: 0,
    })
}

/// Whether a report may go to the host at `now`: not when the host, taking `cost` as it did lately, would
/// still hold it at `deadline`, when the move is due (no deadline while analysing).
fn report_fits(now: Instant, deadline: Option<Instant>, cost: Duration) -> bool {
    deadline.is_none_or(|due| now.checked_add(cost).is_some_and(|end| end < due))
}

/// The time the host is expected to take over a report: the last call's, or less than the longest lately,
/// which fades by a quarter a call (one slow call does not silence reports for long).
fn next_report_cost(previous: Duration, took: Duration) -> Duration {
    took.max(previous - previous / 4)
}

/// The engine: its thread and the queue into it.
pub struct Engine {
    tx: SyncSender<Msg>,
    thread: Option<JoinHandle<()>>,
    alive: Arc<AtomicBool>,
}

impl Engine {
    /// Start the engine thread, which owns `host` and calls it.
    pub fn start(host: Box<dyn Host>, config: Config) -> std::io::Result<Engine> {
        let (tx, rx) = sync_channel(QUEUE);
        let alive = Arc::new(AtomicBool::new(true));
        let thread_alive = Arc::clone(&alive);
        let thread_tx = tx.clone();
        let thread = std::thread::Builder::new().name("kibitz-ceboard".into()).spawn(move || {
            let mut session = Session::new(host, config, thread_tx);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| session.run(rx)));
            if result.is_err() {
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    session.host.fatal_error("internal error: the engine thread stopped")
                }));
            }
            thread_alive.store(false, Ordering::SeqCst);
        })?;
        Ok(Engine { tx, thread: Some(thread), alive })
    }

    /// Queue a command for the engine thread. Returns at once unless [`QUEUE`] commands are already waiting.
    pub fn send(&self, command: Command) {
        let _ = self.tx.send(Msg::Command(command));
    }

    /// The engine thread is running.
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    /// Stop the engine: the search is cancelled, the thread ends and is joined.
    pub fn shutdown(&mut self) {
        let _ = self.tx.send(Msg::Command(Command::Quit));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Purpose {
    /// Play the best move when the search ends.
    Play,
    /// Analyse until stopped.
    Analyze,
}

struct Job {
    id: u64,
    handle: JobHandle,
    purpose: Purpose,
    progress: Arc<Progress>,
    /// When the move should be in the host's hands: the end of the search's time (none while analysing, now
    /// after `MoveNow`). No report is started that the host would still hold then.
    deadline: Option<Instant>,
}

struct Session {
    host: Box<dyn Host>,
    config: Config,
    tx: SyncSender<Msg>,
    analysis: Analysis,
    game: Option<Chess>,
    engine_side: Option<Side>,
    analyze: bool,
    messages: bool,
    over: bool,
    job: Option<Job>,
    next_id: u64,
    /// Messages already taken from the queue, read before it (see [`Session::drop_stale_move_nows`]).
    pending: VecDeque<Msg>,
    /// An `EngineMove` was just made.
    moved: bool,
    /// How long the host is expected to take over an `EngineFeedback` ([`next_report_cost`]).
    report_cost: Duration,
}

fn result_text(end: GameEnd) -> (&'static str, String) {
    let result = match end.outcome {
        Outcome::Win(Side::First) => "1-0",
        Outcome::Win(Side::Second) => "0-1",
        Outcome::Draw => "1/2-1/2",
    };
    let mut comment = end.reason.to_string();
    if let Some(first) = comment.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    (result, comment)
}

/// A score as `EngineFeedback` writes it, from White's point of view.
pub fn eval_text(score: Score, white_to_move: bool) -> String {
    let sign = if white_to_move { 1 } else { -1 };
    match score {
        Score::Cp(cp) => {
            let cp = cp * sign;
            format!("{}{}.{:02}", if cp < 0 { "-" } else { "+" }, cp.abs() / 100, cp.abs() % 100)
        }
        Score::Mate(plies) => {
            let plies = plies * sign;
            let moves = (plies.abs() + 1) / 2;
            format!("{}#{moves}", if plies < 0 { "-" } else { "" })
        }
    }
}

fn clamp_i32(v: u64) -> i32 {
    v.min(i32::MAX as u64) as i32
}

impl Session {
    fn new(host: Box<dyn Host>, config: Config, tx: SyncSender<Msg>) -> Session {
        let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: config.hash_mb, clock_workers: 0 });
        Session {
            host,
            config,
            tx,
            analysis: Analysis::local(pool),
            game: None,
            engine_side: None,
            analyze: false,
            messages: false,
            over: false,
            job: None,
            next_id: 0,
            pending: VecDeque::new(),
            moved: false,
            report_cost: Duration::ZERO,
        }
    }

    fn run(&mut self, rx: Receiver<Msg>) {
        // A chess network named by KIBITZ_CHESS_NET that cannot be used is unrecoverable: the host hears why and
        // the engine thread ends (`IsAlive` turns FALSE).
        if let Err(e) = crate::games::chess::check_network() {
            self.host.fatal_error(&e);
            self.analysis.pool().shutdown();
            return;
        }
        loop {
            let msg = match self.pending.pop_front() {
                Some(m) => m,
                // The timeout only bounds the wait; nothing happens on it.
                None => match rx.recv_timeout(Duration::from_secs(1)) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
            };
            match msg {
                Msg::Command(Command::Quit) => break,
                Msg::Command(c) => self.on_command(c),
                Msg::Progress(id) => self.on_progress(id),
                Msg::Search(id, event) => self.on_search(id, event),
            }
            if std::mem::take(&mut self.moved) {
                self.drop_stale_move_nows(&rx);
            }
        }
        self.cancel();
        self.analysis.pool().shutdown();
    }

    fn cancel(&mut self) {
        if let Some(job) = self.job.take() {
            job.handle.cancel();
        }
    }

    fn on_command(&mut self, c: Command) {
        tracing::debug!(?c, "ceboard command");
        match c {
            Command::StartGame { play_black, analyze, fen } => self.start_game(play_black, analyze, fen),
            Command::EndGame => {
                self.cancel();
                self.game = None;
                self.over = false;
            }
            Command::SendMove(text) => self.user_move(&text),
            Command::SetPosition(fen) => self.set_position(&fen),
            Command::MoveNow => self.move_now(),
            Command::GetMessages(on) => {
                self.messages = on;
                self.host.show_thinking(on);
            }
            Command::Quit => {}
        }
    }

    fn start_game(&mut self, play_black: bool, analyze: bool, fen: Option<String>) {
        self.cancel();
        self.game = None;
        self.over = false;
        let fen = fen.filter(|f| !f.trim().is_empty());
        let game = match fen {
            None => Chess::start(),
            Some(f) => match Chess::from_fen(&f) {
                Ok(g) => g,
                Err(e) => return self.host.fatal_error(&format!("bad FEN: {e}")),
            },
        };
        self.game = Some(game);
        self.analyze = analyze;
        self.engine_side = if analyze { None } else { Some(if play_black { Side::Second } else { Side::First }) };
        self.host.who_plays(ENGINE_NAME);
        if self.config.seconds_per_move > 0 {
            let s = self.config.seconds_per_move.min(i32::MAX as u32) as i32;
            self.host.set_time_control(&TimeControl { sec_by_move: s, ..TimeControl::default() });
        }
        if !self.check_end() {
            self.resume();
        }
    }

    /// Think if it is the engine's turn, analyse in analysis mode.
    fn resume(&mut self) {
        let Some(game) = &self.game else { return };
        if self.over {
            return;
        }
        if self.analyze {
            self.search(Purpose::Analyze);
        } else if self.engine_side == Some(game.side_to_move()) {
            self.search(Purpose::Play);
        }
    }

    /// Report the end of the game if the position is over; true when it is.
    fn check_end(&mut self) -> bool {
        let Some(game) = &self.game else { return false };
        if let Some(end) = game.outcome() {
            self.over = true;
            let (result, comment) = result_text(end);
            self.host.game_finished(result, &comment);
            return true;
        }
        false
    }

    fn limits(&mut self, side: Side) -> Limits {
        if self.config.seconds_per_move > 0 {
            return Limits::movetime(Duration::from_secs(self.config.seconds_per_move as u64));
        }
        let (wtime, btime, movestogo) = self.host.time_info();
        let mine = if side == Side::First { wtime } else { btime };
        if wtime <= 0 && btime <= 0 {
            return Limits::movetime(DEFAULT_MOVE_TIME);
        }
        Limits {
            clock: Some(Clock {
                remaining: Duration::from_millis(mine.max(1) as u64),
                increment: Duration::ZERO,
                moves_to_go: (movestogo > 0).then_some(movestogo as u32),
            }),
            ..Limits::default()
        }
    }

    fn search(&mut self, purpose: Purpose) {
        self.cancel();
        let Some(game) = self.game.clone() else { return };
        let limits = if purpose == Purpose::Analyze { Limits::infinite() } else { self.limits(game.side_to_move()) };
        // Taken before the search starts, so a little early: a margin for the host.
        let deadline = limits.time_limit().and_then(|t| Instant::now().checked_add(t));
        self.next_id += 1;
        let id = self.next_id;
        let progress = Arc::new(Progress::default());
        let request = Request::new(game, limits).priority(Priority::High).currmove_after(Duration::from_secs(1));
        let submitted = self.analysis.search(&request, search_sink(id, self.tx.clone(), Arc::clone(&progress)));
        match submitted {
            Ok(handle) => self.job = Some(Job { id, handle, purpose, progress, deadline }),
            Err(e) => self.host.fatal_error(&format!("cannot search: {e}")),
        }
    }

    /// Give the host the newest progress report of the current search, when it wants reports and has time to
    /// take this one before the move is due.
    fn on_progress(&mut self, id: u64) {
        let Some(job) = &self.job else { return };
        if job.id != id {
            return;
        }
        let info = {
            let mut slot = job.progress.lock();
            slot.queued = false;
            slot.latest.take()
        };
        let Some(info) = info else { return };
        if !self.messages {
            return;
        }
        if !report_fits(Instant::now(), job.deadline, self.report_cost) {
            tracing::debug!("ceboard: a progress report skipped, the move is due before the host would be done");
            return;
        }
        let feedback = self.feedback(&info);
        let start = Instant::now();
        self.host.engine_feedback(&feedback);
        self.report_cost = next_report_cost(self.report_cost, start.elapsed());
    }

    fn on_search(&mut self, id: u64, event: Event<Move>) {
        let Some(job) = &self.job else { return };
        if job.id != id {
            return;
        }
        match event {
            // Progress comes through the job's `Progress`, not as events.
            Event::Info(_) => {}
            Event::Done(done) => {
                let purpose = job.purpose;
                self.job = None;
                if purpose == Purpose::Analyze {
                    // An analysis ends by itself only when nothing deeper is left to search (a mate found to
                    // the end, a table already holding it): its last report was dropped with the answer (or
                    // never sent, so quick was it), and the host would show nothing, or a stale line, for good.
                    if let (true, Some(info)) = (self.messages, final_report(&done)) {
                        let feedback = self.feedback(&info);
                        self.host.engine_feedback(&feedback);
                    }
                    return;
                }
                if purpose != Purpose::Play {
                    return;
                }
                let Some(game) = self.game.as_mut() else { return };
                match done.best {
                    Some(best) if game.legal_moves().contains(&best) => {
                        let text = engine_move_text(game, best);
                        game.make(best);
                        self.host.engine_move(&text);
                        self.moved = true;
                        if !self.check_end() {
                            self.resume();
                        }
                    }
                    _ => {
                        self.check_end();
                    }
                }
            }
        }
    }

    fn feedback(&self, info: &Info<Move>) -> Feedback {
        let (eval, pv) = match &self.game {
            Some(game) => {
                let mut g = game.clone();
                let mut line = Vec::with_capacity(info.pv.len());
                for &m in &info.pv {
                    if !g.legal_moves().contains(&m) {
                        break;
                    }
                    line.push(g.move_to_san(m));
                    g.make(m);
                }
                (eval_text(info.score, game.side_to_move() == Side::First), line.join(" "))
            }
            None => (String::new(), String::new()),
        };
        Feedback {
            depth: info.depth.min(i32::MAX as u32) as i32,
            nodes_sec: clamp_i32(info.nps),
            total_nodes: clamp_i32(info.nodes),
            time_ms: clamp_i32(info.time_ms),
            eval,
            pv,
        }
    }

    fn user_move(&mut self, text: &str) {
        let Some(game) = self.game.as_mut() else {
            return self.host.fatal_error(&format!("move `{}` without a game (StartGame first)", shorten(text)));
        };
        if self.over {
            return self.host.fatal_error(&format!("move `{}` after the end of the game", shorten(text)));
        }
        match game.parse_move(text) {
            Ok(m) => {
                // A move for the engine's side, on its turn: the user took that side over. As `MoveNow` on the
                // user's turn does the other way round, the engine switches sides and thinks for the other one
                // (found by an audit: it waited for the user, who waited for it).
                let took_over = !self.analyze && self.engine_side == Some(game.side_to_move());
                self.cancel();
                if let Some(game) = self.game.as_mut() {
                    game.make(m);
                    if took_over {
                        self.engine_side = Some(game.side_to_move());
                        self.host.switch_sides();
                    }
                }
                if !self.check_end() {
                    self.resume();
                }
            }
            Err(e) => self.host.fatal_error(&format!("bad move: {e}")),
        }
    }

    fn set_position(&mut self, fen: &str) {
        match Chess::from_fen(fen) {
            Ok(g) => {
                self.cancel();
                self.over = false;
                self.game = Some(g);
                // A finished position ends the game as a move that finishes it does: the host hears how.
                if !self.check_end() && self.analyze {
                    self.resume();
                }
            }
            Err(e) => self.host.fatal_error(&format!("bad FEN: {e}")),
        }
    }

    /// The engine's move has just been delivered: a `MoveNow` already waiting was sent before the host had the
    /// move, so it asked for that move, which it now has. Taken as a `MoveNow` on the user's turn, it would
    /// make the engine switch sides and play the user's move too; it is dropped. A command that changes the
    /// game (`StartGame`, `EndGame`, `SendMove`, `SetPosition`) starts a new situation: the `MoveNow`s after
    /// it are about that one and stay. The other messages keep their order (at most [`QUEUE`] are held here).
    fn drop_stale_move_nows(&mut self, rx: &Receiver<Msg>) {
        let mut earlier = std::mem::take(&mut self.pending).into_iter();
        while self.pending.len() < QUEUE {
            let Some(m) = earlier.next().or_else(|| rx.try_recv().ok()) else { break };
            let game_changes = match &m {
                Msg::Command(Command::MoveNow) => {
                    tracing::debug!("ceboard: a MoveNow sent before the engine's move was delivered is dropped");
                    continue;
                }
                Msg::Command(Command::GetMessages(_)) | Msg::Progress(_) | Msg::Search(..) => false,
                Msg::Command(_) => true,
            };
            self.pending.push_back(m);
            if game_changes {
                break;
            }
        }
        self.pending.extend(earlier);
    }

    fn move_now(&mut self) {
        let Some(game) = &self.game else { return };
        if self.over {
            return;
        }
        let stm = game.side_to_move();
        match &mut self.job {
            Some(job) => {
                job.purpose = Purpose::Play;
                // The move is wanted now: no report may hold it back.
                job.deadline = Some(Instant::now());
                job.handle.stop();
            }
            None => {
                if !self.analyze && self.engine_side != Some(stm) {
                    self.engine_side = Some(stm);
                    self.host.switch_sides();
                }
                self.search(Purpose::Play);
            }
        }
    }
}

/// A move as `EngineMove` writes it: UCI coordinates, the promotion letter in upper case (`e7e8Q`).
pub fn engine_move_text(game: &Chess, m: Move) -> String {
    let mut text = game.move_to_uci(m);
    if m.promotion.is_some() {
        text.make_ascii_uppercase();
        text[..4].make_ascii_lowercase();
    }
    text
}

#[cfg(test)]
mod tests;
