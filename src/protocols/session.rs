//! What every protocol session shares: one error type, which each protocol renders in its own words
//! ([`ErrorForm`]); the small helpers every session needs (quoting a bad token back, describing the end of a
//! game, a score as one number); how a session starts a search ([`start_search`]: kibitz's own engine or the
//! external one it was given, a failure of that engine reported like an answer) and the slot a search leaves
//! its end in; the level ladder of the protocols that play by levels.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::stdio::Reply;
use crate::analysis::{Analysis, EngineChoice, EngineFailure, Request};
use crate::game::{Game, GameEnd, NotationError, Outcome, Score};
use crate::pool::JobHandle;
use crate::search::{Done, Event, Info, Limits};

/// A command that failed, as the GUI is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionError {
    /// The command could not be carried out: a bad argument, the wrong state.
    Command(String),
    /// A move that cannot be read or is not legal (UHP answers these with `invalidmove`).
    InvalidMove(String),
}

impl SessionError {
    pub fn command(message: impl Into<String>) -> Self {
        SessionError::Command(message.into())
    }

    pub fn invalid_move(message: impl Into<String>) -> Self {
        SessionError::InvalidMove(message.into())
    }

    pub fn message(&self) -> &str {
        match self {
            SessionError::Command(m) | SessionError::InvalidMove(m) => m,
        }
    }
}

impl From<String> for SessionError {
    fn from(message: String) -> Self {
        SessionError::Command(message)
    }
}

impl From<&str> for SessionError {
    fn from(message: &str) -> Self {
        SessionError::Command(message.to_string())
    }
}

/// How one protocol writes an error: the word that starts the line, for commands and for moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorForm {
    pub command: &'static str,
    pub invalid_move: &'static str,
}

impl ErrorForm {
    /// The error line: always one line, whatever input it quotes (control characters, a `\r` or a NUL that
    /// a notation error may carry, become `?`).
    pub fn line(&self, error: &SessionError) -> String {
        let word = match error {
            SessionError::Command(_) => self.command,
            SessionError::InvalidMove(_) => self.invalid_move,
        };
        let message: String = error.message().chars().map(|c| if c.is_control() { '?' } else { c }).collect();
        format!("{word} {message}")
    }

    /// The reply that carries the error line.
    pub fn reply(&self, error: &SessionError) -> Reply {
        Reply::line(self.line(error))
    }
}

/// The longest piece of input quoted back in an error.
pub const QUOTE_CHARS: usize = 60;

/// A token as it may be quoted back: printable ASCII only, at most [`QUOTE_CHARS`] characters.
pub fn shorten(token: &str) -> String {
    let mut out: String =
        token.chars().take(QUOTE_CHARS).map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '?' }).collect();
    if token.chars().nth(QUOTE_CHARS).is_some() {
        out.push_str("...");
    }
    out
}

/// A line too long to read stands among the lines waiting for a search as this mark (no line read begins with a
/// line end), so that what it may have been (a `position` of a great many moves) is refused in its turn.
pub fn too_long_mark(bytes: usize) -> String {
    format!("\n{bytes}")
}

/// Why the position is unknown, when `line` is the mark of a line too long to read.
pub fn too_long_refusal(line: &str) -> Option<String> {
    line.strip_prefix('\n').map(|bytes| format!("a line of {bytes} bytes was too long to read"))
}

/// Lines that arrived while a search ran, to run after it: at most [`WaitingLines::MAX_LINES`] lines and
/// [`WaitingLines::MAX_BYTES`] bytes (a GUI sends a few; a flood of long lines is dropped, not kept), and a
/// note of what was dropped.
#[derive(Debug, Default)]
pub struct WaitingLines {
    lines: std::collections::VecDeque<String>,
    bytes: usize,
    dropped: usize,
}

impl WaitingLines {
    pub const MAX_LINES: usize = 1024;
    pub const MAX_BYTES: usize = 4 << 20;

    /// Keep `line` unless the queue is full (then it is counted as dropped).
    pub fn push(&mut self, line: &str) {
        if self.lines.len() < Self::MAX_LINES && self.bytes + line.len() <= Self::MAX_BYTES {
            self.bytes += line.len();
            self.lines.push_back(line.to_string());
        } else {
            self.dropped += 1;
        }
    }

    pub fn pop(&mut self) -> Option<String> {
        let line = self.lines.pop_front()?;
        self.bytes -= line.len();
        Some(line)
    }

    pub fn clear(&mut self) {
        self.lines.clear();
        self.bytes = 0;
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Whether a waiting line is the command `word` (its first word, in any case).
    pub fn holds_command(&self, word: &str) -> bool {
        self.lines.iter().any(|l| l.split_whitespace().next().is_some_and(|w| w.eq_ignore_ascii_case(word)))
    }

    /// What was dropped since the last call, as an error to report (once).
    pub fn take_dropped(&mut self) -> Option<SessionError> {
        let dropped = std::mem::take(&mut self.dropped);
        (dropped > 0).then(|| {
            SessionError::command(format!(
                "{dropped} lines that arrived during a search were dropped (at most {} lines and {} MiB wait)",
                Self::MAX_LINES,
                Self::MAX_BYTES >> 20
            ))
        })
    }
}

/// A number a GUI sent where a whole number belongs, read as leniently as it can be: an integer, one too large
/// for 64 bits (taken as the largest of its sign), or a decimal (its whole part); `None` for anything else.
pub fn lenient_integer(text: &str) -> Option<i64> {
    if let Ok(n) = text.parse::<i64>() {
        return Some(n);
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return Some(if text.starts_with('-') { i64::MIN } else { i64::MAX });
    }
    let decimal = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    text.parse::<f64>().ok().filter(|x| decimal && x.is_finite()).map(|x| x as i64)
}

/// A notation error for a message: what was wrong, and the bad part when it is not the whole text.
pub fn notation_detail(e: &NotationError, text: &str) -> String {
    if e.token == text.trim() { e.message.clone() } else { format!("{} `{}`", e.message, shorten(&e.token)) }
}

/// A finished game in a few words: "white wins (no legal move)", "draw (threefold repetition)".
pub fn describe_end<G: Game>(end: GameEnd) -> String {
    match end.outcome {
        Outcome::Win(side) => format!("{} wins ({})", G::side_name(side), end.reason),
        Outcome::Draw => format!("draw ({})", end.reason),
    }
}

/// The value of a forced win in the protocols that report one number: a win in n plies is `MATE_VALUE - n`.
pub const MATE_VALUE: i32 = 10_000;

/// A score as the one number the line protocols report (centi-units; a forced result as ±([`MATE_VALUE`] minus
/// the plies), and a centi-unit score never reaching the range of forced results).
pub fn score_number(score: Score) -> i32 {
    match score {
        Score::Cp(cp) => cp.clamp(-(MATE_VALUE - 1000), MATE_VALUE - 1000),
        Score::Mate(plies) if plies > 0 => MATE_VALUE - plies.min(999),
        Score::Mate(plies) => -(MATE_VALUE - plies.saturating_neg().min(999)),
    }
}

/// How a session's search ended: its answer, or why the external engine it ran on gave none (the engine's
/// process is replaced, so the next search may succeed).
pub type Ending<M> = Result<Done<M>, EngineFailure>;

/// What a session's search reports: its progress, then exactly once its [`Ending`].
#[derive(Clone, Debug)]
pub enum SearchReport<M> {
    Info(Info<M>),
    End(Ending<M>),
}

/// The words a session answers an external engine's failure with (after its protocol's error word).
pub fn failure_message(failure: &EngineFailure) -> String {
    format!("the engine `{}` failed: {}", failure.engine, failure.message)
}

/// Start a fresh search of `request` for a session, on kibitz's own engine (`engine` is `None` or `kibitz`) or
/// on the external engine of that name for the request's game. `report` (called on a worker thread) gets the
/// progress and then, once, the end: the answer, or the external engine's failure, which
/// [`Analysis::search`] alone would only log, leaving a session that waits for the answer waiting for ever.
/// Dropping the handle cancels the search (and then nothing more is reported). The error says why no search
/// started.
pub fn start_search<G: Game>(
    analysis: &Analysis,
    engine: Option<&str>,
    request: Request<G>,
    report: impl Fn(SearchReport<G::Move>) + Send + Sync + 'static,
) -> Result<JobHandle, String> {
    let choice = match engine {
        None => EngineChoice::Own,
        Some(name) => {
            let game = G::NAME.parse().map_err(|e| format!("{e}"))?;
            analysis.choose(game, Some(name)).map_err(|e| e.to_string())?
        }
    };
    if let EngineChoice::External(e) = &choice
        && !request.excluded.is_empty()
    {
        // An external engine is given a position and limits only: it could play a move it was told not to.
        return Err(format!("the engine `{}` cannot be told to leave moves out of its search", e.name));
    }
    let request = request.engine(choice);
    let report = Arc::new(report);
    let on_failure = Arc::clone(&report);
    analysis
        .search_or_fail(
            &request,
            move |event| {
                report(match event {
                    Event::Info(info) => SearchReport::Info(info),
                    Event::Done(done) => SearchReport::End(Ok(done)),
                })
            },
            move |failure| on_failure(SearchReport::End(Err(failure))),
        )
        .map_err(|e| e.to_string())
}

/// [`start_search`] for the sessions that want the end only: it is left in the returned [`AnswerSlot`] and
/// `notify` is told [`SearchEnded`] with `id`.
pub fn search_to_slot<G: Game>(
    analysis: &Analysis,
    engine: Option<&str>,
    request: Request<G>,
    id: u64,
    notify: Arc<dyn Fn(SearchEnded) + Send + Sync>,
) -> Result<(JobHandle, AnswerSlot<G::Move>), String> {
    let slot = AnswerSlot::default();
    let sink_slot = slot.clone();
    let job = start_search(analysis, engine, request, move |report| {
        if let SearchReport::End(ending) = report {
            sink_slot.put(ending);
            notify(SearchEnded(id));
        }
    })?;
    Ok((job, slot))
}

/// A search finished: the session's search number (its [`Ending`] is in the search's [`AnswerSlot`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchEnded(pub u64);

/// Where a search leaves its [`Ending`] for the session to pick up when it is told the search ended.
pub struct AnswerSlot<M>(Arc<Mutex<Option<Ending<M>>>>);

impl<M> Clone for AnswerSlot<M> {
    fn clone(&self) -> Self {
        AnswerSlot(Arc::clone(&self.0))
    }
}

impl<M> Default for AnswerSlot<M> {
    fn default() -> Self {
        AnswerSlot(Arc::new(Mutex::new(None)))
    }
}

impl<M> AnswerSlot<M> {
    pub fn put(&self, ending: Ending<M>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(ending);
    }

    pub fn take(&self) -> Option<Ending<M>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// One playing level of the protocols that play by levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    pub description: &'static str,
    /// Depth limit in plies (0: none).
    pub depth: u32,
    /// Thinking time per move in milliseconds (for depth-limited levels a safety cap).
    pub time_ms: u64,
    /// Search threads (0: one per core, at most 8), where the protocol lets the level choose.
    pub threads: usize,
}

/// The level ladder, level 1 first: depth-limited play for the easy levels, timed full-strength search above.
pub const LEVELS: [Level; 8] = [
    Level { description: "Very easy (1 ply)", depth: 1, time_ms: 5_000, threads: 1 },
    Level { description: "Easy (2 plies)", depth: 2, time_ms: 5_000, threads: 1 },
    Level { description: "Casual (4 plies)", depth: 4, time_ms: 10_000, threads: 1 },
    Level { description: "Medium (6 plies)", depth: 6, time_ms: 10_000, threads: 1 },
    Level { description: "Hard (1 second a move)", depth: 0, time_ms: 1_000, threads: 0 },
    Level { description: "Harder (3 seconds a move)", depth: 0, time_ms: 3_000, threads: 0 },
    Level { description: "Expert (10 seconds a move)", depth: 0, time_ms: 10_000, threads: 0 },
    Level { description: "Master (30 seconds a move)", depth: 0, time_ms: 30_000, threads: 0 },
];

/// The level a session starts at (1-based).
pub const DEFAULT_LEVEL: usize = 5;

impl Level {
    /// The level numbered `n` (1-based, clamped to the ladder).
    pub fn numbered(n: usize) -> Level {
        LEVELS[n.clamp(1, LEVELS.len()) - 1]
    }

    pub fn limits(&self) -> Limits {
        Limits {
            depth: (self.depth > 0).then_some(self.depth),
            movetime: Some(Duration::from_millis(self.time_ms)),
            ..Limits::default()
        }
    }

    pub fn threads(&self) -> usize {
        if self.threads > 0 { self.threads } else { std::thread::available_parallelism().map_or(1, |n| n.get()).min(8) }
    }
}

/// Ask `job` for its answer after `grace` (from a timer thread): a search still running when the input ends is
/// given that much more, then answers with what it has. At once if no thread can be had.
pub fn stop_after(job: &JobHandle, grace: Duration, thread_name: &str) {
    let stopper = job.stopper();
    let timer = std::thread::Builder::new().name(thread_name.into()).spawn(move || {
        std::thread::sleep(grace);
        stopper.stop();
    });
    if timer.is_err() {
        job.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_lines_are_bounded_in_number_and_bytes() {
        let mut w = WaitingLines::default();
        let long = "x".repeat(1 << 20);
        for _ in 0..6 {
            w.push(&long);
        }
        w.push("go");
        // Four whole MiB of lines wait; the later ones, however short, are dropped and counted.
        let kept: Vec<usize> = std::iter::from_fn(|| w.pop()).map(|l| l.len()).collect();
        assert_eq!(kept, [1 << 20; 4]);
        assert!(w.take_dropped().is_some_and(|e| e.message().starts_with("3 lines")));
        assert!(w.take_dropped().is_none(), "said once");
        for i in 0..WaitingLines::MAX_LINES + 3 {
            w.push(&i.to_string());
        }
        assert!(w.take_dropped().is_some_and(|e| e.message().starts_with("3 lines")));
        w.clear();
        assert!(w.pop().is_none());
        w.push(&long);
        assert_eq!(w.pop().map(|l| l.len()), Some(1 << 20), "clearing gave the bytes back");
    }

    #[test]
    fn errors_are_written_in_each_protocol_s_words() {
        let uhp = ErrorForm { command: "err", invalid_move: "invalidmove" };
        assert_eq!(uhp.line(&SessionError::command("No game.")), "err No game.");
        assert_eq!(uhp.line(&SessionError::invalid_move("Not legal.")), "invalidmove Not legal.");
        let alert = ErrorForm { command: "ALERT", invalid_move: "ALERT" };
        assert_eq!(alert.line(&"bad".into()), "ALERT bad");
        assert_eq!(alert.line(&"a\rb\0c\nd".into()), "ALERT a?b?c?d");
    }

    #[test]
    fn tokens_are_quoted_back_short_and_printable() {
        assert_eq!(shorten("e2e4"), "e2e4");
        assert_eq!(shorten("a\u{7}b\u{e9}"), "a?b?");
        let long = "x".repeat(100);
        assert_eq!(shorten(&long), format!("{}...", "x".repeat(QUOTE_CHARS)));
    }

    #[test]
    fn scores_as_one_number() {
        assert_eq!(score_number(Score::Cp(-35)), -35);
        assert_eq!(score_number(Score::Mate(7)), MATE_VALUE - 7);
        assert_eq!(score_number(Score::Mate(-4)), -(MATE_VALUE - 4));
        assert_eq!(score_number(Score::Mate(0)), -MATE_VALUE, "mated where it stands");
        assert_eq!(score_number(Score::Mate(i32::MIN)), -(MATE_VALUE - 999));
        assert_eq!(score_number(Score::Cp(50_000)), MATE_VALUE - 1000);
    }

    #[test]
    fn the_ladder_climbs() {
        assert_eq!(Level::numbered(0), LEVELS[0]);
        assert_eq!(Level::numbered(99), LEVELS[7]);
        assert_eq!(Level::numbered(1).limits().depth, Some(1));
        assert_eq!(Level::numbered(DEFAULT_LEVEL).limits().depth, None);
        for pair in LEVELS.windows(2) {
            assert!(pair[0].depth == 0 || pair[1].depth == 0 || pair[0].depth < pair[1].depth);
        }
    }
}
