//! The protocol sessions, bytes in and answers out, through their public line API
//! ([`kibitz::protocols::stdio::LineSession`]).
//!
//! The input is split into lines as the stdio transport splits it (at the protocol's separators, a `\r`
//! before a `\n` dropped, invalid UTF-8 replaced); each line goes to `on_line`. Searches are kept tiny: a
//! session starts at its smallest level (set by a preamble of commands where the protocol has one), a line that would make searches big (deep fixed depths, long
//! times, huge tables, many threads) is rewritten or left out by the target's `tame` function, and a search
//! still running a few milliseconds after the line that started it is told the protocol's stop command.
//! A stop must be answered: a session still thinking [`STOP_DEADLINE`] after it is a failure.
//!
//! Every answer line is checked to be one line (no `\n` or `\r` inside): a token of the input quoted back
//! must not break the framing the GUI reads.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use kibitz::analysis::Analysis;
use kibitz::pool::{Pool, PoolConfig};
use kibitz::protocols::checkers::{CheckersConfig, CheckersSession};
use kibitz::protocols::guide::{GuideConfig, GuideSession};
use kibitz::protocols::qianhong::QianhongSession;
use kibitz::protocols::stdio::{LineSession, Reply};
use kibitz::protocols::uhp::{UhpConfig, UhpSession, parse_time};

/// Most lines one input feeds.
const MAX_LINES: usize = 64;
/// How long a search may run on its own before it is told to stop.
const LET_RUN: Duration = Duration::from_millis(5);
/// How long a stopped search (or one the tame rules bound) may take to answer.
const STOP_DEADLINE: Duration = Duration::from_secs(5);

/// The lines of an input, split as the stdio transport splits them.
fn lines<S: LineSession>(data: &[u8]) -> Vec<String> {
    let data = &data[..data.len().min(crate::MAX_INPUT)];
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() && out.len() < MAX_LINES {
        let (line, next) = match rest.iter().position(|&b| S::is_separator(b)) {
            Some(i) => {
                let line = &rest[..i];
                let line = if rest[i] == b'\n' { line.strip_suffix(b"\r").unwrap_or(line) } else { line };
                (line, &rest[i + 1..])
            }
            None => (rest, &rest[rest.len()..]),
        };
        out.push(String::from_utf8_lossy(line).into_owned());
        rest = next;
    }
    out
}

/// A session under test: the session, its events, how to tell it is thinking and how to stop it.
struct Driver<S: LineSession> {
    session: S,
    events: Receiver<S::Event>,
    thinking: fn(&S) -> bool,
    /// The protocol's command that makes a search answer now, if it has one.
    stop: Option<&'static str>,
}

impl<S: LineSession> Driver<S> {
    fn check(reply: &Reply) {
        for line in &reply.lines {
            assert!(!line.contains(['\n', '\r']), "an answer line holds a line break: {line:?}");
        }
    }

    /// Feed events until the session stops thinking or `deadline` passes; false when it is still thinking.
    fn drain_until(&mut self, deadline: Instant) -> bool {
        while (self.thinking)(&self.session) {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            match self.events.recv_timeout(deadline - now) {
                Ok(event) => {
                    let reply = self.session.on_event(event);
                    Self::check(&reply);
                }
                Err(RecvTimeoutError::Timeout) => return false,
                Err(RecvTimeoutError::Disconnected) => panic!("the session's search events stopped while it thinks"),
            }
        }
        true
    }

    /// Let a search run a moment, then stop it; it must answer.
    fn settle(&mut self) {
        if self.drain_until(Instant::now() + LET_RUN) {
            return;
        }
        if let Some(stop) = self.stop {
            let reply = self.session.on_line(stop);
            Self::check(&reply);
        }
        assert!(self.drain_until(Instant::now() + STOP_DEADLINE), "the search did not answer in time");
    }

    /// The greeting, the `preamble` (setting the smallest level), then the input's lines.
    fn run(mut self, preamble: &[&str], data: &[u8], tame: fn(&str) -> Option<String>) {
        Self::check(&Reply { lines: self.session.greeting(), quit: false });
        for line in preamble {
            let reply = self.session.on_line(line);
            Self::check(&reply);
            assert!(!reply.quit, "{line} quits");
        }
        for line in lines::<S>(data) {
            let Some(line) = tame(&line) else { continue };
            let reply = self.session.on_line(&line);
            Self::check(&reply);
            if reply.quit {
                return;
            }
            self.settle();
        }
        let reply = self.session.on_end_of_input();
        Self::check(&reply);
        if !reply.quit {
            self.settle();
        }
    }
}

/// The analysis path of a stand-alone engine: a one-worker pool with a 1 MiB table.
fn pool() -> Analysis {
    Analysis::local(Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: 1, clock_workers: 0 }))
}

/// The number in `token`, read as the sessions read numbers (a float covers their integers too).
fn number(token: &str) -> Option<f64> {
    token.parse::<f64>().ok().filter(|n| n.is_finite())
}

/// A line with a value that could make the session slow: a setting named by `key` (any case) whose next
/// token is a number above `max`.
fn sets_above(line: &str, key: &str, max: f64) -> bool {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    tokens.windows(2).any(|w| w[0].to_ascii_lowercase().contains(key) && number(w[1]).is_some_and(|n| n > max))
}

/// Checkers Protocol: tables of at most 4 MiB, at most 2 threads; `STOP` stops.
pub fn checkers(data: &[u8]) {
    fn tame(line: &str) -> Option<String> {
        let big = sets_above(line, "hash", 4.0) || sets_above(line, "threads", 2.0);
        (!big).then(|| line.to_string())
    }
    let (tx, events) = mpsc::channel();
    let config = CheckersConfig { depth: 2, time: 0.05, hash_mb: 1, threads: 1, nodes: 0, engine: None };
    let session = CheckersSession::new(pool(), config, move |e| {
        let _ = tx.send(e);
    });
    Driver { session, events, thinking: CheckersSession::is_thinking, stop: Some("STOP") }.run(&[], data, tame);
}

/// GUIDE: `halt 1` stops; no `Hash_MB` above 4 MiB, at most 2 threads.
pub fn guide(data: &[u8]) {
    fn tame(line: &str) -> Option<String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        // setoption 2 <MiB> resizes the table.
        let big = matches!(words.as_slice(), [cmd, "2", v, ..] if cmd.eq_ignore_ascii_case("setoption")
            && number(v).is_some_and(|n| n > 4.0));
        (!big).then(|| line.to_string())
    }
    let (tx, events) = mpsc::channel();
    let config = GuideConfig { threads: 1, max_threads: 2, analysis_depth: 2, hash_mb: 1, ..GuideConfig::default() };
    let session = GuideSession::new(pool(), config, move |e| {
        let _ = tx.send(e);
    });
    Driver { session, events, thinking: GuideSession::is_thinking, stop: Some("halt 1") }.run(
        &["levelsfixeddepth 1"],
        data,
        tame,
    );
}

/// UHP has no stop command: `bestmove` is bounded by rewriting (depth at most 2, time at most 50 ms, levels
/// 1-2), `perft` to at most 2 plies, tables to 4 MiB and threads to 2.
pub fn uhp(data: &[u8]) {
    fn tame(line: &str) -> Option<String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
        let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
        match lower.as_slice() {
            ["bestmove", "depth", n] if number(n).is_some_and(|n| n > 2.0) => Some("bestmove depth 2".into()),
            ["bestmove", "time", t] if parse_time(t).is_some_and(|t| t > Duration::from_millis(50)) => {
                Some("bestmove time 00:00:00.05".into())
            }
            ["perft"] => Some("perft 2".into()),
            ["perft", n] if number(n).is_some_and(|n| n > 2.0) => Some("perft 2".into()),
            ["options", "set", key, v] => {
                let limit = match *key {
                    "level" => 2.0,
                    "threads" => 2.0,
                    "transpositiontablesizemb" => 4.0,
                    _ => f64::INFINITY,
                };
                (!number(v).is_some_and(|n| n > limit)).then(|| line.to_string())
            }
            _ => Some(line.to_string()),
        }
    }
    let (tx, events) = mpsc::channel();
    let config = UhpConfig { level: 1, threads: 1, hash_mb: 1, repetition: false, max_nodes: 0, engine: None };
    let session = UhpSession::new(pool(), config, move |e| {
        let _ = tx.send(e);
    });
    Driver { session, events, thinking: UhpSession::is_thinking, stop: None }.run(&[], data, tame);
}

/// Qianhong: every line but `TIMEOUT` stops a search, `TIMEOUT` makes it answer now.
pub fn qianhong(data: &[u8]) {
    fn tame(line: &str) -> Option<String> {
        Some(line.to_string())
    }
    let (tx, events) = mpsc::channel();
    let session = QianhongSession::new(pool(), move |e| {
        let _ = tx.send(e);
    });
    Driver { session, events, thinking: QianhongSession::is_thinking, stop: Some("TIMEOUT") }.run(
        &["LEVEL 1"],
        data,
        tame,
    );
}
