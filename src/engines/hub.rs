//! A Hub (version 2) client for international draughts engines (Scan 3.x and others): `hub` ... `wait`, the
//! configured `set-param`s, `init` ... `ready`, then searches as `pos` + `level` + `go`, whose `info` and
//! `done` lines become kibitz's [`Info`] and [`Done`], every move read with kibitz's own draughts rules.
//!
//! What this client writes and reads:
//!
//! * Lines are `command arg=value arg=value ...`, a value in double quotes when it holds a space, `=` or is
//!   empty; an argument without `=` is a flag. Unknown commands and arguments are ignored.
//! * Positions: `W` or `B` (the side to move), then one character per square 1-50: `w`/`b` men, `W`/`B` kings,
//!   `e` empty. The root is sent with the moves from it (`pos pos=... moves="32-28 19-23"`), so the engine sees
//!   the history for repetitions.
//! * Moves: `from-to` for a quiet move; for a capture `fromxto` followed by `x` and every captured square, in
//!   any order (`28x19x23`). An answered capture that lists no captured square is accepted when one legal
//!   capture has those ends.
//! * Limits: `level depth=N`, `level move-time=S` (seconds), `level time=S inc=S [moves=N]` for a clock,
//!   `level nodes=N` (Scan's node budget, which kibitz-hub reads too), `level infinite`; no limit searches
//!   [`Draughts::DEFAULT_DEPTH`](crate::game::Game::DEFAULT_DEPTH) plies. An infinite search is `go analyze`,
//!   the others `go think`. `stop` is sent when the stop flag is set or the limit plus [`Timeouts::grace`] has
//!   passed; the engine then has the grace period to answer `done`.
//! * `info depth= score= nodes= time= nps= pv="..."`: `score` is in men (Scan: `0.12`), read as centi-men (12);
//!   a score beyond ±90 men is the end of the game in `100 - |score|` hundredths, i.e. plies (Scan's
//!   `99.97` is a win in 3 plies), read as [`Score::Mate`]; Scan's ±89.xx (a won endgame reached soon, not yet
//!   the end) stays a plain score. `time` in seconds; the speed is derived from `nodes` and `time` (Scan writes `nps` in millions).
//! * Before each search, `ping` and its `pong`: lines of an earlier search still coming (a late `info`, a second
//!   `done`) are read and dropped there.
//! * One line only: more is [`EngineError::Unsupported`]. An `error` line during a search kills the process.
//! * Options from the engines file are `set-param`s before `init`, checked against the engine's `param`
//!   declarations (unknown name: [`EngineError::UnknownOption`]; a value outside an `enum`'s values, an `int`
//!   or `real` range, or not `true`/`false` for a `bool`: [`EngineError::BadOptionValue`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::config::EngineSpec;
use super::driver::Driver;
use super::process::{EngineCommand, Process, Received};
use super::{EngineError, Timeouts, search_deadline};
use crate::game::{Game, NotationError};
use crate::games::draughts::{Draughts, Move};
use crate::search::{Done, Event, Info, Limits, Line, Score, ScoreBound};

/// How often a waiting search looks at its stop flag.
const POLL: Duration = Duration::from_millis(10);

/// Moves of a reported line kept (the rest is dropped).
const MAX_PV: usize = 256;

/// The most parameters kept from the handshake.
const MAX_PARAMS: usize = 256;

/// An engine parameter as declared (`param name=variant value=normal type=enum values="normal killer bt"`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct HubParam {
    pub name: String,
    pub value: String,
    pub kind: String,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub values: Vec<String>,
}

impl HubParam {
    fn check(&self, value: &str) -> Result<(), String> {
        match self.kind.as_str() {
            "bool" if value != "true" && value != "false" => Err("expected true or false".into()),
            "int" | "real" => {
                let n: f64 = value.parse().map_err(|_| format!("not a number ({})", self.kind))?;
                if self.kind == "int" && value.parse::<i64>().is_err() {
                    return Err("not an integer".into());
                }
                if !n.is_finite() || self.min.is_some_and(|m| n < m) || self.max.is_some_and(|m| n > m) {
                    let (lo, hi) = (self.min.unwrap_or(f64::NEG_INFINITY), self.max.unwrap_or(f64::INFINITY));
                    return Err(format!("outside {lo}..={hi}"));
                }
                Ok(())
            }
            "enum" if !self.values.iter().any(|v| v == value) => {
                Err(format!("expected one of: {}", self.values.join(", ")))
            }
            _ => Ok(()),
        }
    }
}

/// A running Hub engine. One search at a time; killed when dropped.
pub struct HubEngine {
    process: Process,
    id: String,
    params: Vec<HubParam>,
    timeouts: Timeouts,
}

/// One Hub line: its command and its arguments (`None` for a flag).
pub fn parse_line(line: &str) -> (String, Vec<(String, Option<String>)>) {
    let mut chars = line.trim().chars().peekable();
    let mut tokens: Vec<(String, Option<String>)> = Vec::new();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut name = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_whitespace() && *c != '=') {
            name.push(c);
        }
        let value = if chars.next_if_eq(&'=').is_some() {
            let mut value = String::new();
            if chars.next_if_eq(&'"').is_some() {
                for c in chars.by_ref() {
                    if c == '"' {
                        break;
                    }
                    value.push(c);
                }
            } else {
                while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                    value.push(c);
                }
            }
            Some(value)
        } else {
            None
        };
        tokens.push((name, value));
    }
    if tokens.is_empty() {
        return (String::new(), Vec::new());
    }
    let (command, _) = tokens.remove(0);
    (command, tokens)
}

fn arg<'a>(args: &'a [(String, Option<String>)], name: &str) -> Option<&'a str> {
    args.iter().find(|(n, _)| n == name).and_then(|(_, v)| v.as_deref())
}

/// A value as Hub writes it: quoted when it holds a space or `=` or is empty.
fn quote(value: &str) -> String {
    if value.is_empty() || value.contains([' ', '=', '\t']) { format!("\"{value}\"") } else { value.to_string() }
}

impl HubEngine {
    /// Start the engine: `hub` ... `wait` (its id and parameters), `set-param` for each of `options` (checked
    /// against the declarations), then `init` ... `ready`.
    pub fn start(
        command: &EngineCommand,
        timeouts: Timeouts,
        options: &[(String, String)],
    ) -> Result<HubEngine, EngineError> {
        let mut process = Process::spawn(command)?;
        process.send("hub")?;
        let deadline = Instant::now() + timeouts.handshake;
        let mut id = None;
        let mut params = Vec::new();
        loop {
            let line = match process.receive(deadline, "answering the handshake")? {
                Received::Line(line) => line,
                Received::Timeout => {
                    let error = EngineError::Timeout {
                        engine: process.label.clone(),
                        during: "wait",
                        after: timeouts.handshake,
                    };
                    return Err(process.fail(error));
                }
            };
            let (command, args) = parse_line(&line);
            match command.as_str() {
                "wait" => break,
                "id" => {
                    let name = arg(&args, "name").unwrap_or("").trim();
                    let version = arg(&args, "version").unwrap_or("").trim();
                    let text = format!("{name} {version}");
                    if !text.trim().is_empty() {
                        id = Some(text.trim().chars().take(100).collect::<String>());
                    }
                }
                "param" if params.len() < MAX_PARAMS => {
                    let Some(name) = arg(&args, "name").filter(|n| !n.is_empty()) else { continue };
                    let number = |key| arg(&args, key).and_then(|v| v.parse::<f64>().ok());
                    params.push(HubParam {
                        name: name.to_string(),
                        value: arg(&args, "value").unwrap_or("").to_string(),
                        kind: arg(&args, "type").unwrap_or("string").to_string(),
                        min: number("min"),
                        max: number("max"),
                        values: arg(&args, "values").unwrap_or("").split_whitespace().map(String::from).collect(),
                    });
                }
                _ => {}
            }
        }
        if let Some(id) = &id {
            process.label = id.clone();
        }
        let mut engine = HubEngine { id: process.label.clone(), process, params, timeouts };
        for (name, value) in options {
            engine.set_param(name, value)?;
        }
        engine.process.send("init")?;
        let deadline = Instant::now() + timeouts.ready;
        loop {
            match engine.process.receive(deadline, "getting ready")? {
                Received::Line(line) if parse_line(&line).0 == "ready" => return Ok(engine),
                Received::Line(_) => {}
                Received::Timeout => {
                    let error =
                        EngineError::Timeout { engine: engine.id.clone(), during: "ready", after: timeouts.ready };
                    return Err(engine.process.fail(error));
                }
            }
        }
    }

    /// The engine's name and version (`id name= version=`), or its program when it gave none.
    pub fn name(&self) -> &str {
        &self.id
    }

    /// The parameters the engine declared (with the values it declared).
    pub fn params(&self) -> &[HubParam] {
        &self.params
    }

    pub fn is_dead(&self) -> bool {
        self.process.is_dead()
    }

    /// `set-param`, before `init` only (engines read parameters when they initialise).
    fn set_param(&mut self, name: &str, value: &str) -> Result<(), EngineError> {
        let Some(param) = self.params.iter().find(|p| p.name.eq_ignore_ascii_case(name)).cloned() else {
            return Err(EngineError::UnknownOption { engine: self.id.clone(), name: name.to_string() });
        };
        let value = value.trim();
        param.check(value).map_err(|reason| EngineError::BadOptionValue {
            engine: self.id.clone(),
            name: param.name.clone(),
            value: value.chars().take(100).collect(),
            reason,
        })?;
        if value.contains('"') {
            let reason = "a Hub value cannot hold `\"`".to_string();
            let value = value.chars().take(100).collect();
            return Err(EngineError::BadOptionValue { engine: self.id.clone(), name: param.name, value, reason });
        }
        self.process.send(&format!("set-param name={} value={}", quote(&param.name), quote(value)))
    }

    /// `ping`, then wait for `pong`: what the engine still had to say of an earlier search (a late `info`, or a
    /// second `done` where a `stop` crossed its answer) comes before it and is dropped, so it never counts as the
    /// next search's.
    fn sync(&mut self) -> Result<(), EngineError> {
        self.process.ask_until("ping", "pong", &self.id, self.timeouts.ready)
    }

    /// `new-game`: the next search is unrelated to the previous ones.
    pub fn new_game(&mut self) -> Result<(), EngineError> {
        self.process.send("new-game")
    }

    /// Search the position `root` reaches after `moves`. See the module documentation.
    pub fn search(
        &mut self,
        root: &Draughts,
        moves: &[Move],
        limits: &Limits,
        multipv: u32,
        stop: &AtomicBool,
        sink: &mut dyn FnMut(Event<Move>),
    ) -> Result<Done<Move>, EngineError> {
        let started = Instant::now();
        if self.is_dead() {
            return Err(EngineError::Dead { engine: self.id.clone() });
        }
        if multipv > 1 {
            let what = "gives one line, not several (Hub has no MultiPV)".to_string();
            return Err(EngineError::Unsupported { engine: self.id.clone(), what });
        }
        let (position, command) =
            pos_command(root, moves).map_err(|source| EngineError::Request { engine: self.id.clone(), source })?;
        if position.legal_moves().is_empty() {
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
        self.sync()?;
        self.process.send(&command)?;
        self.process.send(&level_command(limits))?;
        self.process.send(if limits.infinite { "go analyze" } else { "go think" })?;

        let sent = Instant::now();
        let mut stop_at = search_deadline(limits, &self.timeouts).map(|d| sent + d);
        let mut hung_at: Option<Instant> = None;
        let mut last: Option<Info<Move>> = None;
        let mut stats = (0u64, 0u64);
        let done_args = loop {
            let now = Instant::now();
            if hung_at.is_none() && (stop.load(Ordering::Relaxed) || stop_at.is_some_and(|t| now >= t)) {
                self.process.send("stop")?;
                hung_at = Some(now + self.timeouts.grace);
                stop_at = None;
            }
            if let Some(hung) = hung_at.filter(|&t| now >= t) {
                let after = hung.saturating_duration_since(sent);
                let error = EngineError::Timeout { engine: self.id.clone(), during: "done", after };
                return Err(self.process.fail(error));
            }
            let wake = [Some(now + POLL), stop_at, hung_at].into_iter().flatten().min().unwrap_or(now + POLL);
            let line = match self.process.receive(wake, "searching")? {
                Received::Timeout => continue,
                Received::Line(line) => line,
            };
            let (command, args) = parse_line(&line);
            match command.as_str() {
                "info" => {
                    let Some((info, scored)) = read_info(&position, &args) else { continue };
                    stats = (info.nodes, info.time_ms);
                    if !scored {
                        // Nothing to show or keep without the engine's evaluation (its counts are kept).
                        continue;
                    }
                    if !info.pv.is_empty() && last.as_ref().is_none_or(|l| info.depth >= l.depth) {
                        last = Some(info.clone());
                    }
                    sink(Event::Info(info));
                }
                "done" => break args,
                "error" => {
                    let text: String = arg(&args, "message").unwrap_or(&line).chars().take(200).collect();
                    let text = super::process::printable(&text);
                    let error = EngineError::Protocol { engine: self.id.clone(), message: format!("error: {text}") };
                    return Err(self.process.fail(error));
                }
                _ => {}
            }
        };
        let token = arg(&done_args, "move").unwrap_or("");
        let best = parse_hub_move(&position, token).map_err(|e| {
            let error = EngineError::IllegalMove {
                engine: self.id.clone(),
                token: token.chars().take(40).collect(),
                position: hub_position(&position),
                message: e.message,
            };
            self.process.fail(error)
        })?;
        let ponder = arg(&done_args, "ponder").and_then(|text| {
            let mut after = position.clone();
            after.make(best);
            parse_hub_move(&after, text).ok()
        });
        let lines: Vec<Line<Move>> = last
            .iter()
            .filter(|info| info.pv.first() == Some(&best))
            .map(|info| Line { pv: info.pv.clone(), score: info.score, depth: info.depth, seldepth: info.seldepth })
            .collect();
        let depth = lines.first().map_or(0, |l| l.depth);
        let elapsed = started.elapsed().as_millis() as u64;
        let (nodes, time_ms) = (stats.0, if stats.1 > 0 { stats.1 } else { elapsed });
        let done = Done {
            best: Some(best),
            ponder,
            lines,
            depth,
            seldepth: depth,
            nodes,
            nps: nodes.saturating_mul(1000).checked_div(time_ms).unwrap_or(0),
            time_ms,
            neval: 0,
            game_end: position.rule_end(0),
        };
        sink(Event::Done(done.clone()));
        Ok(done)
    }

    /// Ask the engine to quit, give it a moment, then kill it.
    pub fn quit(mut self) {
        self.process.shut_down("quit", Duration::from_millis(500));
    }
}

/// A position as Hub writes it: the side to move (`W`/`B`) and 50 squares.
pub fn hub_position(position: &Draughts) -> String {
    let guide = position.to_guide();
    let mut words = guide.split_whitespace();
    let side = if words.next().is_some_and(|w| w.eq_ignore_ascii_case("white")) { 'W' } else { 'B' };
    let mut text = String::with_capacity(51);
    text.push(side);
    text.extend(words.flat_map(|w| w.chars()));
    text
}

/// A legal move as Hub writes it: `32-28`, or `28x19x23` (from, to, the captured squares ascending).
pub fn hub_move(m: Move) -> String {
    if !m.is_capture() {
        return format!("{}-{}", m.from_square(), m.to_square());
    }
    let mut text = format!("{}x{}", m.from_square(), m.to_square());
    for square in m.captured_squares() {
        text.push_str(&format!("x{square}"));
    }
    text
}

/// A move as a Hub engine wrote it, found among the legal moves of `position`.
pub fn parse_hub_move(position: &Draughts, text: &str) -> Result<Move, NotationError> {
    let bad = |message: &str| NotationError::new(text, message);
    let capture = text.contains('x');
    let squares: Vec<u8> = text
        .split(['x', '-'])
        .map(|s| s.parse::<u8>().ok().filter(|n| (1..=50).contains(n)))
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| bad("not a Hub move (`32-28`, `28x19x23`)"))?;
    if squares.len() < 2
        || squares.len() > 2 + 20
        || (!capture && squares.len() != 2)
        || (capture && text.contains('-'))
    {
        return Err(bad("not a Hub move (`32-28`, `28x19x23`)"));
    }
    let (from, to) = (squares[0], squares[1]);
    let mut captured: Vec<u8> = squares[2..].to_vec();
    captured.sort_unstable();
    let legal = position.legal_moves();
    let fits: Vec<Move> = legal
        .iter()
        .copied()
        .filter(|m| m.from_square() == from && m.to_square() == to && m.is_capture() == capture)
        .filter(|m| !capture || captured.is_empty() || m.captured_squares() == captured)
        .collect();
    match fits.as_slice() {
        [m] => Ok(*m),
        [] => Err(bad("illegal move")),
        _ => Err(bad("ambiguous capture: list the captured squares")),
    }
}

/// The searched position and the `pos` command that sets it up (the root and the moves from it).
fn pos_command(root: &Draughts, moves: &[Move]) -> Result<(Draughts, String), NotationError> {
    let mut position = root.clone();
    let mut command = format!("pos pos={}", hub_position(root));
    let mut texts = Vec::with_capacity(moves.len());
    for (i, &m) in moves.iter().enumerate() {
        if !position.legal_moves().contains(&m) {
            return Err(NotationError::new(format!("{m:?}"), format!("move {} is not legal", i + 1)));
        }
        texts.push(hub_move(m));
        position.make(m);
    }
    if !texts.is_empty() {
        command.push_str(&format!(" moves=\"{}\"", texts.join(" ")));
    }
    Ok((position, command))
}

fn seconds(t: Duration) -> String {
    format!("{:.3}", t.as_secs_f64())
}

/// The `level` command for the limits.
fn level_command(limits: &Limits) -> String {
    if limits.infinite {
        return "level infinite".into();
    }
    if let Some(depth) = limits.depth {
        return format!("level depth={}", depth.max(1));
    }
    if let Some(time) = limits.movetime {
        return format!("level move-time={}", seconds(time));
    }
    if let Some(nodes) = limits.nodes {
        return format!("level nodes={}", nodes.max(1));
    }
    if let Some(clock) = &limits.clock {
        let mut level = String::from("level");
        if let Some(n) = clock.moves_to_go {
            level.push_str(&format!(" moves={n}"));
        }
        level.push_str(&format!(" time={}", seconds(clock.remaining)));
        if !clock.increment.is_zero() {
            level.push_str(&format!(" inc={}", seconds(clock.increment)));
        }
        return level;
    }
    format!("level depth={}", Draughts::DEFAULT_DEPTH)
}

/// Above this many centi-men (and up to 10000) a Hub score is the end of the game: `10000 - score` plies away.
const WIN_SCORES: i32 = 9000;

/// Hub's score in men as kibitz's centi-units, or as a mate when it is a win or loss in so many plies.
pub fn men_score(text: &str) -> Option<Score> {
    let men: f64 = text.parse().ok().filter(|v: &f64| v.is_finite())?;
    let cp = (men * 100.0).round().clamp(-1e6, 1e6) as i32;
    Some(match cp.unsigned_abs() {
        a if a > WIN_SCORES as u32 && a <= 10_000 => {
            // The end of the game is a ply away at least, won or lost: kibitz's `Mate(0)` is the side to move
            // mated where it stands, never the score of a position searched (one without moves is not sent),
            // and an engine's "100.00" or "-100.00" means won or lost at a distance it does not give. The
            // Checkers Protocol client reads its engines' ends of the game the same way.
            let plies = (10_000 - a as i32).max(1);
            Score::Mate(if cp > 0 { plies } else { -plies })
        }
        _ => Score::Cp(cp),
    })
}

/// An `info` line, when it carries a score or a line, and whether it carries a score (without one, its score
/// is a placeholder no answer may use); its moves read against `position` (the pv stops at its first move that
/// is not legal where it stands).
fn read_info(position: &Draughts, args: &[(String, Option<String>)]) -> Option<(Info<Move>, bool)> {
    let score = arg(args, "score").and_then(men_score);
    let mut pv = Vec::new();
    let mut walk = position.clone();
    for text in arg(args, "pv").unwrap_or("").split_whitespace().take(MAX_PV) {
        match parse_hub_move(&walk, text) {
            Ok(m) => {
                pv.push(m);
                walk.make(m);
            }
            Err(_) => break,
        }
    }
    if score.is_none() && pv.is_empty() {
        return None;
    }
    let depth = arg(args, "depth").and_then(|d| d.parse::<u32>().ok()).unwrap_or(0);
    let nodes = arg(args, "nodes").and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
    let time_ms = arg(args, "time")
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|t| t.is_finite() && *t >= 0.0)
        .map_or(0, |t| (t * 1000.0).min(1e15) as u64);
    let info = Info {
        depth,
        seldepth: depth,
        multipv: 1,
        score: score.unwrap_or(Score::Cp(0)),
        bound: ScoreBound::Exact,
        nodes,
        nps: nodes.saturating_mul(1000).checked_div(time_ms).unwrap_or(0),
        time_ms,
        pv,
        currmove: None,
        currmovenumber: None,
        neval: 0,
        hashfull: 0,
    };
    Some((info, score.is_some()))
}

impl Driver<Draughts> for HubEngine {
    fn id(&self) -> &str {
        &self.id
    }

    fn is_dead(&self) -> bool {
        HubEngine::is_dead(self)
    }

    fn new_game(&mut self) -> Result<(), EngineError> {
        HubEngine::new_game(self)
    }

    fn search(
        &mut self,
        root: &Draughts,
        moves: &[Move],
        limits: &Limits,
        multipv: u32,
        stop: &AtomicBool,
        sink: &mut dyn FnMut(Event<Move>),
    ) -> Result<Done<Move>, EngineError> {
        HubEngine::search(self, root, moves, limits, multipv, stop, sink)
    }

    fn shut_down(self: Box<Self>) {
        self.quit();
    }
}

/// Start a Hub engine with the options of its configuration.
pub fn hub_launch(spec: &EngineSpec) -> Result<Box<dyn Driver<Draughts>>, EngineError> {
    Ok(Box::new(HubEngine::start(&spec.command(), spec.timeouts, &spec.options)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_become_level_commands() {
        assert_eq!(level_command(&Limits::nodes(20_000)), "level nodes=20000");
        assert_eq!(level_command(&Limits { depth: Some(7), ..Limits::default() }), "level depth=7");
        let movetime = Limits { movetime: Some(Duration::from_millis(250)), ..Limits::default() };
        assert_eq!(level_command(&movetime), "level move-time=0.250");
        assert_eq!(level_command(&Limits { infinite: true, ..Limits::default() }), "level infinite");
        assert_eq!(level_command(&Limits::default()), format!("level depth={}", Draughts::DEFAULT_DEPTH));
    }

    #[test]
    fn lines_are_split_into_arguments() {
        let (command, args) =
            parse_line(r#"info depth=21 mean-depth=20.8 score=-0.01 pv="32-28 17-22" flag  empty="" "#);
        assert_eq!(command, "info");
        assert_eq!(arg(&args, "depth"), Some("21"));
        assert_eq!(arg(&args, "pv"), Some("32-28 17-22"));
        assert_eq!(arg(&args, "empty"), Some(""));
        assert!(args.iter().any(|(n, v)| n == "flag" && v.is_none()));
        assert_eq!(parse_line("   ").0, "");
    }

    #[test]
    fn positions_and_moves_are_written_and_read() {
        let start = Draughts::start();
        assert_eq!(hub_position(&start), format!("W{}{}{}", "b".repeat(20), "e".repeat(10), "w".repeat(20)));
        let m = parse_hub_move(&start, "32-28").expect("legal");
        assert_eq!(hub_move(m), "32-28");
        assert!(parse_hub_move(&start, "32-23").is_err());
        assert!(parse_hub_move(&start, "32x28").is_err());
        assert!(parse_hub_move(&start, "junk").is_err());
        // A capture: white 28 takes black 23 landing on 19... set up with 32-28 19-23.
        let mut g = start.clone();
        for t in ["32-28", "19-23"] {
            let m = parse_hub_move(&g, t).expect("legal");
            g.make(m);
        }
        let capture = parse_hub_move(&g, "28x19x23").expect("the capture");
        assert_eq!(hub_move(capture), "28x19x23");
        assert_eq!(parse_hub_move(&g, "28x19"), Ok(capture));
        assert!(parse_hub_move(&g, "28x19x24").is_err());
    }

    #[test]
    fn scores_in_men_become_centi_men() {
        assert_eq!(men_score("0.12"), Some(Score::Cp(12)));
        assert_eq!(men_score("-1.5"), Some(Score::Cp(-150)));
        assert_eq!(men_score("nan"), None);
        // Scan's ends of the game: a win in 3 plies, a loss in 4; a won endgame soon is still a score.
        assert_eq!(men_score("99.97"), Some(Score::Mate(3)));
        assert_eq!(men_score("-99.96"), Some(Score::Mate(-4)));
        assert_eq!(men_score("89.95"), Some(Score::Cp(8995)));
        assert_eq!(men_score("100"), Some(Score::Mate(1)), "a win, in one ply at least");
        assert_eq!(men_score("-100"), Some(Score::Mate(-1)), "a loss, in one ply at least: never mated now");
        assert_eq!(men_score("250"), Some(Score::Cp(25000)), "beyond the scale: a plain score");
    }

    #[test]
    fn info_without_a_score_is_marked() {
        let start = Draughts::start();
        let read = |line: &str| read_info(&start, &parse_line(line).1);
        let (info, scored) = read("info depth=12 score=0.25 pv=\"32-28 19-23\"").expect("an info");
        assert!(scored);
        assert_eq!((info.depth, info.score, info.pv.len()), (12, Score::Cp(25), 2));
        // The score is optional in Hub: a line without one (or with one that is no number) is no evaluation.
        for line in ["info depth=12 pv=\"32-28\"", "info depth=12 score=junk pv=\"32-28\""] {
            let (info, scored) = read(line).expect("an info");
            assert!(!scored, "{line}");
            assert_eq!(info.pv.len(), 1);
        }
        assert!(read("info nodes=1000").is_none());
    }

    #[test]
    fn params_are_checked() {
        let p =
            HubParam { name: "v".into(), kind: "enum".into(), values: vec!["normal".into()], ..HubParam::default() };
        assert!(p.check("normal").is_ok() && p.check("killer").is_err());
        let p =
            HubParam { name: "t".into(), kind: "int".into(), min: Some(1.0), max: Some(4.0), ..HubParam::default() };
        assert!(p.check("2").is_ok() && p.check("5").is_err() && p.check("2.5").is_err());
    }
}
