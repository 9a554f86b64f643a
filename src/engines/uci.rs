//! A UCI engine client: handshake, options, `isready`, and searches whose `info` and `bestmove` lines become
//! kibitz's [`Info`] and [`Done`], every move read with the game's own rules.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::notation::UciNotation;
use super::process::{EngineCommand, Process, Received};
use super::{EngineError, Timeouts, search_deadline};
use crate::game::Side;
use crate::search::{Done, Event, Info, Limits, Line, Score, ScoreBound};

/// How often a waiting search looks at its stop flag.
const POLL: Duration = Duration::from_millis(10);

/// Moves of a reported line kept (the rest is dropped).
const MAX_PV: usize = 256;

/// Options declared by an engine are kept up to this many (a sane engine declares a few dozen).
const MAX_OPTIONS: usize = 1024;

/// An option as the engine declared it (`option name Hash type spin default 16 min 1 max 33554432`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciOption {
    pub name: String,
    /// `check`, `spin`, `combo`, `button` or `string`.
    pub kind: String,
    pub default: Option<String>,
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// The values a `combo` allows.
    pub vars: Vec<String>,
}

impl UciOption {
    /// Read the words after `option`; `None` without a name.
    fn parse(rest: &str) -> Option<UciOption> {
        let mut fields: Vec<(&str, Vec<&str>)> = Vec::new();
        for word in rest.split_whitespace() {
            match word {
                "name" | "type" | "default" | "min" | "max" | "var" => fields.push((word, Vec::new())),
                _ => fields.last_mut()?.1.push(word),
            }
        }
        let mut option =
            UciOption { name: String::new(), kind: String::new(), default: None, min: None, max: None, vars: vec![] };
        for (key, words) in fields {
            let value = words.join(" ");
            match key {
                "name" => option.name = value,
                "type" => option.kind = value,
                "default" => option.default = Some(value),
                "min" => option.min = value.parse().ok(),
                "max" => option.max = value.parse().ok(),
                _ => option.vars.push(value),
            }
        }
        if option.name.is_empty() { None } else { Some(option) }
    }

    /// Whether the declaration allows `value`; the reason when it does not.
    fn check(&self, value: &str) -> Result<(), String> {
        if value.contains(['\n', '\r']) {
            return Err("a value is one line".into());
        }
        match self.kind.as_str() {
            "spin" => {
                let n: i64 = value.trim().parse().map_err(|_| "not an integer".to_string())?;
                if self.min.is_some_and(|min| n < min) || self.max.is_some_and(|max| n > max) {
                    return Err(format!("outside {}..={}", self.min.unwrap_or(i64::MIN), self.max.unwrap_or(i64::MAX)));
                }
                Ok(())
            }
            "check" if value != "true" && value != "false" => Err("expected true or false".into()),
            "combo" if !self.vars.iter().any(|v| v.eq_ignore_ascii_case(value)) => {
                Err(format!("expected one of: {}", self.vars.join(", ")))
            }
            _ => Ok(()),
        }
    }
}

/// A running UCI engine. One search at a time; killed when dropped.
pub struct UciEngine {
    process: Process,
    name: String,
    author: Option<String>,
    options: Vec<UciOption>,
    /// The value last set for each option (by lower-case name).
    values: BTreeMap<String, String>,
    timeouts: Timeouts,
}

impl UciEngine {
    /// Start the engine and make the handshake (`uci` ... `uciok`, then `isready` ... `readyok`).
    pub fn start(command: &EngineCommand, timeouts: Timeouts) -> Result<UciEngine, EngineError> {
        let mut process = Process::spawn(command)?;
        process.send("uci")?;
        let deadline = Instant::now() + timeouts.handshake;
        let mut name = None;
        let mut author = None;
        let mut options = Vec::new();
        loop {
            match process.receive(deadline, "answering the handshake")? {
                Received::Timeout => {
                    let error = EngineError::Timeout {
                        engine: process.label.clone(),
                        during: "uciok",
                        after: timeouts.handshake,
                    };
                    return Err(process.fail(error));
                }
                Received::Line(line) => {
                    let line = line.trim();
                    if line == "uciok" {
                        break;
                    } else if let Some(rest) = line.strip_prefix("id name ") {
                        name = Some(rest.trim().to_string());
                    } else if let Some(rest) = line.strip_prefix("id author ") {
                        author = Some(rest.trim().to_string());
                    } else if let Some(option) = line.strip_prefix("option ").and_then(UciOption::parse)
                        && options.len() < MAX_OPTIONS
                    {
                        options.push(option);
                    }
                }
            }
        }
        if let Some(name) = &name {
            process.label = name.chars().take(100).collect();
        }
        let mut engine =
            UciEngine { name: process.label.clone(), process, author, options, values: BTreeMap::new(), timeouts };
        engine.is_ready()?;
        Ok(engine)
    }

    /// The engine's name (`id name`), or its program when it gave none.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn author(&self) -> Option<&str> {
        self.author.as_deref()
    }

    /// The options the engine declared.
    pub fn options(&self) -> &[UciOption] {
        &self.options
    }

    /// The declared option of this name (UCI option names are case-insensitive).
    pub fn option(&self, name: &str) -> Option<&UciOption> {
        self.options.iter().find(|o| o.name.eq_ignore_ascii_case(name))
    }

    /// The engine failed and was killed: every call fails from now on.
    pub fn is_dead(&self) -> bool {
        self.process.is_dead()
    }

    /// Set an option (`setoption name X value Y`), checked against the engine's declaration first. Takes effect
    /// by the next [`UciEngine::is_ready`] (which every search makes after changing options).
    pub fn set_option(&mut self, name: &str, value: &str) -> Result<(), EngineError> {
        let engine = self.name.clone();
        let Some(option) = self.option(name) else {
            return Err(EngineError::UnknownOption { engine, name: name.to_string() });
        };
        option.check(value).map_err(|reason| EngineError::BadOptionValue {
            engine,
            name: option.name.clone(),
            value: value.chars().take(100).collect(),
            reason,
        })?;
        let line = if option.kind == "button" {
            format!("setoption name {}", option.name)
        } else {
            format!("setoption name {} value {}", option.name, value.trim())
        };
        let key = option.name.to_ascii_lowercase();
        self.process.send(&line)?;
        self.values.insert(key, value.trim().to_string());
        Ok(())
    }

    /// `isready` ... `readyok`, within [`Timeouts::ready`].
    pub fn is_ready(&mut self) -> Result<(), EngineError> {
        self.process.ask_until("isready", "readyok", &self.name, self.timeouts.ready)
    }

    /// `ucinewgame`, then wait until the engine is ready.
    pub fn new_game(&mut self) -> Result<(), EngineError> {
        self.process.send("ucinewgame")?;
        self.is_ready()
    }

    /// Set an option unless it already has this value.
    fn ensure_option(&mut self, name: &str, value: &str) -> Result<bool, EngineError> {
        let current = self.values.get(&name.to_ascii_lowercase()).cloned().or_else(|| {
            let declared = self.option(name)?;
            declared.default.clone()
        });
        if current.is_some_and(|v| v.eq_ignore_ascii_case(value)) {
            return Ok(false);
        }
        self.set_option(name, value)?;
        Ok(true)
    }

    /// Search the position `root` reaches after `moves` (sent to the engine as `position ... moves ...`, so it
    /// sees the history) until a limit is reached or `stop` is set, streaming [`Event::Info`]s and the final
    /// [`Event::Done`] to `sink`, and returning the answer. `multipv` lines are asked for (MultiPV).
    ///
    /// An engine that dies, hangs past the limit plus [`Timeouts::grace`], writes an overlong line or answers
    /// an illegal best move is killed and the error names it.
    pub fn search<G: UciNotation>(
        &mut self,
        root: &G,
        moves: &[G::Move],
        limits: &Limits,
        multipv: u32,
        stop: &AtomicBool,
        sink: &mut dyn FnMut(Event<G::Move>),
    ) -> Result<Done<G::Move>, EngineError> {
        let started = Instant::now();
        let (position, command) = self.position_command(root, moves)?;
        let mut legal = Vec::new();
        position.generate_moves(&mut legal);
        if legal.is_empty() {
            let done = Done {
                best: None,
                ponder: None,
                lines: Vec::new(),
                depth: 0,
                seldepth: 0,
                nodes: 0,
                nps: 0,
                time_ms: started.elapsed().as_millis() as u64,
                neval: 0,
                game_end: Some(position.rule_end(0).unwrap_or_else(|| position.no_move_end())),
            };
            sink(Event::Done(done.clone()));
            return Ok(done);
        }
        self.prepare(&position, multipv.max(1))?;
        self.process.send(&command)?;
        self.process.send(&go_command(limits, position.side_to_move()))?;

        let wanted = (multipv.max(1) as usize).min(legal.len());
        let mut lines = LineBook::new(wanted);
        let mut stats = Stats::default();
        let mut last_score = Score::Cp(0);
        let go_sent = Instant::now();
        let mut stop_at = search_deadline(limits, &self.timeouts).map(|d| go_sent + d);
        let mut hung_at: Option<Instant> = None;
        let best_text = loop {
            let now = Instant::now();
            if hung_at.is_none() && (stop.load(Ordering::Relaxed) || stop_at.is_some_and(|t| now >= t)) {
                self.process.send("stop")?;
                hung_at = Some(now + self.timeouts.grace);
                stop_at = None;
            }
            if let Some(hung) = hung_at.filter(|&t| now >= t) {
                let after = hung.saturating_duration_since(go_sent);
                let error = EngineError::Timeout { engine: self.name.clone(), during: "bestmove", after };
                return Err(self.process.fail(error));
            }
            let wake = [Some(now + POLL), stop_at, hung_at].into_iter().flatten().min().unwrap_or(now + POLL);
            let line = match self.process.receive(wake, "searching")? {
                Received::Timeout => continue,
                Received::Line(line) => line,
            };
            let mut words = line.split_whitespace();
            match words.next() {
                Some("info") => {
                    let raw = RawInfo::parse(words);
                    stats.update(&raw);
                    if let Some(info) = raw.to_info(&position, &mut last_score) {
                        if !info.pv.is_empty() && raw.score.is_some() {
                            lines.record(&info);
                        }
                        sink(Event::Info(info));
                    }
                }
                Some("bestmove") => break line,
                _ => {}
            }
        };

        let mut words = best_text.split_whitespace().skip(1);
        let best_token = words.next().unwrap_or("");
        if matches!(best_token, "" | "(none)" | "0000") {
            // No move where the position has some (a position without one is not searched): a resignation in
            // all but name, told as such rather than as an illegal move.
            let error = EngineError::Protocol {
                engine: self.name.clone(),
                message: format!(
                    "answered `bestmove {best_token}`, no move, in {} where it has legal moves",
                    position.uci_position().unwrap_or_default()
                ),
            };
            return Err(self.process.fail(error));
        }
        let best = position.parse_uci_move(best_token).map_err(|e| {
            let error = EngineError::IllegalMove {
                engine: self.name.clone(),
                token: best_token.chars().take(40).collect(),
                position: position.uci_position().unwrap_or_default(),
                message: e.message,
            };
            self.process.fail(error)
        })?;
        let ponder = match (words.next(), words.next()) {
            (Some("ponder"), Some(text)) => {
                let mut after = position.clone();
                after.make(best);
                after.parse_uci_move(text).ok()
            }
            _ => None,
        };
        let (depth, lines) = lines.finish(&best);
        let elapsed = started.elapsed().as_millis() as u64;
        let done = Done {
            best: Some(best),
            ponder,
            seldepth: lines.first().map_or(0, |l| l.seldepth),
            lines,
            depth,
            nodes: stats.nodes,
            nps: stats.nps,
            time_ms: if stats.time_ms > 0 { stats.time_ms } else { elapsed },
            neval: 0,
            game_end: position.rule_end(0),
        };
        sink(Event::Done(done.clone()));
        Ok(done)
    }

    /// The searched position and the `position` command that sets it up.
    fn position_command<G: UciNotation>(&self, root: &G, moves: &[G::Move]) -> Result<(G, String), EngineError> {
        let request = |source| EngineError::Request { engine: self.name.clone(), source };
        let fen = root.uci_position().map_err(request)?;
        let start = G::start().uci_position().map_err(request)?;
        let mut command = if fen == start { "position startpos".to_string() } else { format!("position fen {fen}") };
        let mut position = root.clone();
        let mut legal = Vec::new();
        for (i, &m) in moves.iter().enumerate() {
            position.generate_moves(&mut legal);
            if !legal.contains(&m) {
                let token = format!("{m:?}");
                return Err(request(crate::game::NotationError::new(token, format!("move {} is not legal", i + 1))));
            }
            command.push_str(if i == 0 { " moves " } else { " " });
            command.push_str(&position.uci_move(m));
            position.make(m);
        }
        Ok((position, command))
    }

    /// Set what the position and the request need (variant, MultiPV), then wait until the engine is ready: what
    /// it still had to say of an earlier search (a late `info`, or a second `bestmove` where a `stop` crossed its
    /// answer) comes before the `readyok` and is dropped, so it never counts as this search's.
    /// A value the engine's declared option does not take (a variant it lacks, more lines than its MultiPV's
    /// maximum) is a request it cannot do, as a missing option is: not an engine failure.
    fn prepare<G: UciNotation>(&mut self, position: &G, multipv: u32) -> Result<(), EngineError> {
        let unsupported = |e: EngineError| match e {
            EngineError::BadOptionValue { engine, name, value, reason } => {
                EngineError::Unsupported { engine, what: format!("cannot set {name} to {value}: {reason}") }
            }
            other => other,
        };
        for setting in position.uci_settings() {
            if self.option(setting.name).is_some() {
                self.ensure_option(setting.name, &setting.value).map_err(unsupported)?;
            } else if setting.required {
                let what =
                    format!("has no option {} (needed to set it to {} for {})", setting.name, setting.value, G::NAME);
                return Err(EngineError::Unsupported { engine: self.name.clone(), what });
            }
        }
        if self.option("MultiPV").is_some() {
            self.ensure_option("MultiPV", &multipv.to_string()).map_err(unsupported)?;
        } else if multipv > 1 {
            let what = "has no MultiPV option (several lines were asked for)".to_string();
            return Err(EngineError::Unsupported { engine: self.name.clone(), what });
        }
        self.is_ready()
    }

    /// Ask the engine to quit, give it a moment, then kill it.
    pub fn quit(mut self) {
        self.process.shut_down("quit", Duration::from_millis(500));
    }
}

/// `go` with the limits: the clock is the side to move's.
fn go_command(limits: &Limits, side: Side) -> String {
    if limits.infinite {
        return "go infinite".to_string();
    }
    let mut go = "go".to_string();
    if let Some(depth) = limits.depth {
        go.push_str(&format!(" depth {depth}"));
    }
    if let Some(nodes) = limits.nodes {
        go.push_str(&format!(" nodes {nodes}"));
    }
    if let Some(time) = limits.movetime {
        go.push_str(&format!(" movetime {}", time.as_millis().max(1)));
    }
    if let Some(clock) = &limits.clock {
        let (time, inc) = if side == Side::First { ("wtime", "winc") } else { ("btime", "binc") };
        go.push_str(&format!(" {time} {} {inc} {}", clock.remaining.as_millis(), clock.increment.as_millis()));
        if let Some(n) = clock.moves_to_go {
            go.push_str(&format!(" movestogo {n}"));
        }
    }
    if go == "go" {
        go.push_str(&format!(" depth {}", Limits::DEFAULT_DEPTH));
    }
    go
}

/// UCI's mate in moves as kibitz's distance in plies: mate in N moves is 2N-1 plies, mated in N is -2N.
pub fn mate_plies(moves: i64) -> i32 {
    let n = moves.clamp(-(1 << 20), 1 << 20) as i32;
    if n > 0 { 2 * n - 1 } else { 2 * n }
}

/// The fields of one `info` line, as text.
#[derive(Default, Debug)]
struct RawInfo<'a> {
    depth: Option<u32>,
    seldepth: Option<u32>,
    multipv: Option<u32>,
    score: Option<Score>,
    bound: Option<ScoreBound>,
    nodes: Option<u64>,
    nps: Option<u64>,
    time_ms: Option<u64>,
    hashfull: Option<u32>,
    currmove: Option<&'a str>,
    currmovenumber: Option<u32>,
    pv: Vec<&'a str>,
}

impl<'a> RawInfo<'a> {
    fn parse(mut words: impl Iterator<Item = &'a str>) -> RawInfo<'a> {
        let mut info = RawInfo::default();
        while let Some(word) = words.next() {
            match word {
                "depth" => info.depth = words.next().and_then(|w| w.parse().ok()),
                "seldepth" => info.seldepth = words.next().and_then(|w| w.parse().ok()),
                "multipv" => info.multipv = words.next().and_then(|w| w.parse().ok()),
                "nodes" => info.nodes = words.next().and_then(|w| w.parse().ok()),
                "nps" => info.nps = words.next().and_then(|w| w.parse().ok()),
                "time" => info.time_ms = words.next().and_then(|w| w.parse().ok()),
                "hashfull" => info.hashfull = words.next().and_then(|w| w.parse().ok()),
                "currmove" => info.currmove = words.next(),
                "currmovenumber" => info.currmovenumber = words.next().and_then(|w| w.parse().ok()),
                "score" => {
                    info.score = match (words.next(), words.next().and_then(|w| w.parse::<i64>().ok())) {
                        (Some("cp"), Some(cp)) => Some(Score::Cp(cp.clamp(-1_000_000, 1_000_000) as i32)),
                        // Mate in 0, the side to move mated now, cannot be a searched position's score: a
                        // position without a move is never sent to the engine.
                        (Some("mate"), Some(n)) if n != 0 => Some(Score::Mate(mate_plies(n))),
                        _ => None,
                    }
                }
                "lowerbound" => info.bound = Some(ScoreBound::Lower),
                "upperbound" => info.bound = Some(ScoreBound::Upper),
                // The rest of the line is the line of play; `string` is free text.
                "pv" => {
                    info.pv = words.by_ref().take(MAX_PV).collect();
                    break;
                }
                "string" => break,
                _ => {}
            }
        }
        info
    }

    /// kibitz's report, when the line carries a score or the move being searched: moves read against
    /// `position` (the pv stops at its first move that is not legal where it stands).
    fn to_info<G: UciNotation>(&self, position: &G, last_score: &mut Score) -> Option<Info<G::Move>> {
        let currmove = self.currmove.and_then(|t| position.parse_uci_move(t).ok());
        if self.score.is_none() && currmove.is_none() {
            return None;
        }
        if let Some(score) = self.score {
            *last_score = score;
        }
        let mut pv = Vec::with_capacity(self.pv.len());
        let mut walk = position.clone();
        for text in &self.pv {
            match walk.parse_uci_move(text) {
                Ok(m) => {
                    pv.push(m);
                    walk.make(m);
                }
                Err(_) => break,
            }
        }
        Some(Info {
            depth: self.depth.unwrap_or(0),
            seldepth: self.seldepth.or(self.depth).unwrap_or(0),
            multipv: self.multipv.unwrap_or(1).max(1),
            score: self.score.unwrap_or(*last_score),
            bound: self.bound.unwrap_or(ScoreBound::Exact),
            nodes: self.nodes.unwrap_or(0),
            nps: self.nps.unwrap_or(0),
            time_ms: self.time_ms.unwrap_or(0),
            pv: if self.score.is_some() { pv } else { Vec::new() },
            currmove: if self.score.is_some() { None } else { currmove },
            currmovenumber: if self.score.is_some() { None } else { self.currmovenumber },
            neval: 0,
            hashfull: self.hashfull.unwrap_or(0),
        })
    }
}

/// The latest node count, speed and time the engine reported.
#[derive(Default)]
struct Stats {
    nodes: u64,
    nps: u64,
    time_ms: u64,
}

impl Stats {
    fn update(&mut self, raw: &RawInfo<'_>) {
        self.nodes = raw.nodes.unwrap_or(self.nodes);
        self.nps = raw.nps.unwrap_or(self.nps);
        self.time_ms = raw.time_ms.unwrap_or(self.time_ms);
    }
}

/// Lines kept beyond the wanted ones: an engine playing below its strength (Stockfish's `UCI_LimitStrength`
/// searches four) may choose the move of a later line, which then answers first.
const SPARE_LINES: usize = 8;

/// The lines of the deepest depth reported, and of the deepest depth whose every wanted line was reported.
struct LineBook<M> {
    wanted: usize,
    current: (u32, BTreeMap<u32, Line<M>>),
    complete: Option<(u32, BTreeMap<u32, Line<M>>)>,
}

impl<M: Clone + PartialEq> LineBook<M> {
    fn new(wanted: usize) -> Self {
        LineBook { wanted, current: (0, BTreeMap::new()), complete: None }
    }

    fn is_complete(&self, lines: &BTreeMap<u32, Line<M>>) -> bool {
        (1..=self.wanted as u32).all(|k| lines.contains_key(&k))
    }

    /// The last report of a line at a depth replaces the earlier ones; reports of a shallower depth than the
    /// deepest seen are stale, and a bound (`lowerbound`/`upperbound`: an aspiration window failed, or the
    /// search was stopped inside one) is no line's score.
    fn record(&mut self, info: &Info<M>) {
        if info.multipv as usize > self.wanted.max(SPARE_LINES) || info.bound != ScoreBound::Exact {
            return;
        }
        if info.depth > self.current.0 {
            let previous = std::mem::replace(&mut self.current, (info.depth, BTreeMap::new()));
            if self.is_complete(&previous.1) {
                self.complete = Some(previous);
            }
        } else if info.depth < self.current.0 {
            return;
        }
        let line = Line { pv: info.pv.clone(), score: info.score, depth: info.depth, seldepth: info.seldepth };
        self.current.1.insert(info.multipv, line);
    }

    /// The deepest depth with every line, or failing that whatever the deepest reported (a search stopped in
    /// its first iteration); the line of the engine's move `best` first, then the others in the engine's order,
    /// as many as were wanted. Where the chosen depth has no line of `best`, the other depth kept is tried; where
    /// neither has one, no line is answered (the lines would be another move's, under this best move's name),
    /// as the Hub and Checkers Protocol clients answer.
    fn finish(self, best: &M) -> (u32, Vec<Line<M>>) {
        let wanted = self.wanted;
        let has_best = |lines: &BTreeMap<u32, Line<M>>| lines.values().any(|l| l.pv.first() == Some(best));
        let current_first = self.is_complete(&self.current.1) || self.complete.is_none();
        let (first, second) =
            if current_first { (Some(self.current), self.complete) } else { (self.complete, Some(self.current)) };
        let chosen = [first, second].into_iter().flatten().find(|(_, lines)| has_best(lines));
        let Some((depth, lines)) = chosen else { return (0, Vec::new()) };
        let mut lines: Vec<Line<M>> = lines.into_values().collect();
        if let Some(i) = lines.iter().position(|l| l.pv.first() == Some(best)) {
            let line = lines.remove(i);
            lines.insert(0, line);
        }
        lines.truncate(wanted);
        (depth, lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_in_moves_becomes_plies() {
        assert_eq!(mate_plies(1), 1);
        assert_eq!(mate_plies(2), 3);
        assert_eq!(mate_plies(-1), -2);
        assert_eq!(mate_plies(-3), -6);
        assert_eq!(mate_plies(i64::MAX), (1 << 21) - 1);
    }

    #[test]
    fn info_fields_are_read() {
        let line = "depth 12 seldepth 17 multipv 2 score cp -35 upperbound nodes 123456 nps 987654 hashfull 41 \
                    tbhits 0 time 125 pv e2e4 e7e5 g1f3";
        let raw = RawInfo::parse(line.split_whitespace());
        assert_eq!(raw.depth, Some(12));
        assert_eq!(raw.seldepth, Some(17));
        assert_eq!(raw.multipv, Some(2));
        assert_eq!(raw.score, Some(Score::Cp(-35)));
        assert_eq!(raw.bound, Some(ScoreBound::Upper));
        assert_eq!((raw.nodes, raw.nps, raw.time_ms, raw.hashfull), (Some(123456), Some(987654), Some(125), Some(41)));
        assert_eq!(raw.pv, ["e2e4", "e7e5", "g1f3"]);
        let raw = RawInfo::parse("depth 3 score mate -2 lowerbound pv".split_whitespace());
        assert_eq!((raw.score, raw.bound), (Some(Score::Mate(-4)), Some(ScoreBound::Lower)));
        let raw = RawInfo::parse("string depth 9 score cp 1".split_whitespace());
        assert_eq!((raw.depth, raw.score), (None, None));
        // An engine's `mate 0` where it was given moves to search is no score (it was stored as mated).
        let raw = RawInfo::parse("depth 5 score mate 0 pv e2e4".split_whitespace());
        assert_eq!((raw.depth, raw.score), (Some(5), None));
    }

    #[test]
    fn options_are_read_and_checked() {
        let hash = UciOption::parse("name Hash type spin default 16 min 1 max 33554432").expect("an option");
        assert_eq!(
            (hash.name.as_str(), hash.kind.as_str(), hash.min, hash.max),
            ("Hash", "spin", Some(1), Some(33554432))
        );
        assert!(hash.check("64").is_ok());
        assert!(hash.check("0").is_err());
        assert!(hash.check("lots").is_err());
        assert!(hash.check("64\nquit").is_err());
        let variant = UciOption::parse("name UCI_Variant type combo default chess var chess var xiangqi var shogi")
            .expect("an option");
        assert_eq!(variant.vars, ["chess", "xiangqi", "shogi"]);
        assert!(variant.check("xiangqi").is_ok());
        assert!(variant.check("checkers").is_err());
        let path = UciOption::parse("name Syzygy Path type string default <empty>").expect("an option");
        assert_eq!(path.name, "Syzygy Path");
        assert_eq!(path.default.as_deref(), Some("<empty>"));
        assert!(UciOption::parse("type spin").is_none());
    }

    fn info(depth: u32, multipv: u32, score: i32) -> Info<u8> {
        Info {
            depth,
            seldepth: depth,
            multipv,
            score: Score::Cp(score),
            bound: ScoreBound::Exact,
            nodes: 0,
            nps: 0,
            time_ms: 0,
            pv: vec![multipv as u8],
            currmove: None,
            currmovenumber: None,
            neval: 0,
            hashfull: 0,
        }
    }

    #[test]
    fn the_deepest_complete_depth_answers() {
        let mut book = LineBook::new(2);
        for i in [info(1, 1, 10), info(1, 2, 5), info(2, 1, 12), info(2, 2, 7), info(3, 1, 15)] {
            book.record(&i);
        }
        let (depth, lines) = book.finish(&1);
        assert_eq!(depth, 2);
        assert_eq!(lines.iter().map(|l| l.score).collect::<Vec<_>>(), [Score::Cp(12), Score::Cp(7)]);

        let mut book = LineBook::new(1);
        for i in [info(4, 1, 10), info(4, 1, 30), info(2, 1, -5)] {
            book.record(&i);
        }
        assert_eq!(book.finish(&1), (4, vec![Line { pv: vec![1], score: Score::Cp(30), depth: 4, seldepth: 4 }]));
    }

    #[test]
    fn bounds_are_no_lines() {
        // Depth 5's only report failed high and the search was stopped there: depth 4's exact line answers.
        let mut book = LineBook::new(1);
        let failed_high = Info { bound: ScoreBound::Lower, ..info(5, 1, 180) };
        for i in [info(4, 1, 20), failed_high] {
            book.record(&i);
        }
        assert_eq!(book.finish(&1), (4, vec![Line { pv: vec![1], score: Score::Cp(20), depth: 4, seldepth: 4 }]));

        // A bound at the depth of an exact line does not replace it.
        let mut book = LineBook::new(1);
        let failed_low = Info { bound: ScoreBound::Upper, ..info(6, 1, -90) };
        for i in [info(6, 1, 15), failed_low] {
            book.record(&i);
        }
        assert_eq!(book.finish(&1).1[0].score, Score::Cp(15));
    }

    #[test]
    fn the_line_of_the_chosen_move_answers_first() {
        // One line wanted, four reported (a strength-limited engine), and the move of the third chosen.
        let book = || {
            let mut book = LineBook::new(1);
            for i in [info(7, 1, 40), info(7, 2, 25), info(7, 3, 10), info(7, 4, -30)] {
                book.record(&i);
            }
            book
        };
        let (depth, lines) = book().finish(&3);
        assert_eq!(depth, 7);
        assert_eq!(lines, vec![Line { pv: vec![3], score: Score::Cp(10), depth: 7, seldepth: 7 }]);
        // The engine's first line when its move is the first's; no line when no line has its move (found by an
        // audit: another move's line and score were answered, and annotated, as the chosen move's).
        assert_eq!(book().finish(&1).1[0].score, Score::Cp(40));
        assert_eq!(book().finish(&9), (0, vec![]));
        // Two wanted: the chosen line, then the others in order.
        let mut two = LineBook::new(2);
        for i in [info(3, 1, 40), info(3, 2, 25), info(3, 3, 10)] {
            two.record(&i);
        }
        let scores: Vec<Score> = two.finish(&3).1.iter().map(|l| l.score).collect();
        assert_eq!(scores, [Score::Cp(10), Score::Cp(40)]);
        // The chosen move's line only at the complete depth before: that depth answers.
        let mut book = LineBook::new(1);
        for i in [info(5, 1, 30), info(6, 1, 35)] {
            book.record(&i);
        }
        let mut moved = info(6, 1, 50);
        moved.pv = vec![2];
        book.record(&moved);
        assert_eq!(book.finish(&1).0, 5);
    }

    /// Found by an audit: five lines asked, a search stopped inside its first iteration after two: the deepest
    /// lines reported answer (there were none).
    #[test]
    fn a_search_stopped_in_its_first_iteration_answers_what_it_reported() {
        let mut book = LineBook::new(5);
        for i in [info(1, 1, 20), info(1, 2, 10)] {
            book.record(&i);
        }
        let (depth, lines) = book.finish(&1);
        assert_eq!((depth, lines.len()), (1, 2));
    }
}
