//! The DamExchange Protocol (DXP: international draughts between two programs over TCP) as a transport-free
//! session state machine, and [`run_tcp`], one session on a connected socket (`kibitz dxp`).
//!
//! Every message is one upper-case letter and fixed-width fields, ended by a NUL byte:
//!
//! | message | layout |
//! |---|---|
//! | GAMEREQ | `R` version(2) `01`, initiator name(32), follower's colour(1) `W`/`Z`, minutes(3) for the whole game, moves(3) in the whole game (`000`: no limit), `A` (start position) or `B` + side to move(1) + 50 squares `e`/`w`/`z`/`W`/`Z` |
//! | GAMEACC | `A` follower name(32), code(1): `0` accepted, `1` not this protocol version, `2` not this game (another is welcome), `3` no game at all |
//! | MOVE | `M` seconds used(4), from(2), to(2), captured count(2), each captured square(2) |
//! | GAMEEND | `E` reason(1): `0` unknown, `1` the sender loses, `2` draw, `3` the sender wins; stop(1): `0` another game welcome, `1` no more games |
//! | CHAT | `C` text |
//! | BACKREQ | `B` move number(3), side to move(1) |
//! | BACKACC | `K` code(1): `0` accepted, `1` not supported, `2` declined |
//!
//! The initiator (`kibitz dxp --connect`) proposes the game with GAMEREQ; the follower (`kibitz dxp
//! --listen`) accepts it with GAMEACC. Then each side sends its moves as MOVE. When the game has ended (no legal
//! move, or a draw by the rules: repetition, the king-move rules), the side to move sends GAMEEND in place of a
//! move (the protocol allows an ending GAMEEND only on the sender's turn), and the other answers with its own:
//! after a move of kibitz's that ends the game kibitz waits for the peer's GAMEEND, and sends its own if the peer
//! moves on instead. The initiator plays `games` games, changing colours after each, then both sides close the
//! connection.
//!
//! Each side keeps its own clock: the GAMEREQ's minutes for the whole game, less the time its own searches
//! took, spread over the moves left to the GAMEREQ's number (then over an open-ended rest). kibitz accepts
//! every GAMEREQ of version 01 whose position it can read; one it cannot accept is answered why (a CHAT) and
//! GAMEACC `1` (another version) or `2` (this game cannot be played; another is welcome), as the protocol
//! asks of every GAMEREQ. It declines takebacks (BACKACC `1`), and answers another message it cannot read
//! with a CHAT `kibitz error: <what was wrong>` (DXP has no error message) and nothing else; a move that is
//! not legal ends the game (GAMEEND `0`, no more games) because the two boards no longer agree. Messages are
//! ASCII (a byte outside it is named, not read past); a CHAT kibitz writes is cut to the protocol's 127
//! characters.
//!
//! kibitz waits for the peer as long as the peer's time for the game allows when it is the peer's move (plus
//! the idle period), and the idle period otherwise, counted from kibitz's last message; then it ends the
//! game (GAMEEND `0`, no more games) and closes the connection.

use std::io::{self, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::analysis::{Analysis, Request};
use crate::game::{Game, Outcome, Side};
use crate::games::draughts::{Draughts, Move};
use crate::pool::{JobHandle, Pool, PoolConfig, Priority};
use crate::search::{Clock, Event, Limits};

use super::session::{AnswerSlot, ErrorForm, SearchEnded, SessionError, shorten};
pub use super::stdio::Reply;
use super::stdio::{self, EventSender, LineSession, Transport};

/// The longest DXP message read (a CHAT may be long; nothing else is).
pub const MAX_MESSAGE: usize = 4096;
/// DXP has no error message: errors go to the peer as a CHAT.
const ERRORS: ErrorForm = ErrorForm { command: "Ckibitz error:", invalid_move: "Ckibitz error:" };

/// Who proposes the games.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sends GAMEREQ: `games` games, the first with kibitz playing `first_side`, colours changing after each.
    Initiator { games: u32, first_side: Side, minutes: u32, moves: u32 },
    /// Waits for GAMEREQ.
    Follower,
}

/// A session's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DxpConfig {
    pub role: Role,
    pub name: String,
    pub threads: u32,
    pub hash_mb: u32,
}

/// The longest message the protocol allows, in characters (a CHAT kibitz writes is cut to it).
pub const PROTOCOL_MESSAGE: usize = 127;

/// A game in progress.
struct Match {
    game: Draughts,
    mine: Side,
    /// Time for the whole game per side, and the moves of the whole game (0: no limit).
    budget: Duration,
    period_moves: u32,
    used: Duration,
    my_moves: u32,
}

/// A search under way.
struct Thinking {
    id: u64,
    _job: JobHandle,
    slot: AnswerSlot<Move>,
    started: Instant,
}

/// One DXP session.
pub struct DxpSession {
    analysis: Analysis,
    notify: Arc<dyn Fn(SearchEnded) + Send + Sync>,
    config: DxpConfig,
    current: Option<Match>,
    thinking: Option<Thinking>,
    /// Games the initiator has still to propose (after the current one).
    games_left: u32,
    /// The side kibitz plays in the next game the initiator proposes.
    next_side: Side,
    /// This side has sent its GAMEEND for the current game.
    end_sent: bool,
    next_id: u64,
    /// The results so far, from kibitz's side: wins, draws, losses.
    pub score: (u32, u32, u32),
    /// One line per finished game, shared with whoever started the session.
    results: Arc<Mutex<Vec<String>>>,
    /// The peer said it wants no more games.
    peer_done: bool,
    /// When kibitz last sent a message, and how long the peer may then be silent beyond its own thinking.
    last_sent: Instant,
    idle: Duration,
}

/// A GAMEREQ's game (version 01): the position, kibitz's side, the minutes and the moves.
fn read_gamereq(m: &str) -> Result<(Draughts, Side, u32, u32), SessionError> {
    let mine = match m.get(35..36) {
        Some("W") => Side::First,
        Some("Z") => Side::Second,
        other => {
            return Err(SessionError::command(format!("follower colour `{}` is not W or Z", other.unwrap_or(""))));
        }
    };
    let minutes = field(m, 36, 3, "the game time")?;
    let moves = field(m, 39, 3, "the number of moves")?;
    let game = match m.get(42..43) {
        Some("A") => Draughts::start(),
        Some("B") => {
            let text = m.get(43..94).ok_or_else(|| SessionError::command("GAMEREQ position too short"))?;
            let side = match text.get(..1) {
                Some("W") => 'W',
                Some("Z") => 'B',
                _ => return Err(SessionError::command("GAMEREQ side to move is not W or Z")),
            };
            if let Some(bad) = text[1..].chars().find(|c| !"ewzWZ".contains(*c)) {
                return Err(SessionError::command(format!(
                    "GAMEREQ square `{}` is not e, w, z, W or Z",
                    shorten(&bad.to_string())
                )));
            }
            let squares: String = text[1..]
                .chars()
                .map(|c| match c {
                    'z' => 'b',
                    'Z' => 'B',
                    c => c,
                })
                .collect();
            Draughts::from_hub(&format!("{side}{squares}"))
                .map_err(|e| SessionError::command(format!("GAMEREQ position: {}", e.message)))?
        }
        _ => return Err(SessionError::command("GAMEREQ position indicator is not A or B")),
    };
    Ok((game, mine, minutes, moves))
}

fn colour_letter(side: Side) -> char {
    if side == Side::First { 'W' } else { 'Z' }
}

fn field(text: &str, at: usize, len: usize, what: &str) -> Result<u32, SessionError> {
    let part = text.get(at..at + len).ok_or_else(|| SessionError::command(format!("message too short for {what}")))?;
    part.trim().parse::<u32>().map_err(|_| SessionError::command(format!("{what} `{}` is not a number", shorten(part))))
}

impl DxpSession {
    pub fn new(analysis: Analysis, config: DxpConfig, notify: impl Fn(SearchEnded) + Send + Sync + 'static) -> Self {
        let (games_left, next_side) = match &config.role {
            Role::Initiator { games, first_side, .. } => (*games, *first_side),
            Role::Follower => (0, Side::First),
        };
        DxpSession {
            analysis,
            notify: Arc::new(notify),
            config,
            current: None,
            thinking: None,
            games_left,
            next_side,
            end_sent: false,
            next_id: 0,
            score: (0, 0, 0),
            results: Arc::new(Mutex::new(Vec::new())),
            peer_done: false,
            last_sent: Instant::now(),
            idle: Duration::from_secs(600),
        }
    }

    /// How long the peer may be silent beyond its own time for the game (10 minutes unless set).
    pub fn with_idle(mut self, idle: Duration) -> Self {
        self.idle = idle;
        self
    }

    /// What the session writes: CHATs in ASCII and cut to the protocol's length; the time noted for the idle
    /// limit.
    fn sent(&mut self, reply: Reply) -> Reply {
        if !reply.lines.is_empty() {
            self.last_sent = Instant::now();
        }
        let lines = reply
            .lines
            .into_iter()
            .map(|l| match l.starts_with('C') {
                true => l.chars().take(PROTOCOL_MESSAGE).map(|c| if c.is_ascii() { c } else { '?' }).collect(),
                false => l,
            })
            .collect();
        Reply { lines, quit: reply.quit }
    }

    /// The peer has been silent longer than it may be: the game (if any) ends, and the session.
    fn overdue(&self) -> bool {
        let allowed = match &self.current {
            // The peer's move: its time for the game (kibitz does not keep the peer's clock) and the idle period.
            Some(c) if c.game.side_to_move() != c.mine => c.budget + self.idle,
            _ => self.idle,
        };
        self.thinking.is_none() && self.last_sent.elapsed() >= allowed
    }

    fn give_up(&mut self) -> Reply {
        let mut lines =
            vec![ERRORS.line(&SessionError::command("no message from the peer for too long; the session ends"))];
        if let Some(current) = self.current.take() {
            self.score.1 += 1;
            self.record(current.mine, "abandoned (the opponent did not answer in time)");
            lines.push("E01".to_string());
        }
        self.sent(Reply::quit(lines))
    }

    /// Write one line per finished game to `results`.
    pub fn with_results(mut self, results: Arc<Mutex<Vec<String>>>) -> Self {
        self.results = results;
        self
    }

    fn record(&mut self, mine: Side, result: &str) {
        let line = format!(
            "game {}: kibitz {}, {result}",
            self.score.0 + self.score.1 + self.score.2,
            Draughts::side_name(mine)
        );
        tracing::info!("{line}");
        self.results.lock().unwrap_or_else(|e| e.into_inner()).push(line);
    }

    pub fn in_game(&self) -> bool {
        self.current.is_some()
    }

    fn name32(&self) -> String {
        let mut n: String = self.config.name.chars().filter(|c| c.is_ascii_graphic() || *c == ' ').take(32).collect();
        while n.len() < 32 {
            n.push(' ');
        }
        n
    }

    /// The initiator's first message: its GAMEREQ.
    pub fn greeting(&mut self) -> Vec<String> {
        self.propose().into_iter().collect()
    }

    fn propose(&mut self) -> Option<String> {
        let Role::Initiator { minutes, moves, .. } = self.config.role else { return None };
        if self.games_left == 0 {
            return None;
        }
        self.games_left -= 1;
        let follower = colour_letter(self.next_side.opponent());
        Some(format!("R01{}{follower}{:03}{:03}A", self.name32(), minutes.min(999), moves.min(999)))
    }

    pub fn on_line(&mut self, message: &str) -> Reply {
        if message.starts_with('C') && self.overdue() {
            // Chatting is no answer: a peer that only chats is given up on as a silent one is.
            return self.give_up();
        }
        let lines = match message.char_indices().find(|(_, c)| !c.is_ascii()) {
            // Fixed-width fields cannot be read past a character that is not one byte: name it.
            Some((at, _)) => {
                let e = SessionError::command(format!(
                    "a DXP message is ASCII, but `{}` has another character at position {}",
                    shorten(message),
                    message[..at].chars().count() + 1
                ));
                let mut lines = vec![ERRORS.line(&e)];
                // A GAMEREQ is always answered.
                if message.starts_with('R') && self.config.role == Role::Follower {
                    lines.push(format!("A{}2", self.name32()));
                }
                lines
            }
            None => match self.message(message) {
                Ok(lines) => lines,
                Err(e) => vec![ERRORS.line(&e)],
            },
        };
        let reply = Reply { quit: self.finished(&lines), lines };
        self.sent(reply)
    }

    /// The session is over: between games, with nothing more to propose (the initiator, once the GAMEEND
    /// exchange is complete) or with a peer that wants no more games (the follower).
    fn finished(&self, lines: &[String]) -> bool {
        if self.current.is_some() || self.end_sent || lines.iter().any(|l| l.starts_with('R')) {
            return false;
        }
        match self.config.role {
            Role::Initiator { .. } => self.games_left == 0 || self.peer_done,
            Role::Follower => self.peer_done,
        }
    }

    fn message(&mut self, message: &str) -> Result<Vec<String>, SessionError> {
        let kind = message.chars().next().unwrap_or(' ');
        match kind {
            'R' => self.gamereq(message),
            'A' => self.gameacc(message),
            'M' => self.peer_move(message),
            'E' => self.gameend(message),
            'C' => {
                tracing::info!(chat = %shorten(&message[1..]), "DXP chat");
                Ok(Vec::new())
            }
            'B' => Ok(vec!["K1".to_string()]),
            'K' => Ok(Vec::new()),
            _ if message.is_empty() => Ok(Vec::new()),
            _ => Err(SessionError::command(format!("unknown message `{}`", shorten(message)))),
        }
    }

    fn gamereq(&mut self, m: &str) -> Result<Vec<String>, SessionError> {
        if self.config.role != Role::Follower {
            return Err(SessionError::command("GAMEREQ sent to the initiator"));
        }
        // Every GAMEREQ gets a GAMEACC: `1` for another version, `2` for a game that cannot be played now
        // (another is welcome), after a CHAT saying why.
        let declined = |code: char, e: SessionError, name: String| Ok(vec![ERRORS.line(&e), format!("A{name}{code}")]);
        if self.current.is_some() {
            return declined('2', SessionError::command("GAMEREQ during a game"), self.name32());
        }
        if m.get(1..3) != Some("01") {
            let e = SessionError::command(format!("DXP version `{}` is not 01", shorten(m.get(1..3).unwrap_or(""))));
            return declined('1', e, self.name32());
        }
        let (game, mine, minutes, moves) = match read_gamereq(m) {
            Ok(read) => read,
            Err(e) => return declined('2', e, self.name32()),
        };
        // The protocol's own case for code 2: no legal move in the starting position (found by an audit: kibitz
        // accepted such a game, then ended it with a chat that its search found no move).
        if game.legal_moves().is_empty() {
            let e = SessionError::command("the starting position has no legal move: the game would be over already");
            return declined('2', e, self.name32());
        }
        self.begin(game, mine, minutes, moves);
        let mut lines = vec![format!("A{}0", self.name32())];
        lines.extend(self.think_if_mine()?);
        Ok(lines)
    }

    fn gameacc(&mut self, m: &str) -> Result<Vec<String>, SessionError> {
        let Role::Initiator { minutes, moves, .. } = self.config.role else {
            return Err(SessionError::command("GAMEACC sent to the follower"));
        };
        if self.current.is_some() {
            return Err(SessionError::command("GAMEACC during a game"));
        }
        match m.get(33..34) {
            Some("0") => {
                let mine = self.next_side;
                self.next_side = mine.opponent();
                self.begin(Draughts::start(), mine, minutes, moves);
                self.think_if_mine()
            }
            code => {
                tracing::warn!(code = ?code, "the follower declined the game");
                self.peer_done = true;
                Ok(Vec::new())
            }
        }
    }

    fn begin(&mut self, game: Draughts, mine: Side, minutes: u32, moves: u32) {
        self.analysis.pool().clear_hash();
        self.end_sent = false;
        self.current = Some(Match {
            game,
            mine,
            budget: Duration::from_secs(u64::from(minutes.max(1)) * 60),
            period_moves: moves,
            used: Duration::ZERO,
            my_moves: 0,
        });
    }

    fn peer_move(&mut self, m: &str) -> Result<Vec<String>, SessionError> {
        let Some(current) = &mut self.current else { return Err(SessionError::command("MOVE outside a game")) };
        if current.game.side_to_move() == current.mine {
            return Err(SessionError::command("MOVE when it is kibitz's turn"));
        }
        if current.game.outcome().is_some() {
            // kibitz's last move ended the game by the rules and the peer moved on instead of ending it: it is
            // kibitz's turn now, when the protocol lets it send its GAMEEND (the board, which has not taken the
            // peer's move, still says the peer is to move).
            return Ok(self.end_by_rules().unwrap_or_default());
        }
        let from = field(m, 5, 2, "the from square")?;
        let to = field(m, 7, 2, "the to square")?;
        let n = field(m, 9, 2, "the number of captures")? as usize;
        let mut text = if n == 0 { format!("{from}-{to}") } else { format!("{from}x{to}") };
        for i in 0..n {
            text.push_str(&format!("x{}", field(m, 11 + 2 * i, 2, "a captured square")?));
        }
        match current.game.parse_hub_move(&text) {
            Ok(mv) => current.game.make(mv),
            Err(e) => {
                // The boards disagree: this game cannot go on.
                let mine = current.mine;
                self.end_sent = true;
                self.current = None;
                self.score.1 += 1;
                self.games_left = 0;
                self.record(mine, &format!("abandoned (the opponent's move {text} is not legal here)"));
                let error = ERRORS.line(&SessionError::invalid_move(format!("move {text}: {}", e.message)));
                return Ok(vec![error, "E01".to_string()]);
            }
        }
        if let Some(lines) = self.check_end() {
            return Ok(lines);
        }
        self.think_if_mine()
    }

    /// If the game is over and it is kibitz's turn, this side's GAMEEND (and the game is closed). The protocol
    /// lets a program send the GAMEEND that ends a game only on its own turn, in place of a move: after a move
    /// of kibitz's that ends the game, the peer is to send it (kibitz acknowledges it, [`Self::gameend`]) or,
    /// if it moves on, kibitz sends it then.
    fn check_end(&mut self) -> Option<Vec<String>> {
        let current = self.current.as_ref()?;
        if current.game.side_to_move() != current.mine {
            return None;
        }
        self.end_by_rules()
    }

    /// If the game is over by the rules, this side's GAMEEND now (and the game is closed).
    fn end_by_rules(&mut self) -> Option<Vec<String>> {
        let reason = self.score_rules_end()?;
        self.current = None;
        self.thinking = None;
        self.end_sent = true;
        Some(vec![format!("E{reason}{}", self.stop_code())])
    }

    /// Count and record the end of the current game by the rules, if it has ended: GAMEEND's reason from
    /// kibitz's side (`3` won, `1` lost, `2` draw).
    fn score_rules_end(&mut self) -> Option<char> {
        let current = self.current.as_ref()?;
        let end = current.game.outcome()?;
        let mine = current.mine;
        let (reason, word) = match end.outcome {
            Outcome::Win(side) if side == mine => {
                self.score.0 += 1;
                ('3', "won")
            }
            Outcome::Win(_) => {
                self.score.2 += 1;
                ('1', "lost")
            }
            Outcome::Draw => {
                self.score.1 += 1;
                ('2', "draw")
            }
        };
        self.record(mine, &format!("{word} ({})", end.reason));
        Some(reason)
    }

    /// GAMEEND's stop code: the follower welcomes another game (the initiator decides); the initiator says
    /// whether it will propose one.
    fn stop_code(&self) -> char {
        match self.config.role {
            Role::Initiator { .. } if self.games_left == 0 => '1',
            _ => '0',
        }
    }

    fn gameend(&mut self, m: &str) -> Result<Vec<String>, SessionError> {
        let mut lines = Vec::new();
        if m.get(2..3) == Some("1") {
            self.peer_done = true;
        }
        // Between games, a GAMEEND that acknowledges nothing (the peer's own end of a game kibitz had already
        // ended, crossing kibitz's) changes nothing: no second game is proposed for it.
        if self.current.is_none() && !self.end_sent {
            return Ok(lines);
        }
        if self.score_rules_end().is_some() {
            // kibitz's move ended the game and the peer, on its turn, says so: the rules say how it ended.
            self.current = None;
            self.thinking = None;
            lines.push(format!("E0{}", self.stop_code()));
        } else if let Some(current) = self.current.take() {
            // The peer ended the game (resigned, claimed, or saw an end kibitz does not): its word counts.
            self.thinking = None;
            let word = match m.get(1..2) {
                Some("1") => {
                    self.score.0 += 1;
                    "won (the opponent resigned)"
                }
                Some("3") => {
                    self.score.2 += 1;
                    "lost (the opponent claimed the game)"
                }
                _ => {
                    self.score.1 += 1;
                    "ended by the opponent"
                }
            };
            self.record(current.mine, word);
            lines.push(format!("E0{}", self.stop_code()));
        }
        self.end_sent = false;
        if !self.peer_done {
            lines.extend(self.propose());
        }
        Ok(lines)
    }

    fn think_if_mine(&mut self) -> Result<Vec<String>, SessionError> {
        let Some(current) = &self.current else { return Ok(Vec::new()) };
        if current.game.side_to_move() != current.mine {
            return Ok(Vec::new());
        }
        // One budget for the whole game, spread over the moves left to the GAMEREQ's number, if any.
        let remaining = current.budget.saturating_sub(current.used).max(Duration::from_millis(50));
        let moves_to_go = (current.period_moves > current.my_moves).then(|| current.period_moves - current.my_moves);
        let limits =
            Limits { clock: Some(Clock { remaining, increment: Duration::ZERO, moves_to_go }), ..Limits::default() };
        let request = Request::new(current.game.clone(), limits)
            .threads(self.config.threads.max(1) as usize)
            .priority(Priority::Play);
        self.next_id += 1;
        let id = self.next_id;
        let slot = AnswerSlot::default();
        let sink_slot = slot.clone();
        let notify = Arc::clone(&self.notify);
        let job = self
            .analysis
            .search(&request, move |e: Event<Move>| {
                if let Event::Done(done) = e {
                    sink_slot.put(Ok(done));
                    notify(SearchEnded(id));
                }
            })
            .map_err(|e| SessionError::command(format!("cannot search now: {e}")))?;
        self.thinking = Some(Thinking { id, _job: job, slot, started: Instant::now() });
        Ok(Vec::new())
    }

    pub fn on_event(&mut self, event: SearchEnded) -> Reply {
        let reply = self.searched(event);
        self.sent(reply)
    }

    fn searched(&mut self, event: SearchEnded) -> Reply {
        let Some(t) = self.thinking.take_if(|t| t.id == event.0) else { return Reply::none() };
        let Some(current) = &mut self.current else { return Reply::none() };
        let spent = t.started.elapsed();
        current.used += spent;
        current.my_moves += 1;
        let best =
            t.slot.take().and_then(Result::ok).and_then(|d| d.best).filter(|m| current.game.legal_moves().contains(m));
        let Some(best) = best else {
            let mut lines = vec![ERRORS.line(&SessionError::command("the search found no move"))];
            lines.extend(self.check_end().unwrap_or_default());
            return Reply { lines, quit: false };
        };
        let caps = best.captured_squares();
        let mut line = format!(
            "M{:04}{:02}{:02}{:02}",
            spent.as_secs().min(9999),
            best.from_square(),
            best.to_square(),
            caps.len()
        );
        for c in caps {
            line.push_str(&format!("{c:02}"));
        }
        current.game.make(best);
        let mut lines = vec![line];
        lines.extend(self.check_end().unwrap_or_default());
        Reply { lines, quit: false }
    }
}

impl LineSession for DxpSession {
    type Event = SearchEnded;

    fn greeting(&mut self) -> Vec<String> {
        DxpSession::greeting(self)
    }

    fn on_line(&mut self, line: &str) -> Reply {
        DxpSession::on_line(self, line)
    }

    fn on_event(&mut self, event: SearchEnded) -> Reply {
        DxpSession::on_event(self, event)
    }

    fn on_line_too_long(&mut self, bytes: usize) -> Reply {
        Reply::line(ERRORS.line(&SessionError::command(format!(
            "a message of {bytes} bytes is longer than the limit of {MAX_MESSAGE} bytes, ignored"
        ))))
    }

    fn on_end_of_input(&mut self) -> Reply {
        // A game cut off is one of the session's games, as one given up for silence is (found by an audit: the
        // summary said `0 games played` and only the log knew of it).
        if let Some(current) = self.current.take() {
            tracing::warn!("the DXP peer closed the connection during a game");
            self.score.1 += 1;
            self.record(current.mine, "abandoned (the opponent closed the connection)");
        }
        Reply::quit(Vec::new())
    }

    fn may_drop(_: &SearchEnded) -> bool {
        false
    }

    fn is_separator(byte: u8) -> bool {
        byte == 0
    }

    /// Nothing from the peer for a while: give up once it is overdue (see [`DxpSession::overdue`]).
    fn on_idle(&mut self) -> Reply {
        if self.overdue() { self.give_up() } else { Reply::none() }
    }
}

/// Writes the session's lines as DXP messages: each line end becomes the NUL that ends a message. What a
/// reply writes goes out at its flush in one write, so a message and its NUL travel in one segment.
struct NulWriter<W: Write> {
    out: W,
    pending: Vec<u8>,
}

impl<W: Write> Write for NulWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend(buf.iter().map(|&b| if b == b'\n' { 0 } else { b }));
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        self.out.write_all(&pending)?;
        self.out.flush()
    }
}

/// Play DXP on a connected socket until the session ends (the peer's silence for `idle` ends it too); one
/// line per finished game is returned.
pub fn run_tcp(stream: TcpStream, config: DxpConfig, idle: Duration) -> io::Result<Vec<String>> {
    let span = tracing::info_span!("dxp_session", peer = ?stream.peer_addr().ok());
    let _enter = span.enter();
    let input = stream.try_clone()?;
    // The session decides when the peer is overdue; it is asked a few times per idle period.
    input.set_read_timeout(Some((idle / 4).max(Duration::from_millis(250))))?;
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(error = %e, "cannot set TCP_NODELAY");
    }
    stream.set_write_timeout(Some(Duration::from_secs(60)))?;
    let closer = stream.try_clone()?;
    let pool = Pool::new(PoolConfig { workers: 1, queue: 2, hash_mb: config.hash_mb as usize, clock_workers: 0 });
    let results = Arc::new(Mutex::new(Vec::new()));
    let shared = Arc::clone(&results);
    let mut output = NulWriter { out: stream, pending: Vec::new() };
    let outcome = stdio::run_with(
        move |events: EventSender<SearchEnded>| {
            DxpSession::new(Analysis::local(pool), config, move |e| events.send(e)).with_results(shared).with_idle(idle)
        },
        input,
        &mut output,
        Transport { max_line: MAX_MESSAGE, reader_name: "kibitz-dxp" },
    );
    let _ = closer.shutdown(std::net::Shutdown::Both);
    outcome?;
    Ok(results.lock().unwrap_or_else(|e| e.into_inner()).clone())
}
