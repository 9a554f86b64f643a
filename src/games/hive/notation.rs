//! UHP notation: GameTypeString, GameString and MoveString, read and written as Mzinga does.
//!
//! A MoveString names the moving piece and where it goes relative to a piece next to the destination:
//! `X-` east of X, `-X` west, `X/` north-east, `/X` south-west, `X\` south-east, `\X` north-west; a bare
//! `X` is on top of X; the first move of the game is the piece alone; `pass` passes. Reading is
//! case-insensitive and accepts any occupied neighbour as the reference; writing is canonical: the first
//! occupied neighbour of the destination scanning NW, NE, E, SE, SW, W with the moving piece lifted off.

use super::board::{Board, Bug, GameType, Move, NO_CELL, NO_PIECE, ORIGIN, PER_SIDE, nb, piece_name};
use crate::game::NotationError;

/// The longest text these parsers look at (a full game of moves fits easily).
const MAX_TEXT: usize = 1 << 20;

/// Read a piece name (`wQ`, `bA2`, `wM`), case-insensitively.
pub fn parse_piece(token: &str) -> Option<u8> {
    let b = token.as_bytes();
    if b.len() < 2 || b.len() > 3 {
        return None;
    }
    let color: u8 = match b[0].to_ascii_lowercase() {
        b'w' => 0,
        b'b' => 1,
        _ => return None,
    };
    let bug = Bug::from_letter(b[1] as char)?;
    let (lo, hi) = bug.kinds();
    let kind = if b.len() == 2 {
        if hi - lo != 1 {
            return None;
        }
        lo
    } else {
        let n = b[2].wrapping_sub(b'0');
        if hi - lo == 1 || n == 0 || n > hi - lo {
            return None;
        }
        lo + n - 1
    };
    Some(color * PER_SIDE + kind)
}

/// Direction from the reference piece to the destination, from the separator and its side.
fn direction(sep: u8, before: bool) -> Option<usize> {
    // Directions: 0 NW, 1 NE, 2 E, 3 SE, 4 SW, 5 W.
    Some(match (sep, before) {
        (b'-', true) => 5,
        (b'/', true) => 4,
        (b'\\', true) => 0,
        (b'-', false) => 2,
        (b'/', false) => 1,
        (b'\\', false) => 3,
        _ => return None,
    })
}

/// Every reason Mzinga gives for a move that is read but not legal (UHP's `invalidmove`); any other error of
/// [`parse_move`] means the text is not a MoveString of this position at all.
pub const ILLEGAL_REASONS: [&str; 14] = [
    "You can't play, the game is over.",
    "It's not that player's turn.",
    "That piece is not enabled in this game.",
    "You can't play your Queen Bee on your first turn.",
    "You must play your Queen Bee on or before your fourth turn.",
    "You can't move a piece in play until you've played your Queen Bee.",
    "When there are multiple pieces of the same bug type, you must play the pieces in order.",
    "You can't move there because a piece already exists at that position.",
    "You can't move that piece because it has another piece on top of it.",
    "You can't move that piece because it will break the hive.",
    "You can't move that piece because it was moved by a pillbug last turn.",
    "You can't move that piece there.",
    "You can't pass, the game is over.",
    "You can't pass when you have valid moves.",
];

/// The reason Mzinga gives when `m` (piece, destination) is not a legal move here.
pub fn illegal_reason(b: &Board, m: Move) -> &'static str {
    if b.result().is_some() {
        return "You can't play, the game is over.";
    }
    let p = m.piece;
    let me = b.to_move();
    if super::board::color_of(p) != me {
        return "It's not that player's turn.";
    }
    if !b.enabled(p) {
        return "That piece is not enabled in this game.";
    }
    let player_turn = 1 + b.turn() / 2;
    let bug = super::board::bug_of(p);
    if player_turn == 1 && bug == Bug::Queen {
        return "You can't play your Queen Bee on your first turn.";
    }
    let queen = super::board::queen_of(me);
    if !b.in_play(queen) {
        if player_turn == 4 && bug != Bug::Queen {
            return "You must play your Queen Bee on or before your fourth turn.";
        } else if b.in_play(p) {
            return "You can't move a piece in play until you've played your Queen Bee.";
        }
    }
    if !b.placing_in_order(p) {
        return "When there are multiple pieces of the same bug type, you must play the pieces in order.";
    }
    if b.in_hand(p) && m.to != NO_CELL && b.height(m.to) > 0 {
        return "You can't move there because a piece already exists at that position.";
    }
    if b.in_play(p) {
        if !b.on_top(p) {
            return "You can't move that piece because it has another piece on top of it.";
        }
        if b.level(p) == 0 && b.pinned() >> p & 1 != 0 {
            return "You can't move that piece because it will break the hive.";
        }
        if p == b.last_moved() {
            return "You can't move that piece because it was moved by a pillbug last turn.";
        }
    }
    "You can't move that piece there."
}

/// Read a MoveString in position `b` and check that it is legal; errors name the token and give the reason.
pub fn parse_move(b: &Board, text: &str) -> Result<Move, NotationError> {
    let t = text.trim();
    if t.len() > 64 {
        return Err(NotationError::new(t, "not a MoveString (too long)"));
    }
    let legal = b.legal_moves();
    if t.eq_ignore_ascii_case("pass") {
        if legal.contains(&Move::PASS) {
            return Ok(Move::PASS);
        }
        let why = if b.result().is_some() {
            "You can't pass, the game is over."
        } else {
            "You can't pass when you have valid moves."
        };
        return Err(NotationError::new(t, why));
    }
    let mut parts = t.split_whitespace();
    let (Some(first), second, None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(NotationError::new(t, "not a MoveString (expected `piece` or `piece reference`)"));
    };
    let Some(p) = parse_piece(first) else {
        return Err(NotationError::new(first, "unknown piece name"));
    };
    if !b.enabled(p) {
        return Err(NotationError::new(t, "That piece is not enabled in this game."));
    }
    let to = match second {
        None => {
            if b.turn() != 0 {
                return Err(NotationError::new(t, "a reference piece is needed after the first move"));
            }
            ORIGIN
        }
        Some(r) => {
            let rb = r.as_bytes();
            let (before, core, after) = {
                let lead = matches!(rb.first(), Some(b'-' | b'/' | b'\\'));
                let trail = matches!(rb.last(), Some(b'-' | b'/' | b'\\'));
                if rb.len() == 1 && lead {
                    return Err(NotationError::new(r, "a direction mark needs a reference piece"));
                }
                if lead && trail {
                    return Err(NotationError::new(r, "a reference has one direction mark, not two"));
                }
                let core = &r[lead as usize..r.len() - trail as usize];
                (if lead { rb.first().copied() } else { None }, core, if trail { rb.last().copied() } else { None })
            };
            let Some(rp) = parse_piece(core) else {
                return Err(NotationError::new(r, "unknown reference piece"));
            };
            if !b.in_play(rp) {
                return Err(NotationError::new(r, "the reference piece is not on the board"));
            }
            let rc = b.pos(rp);
            match (before, after) {
                (Some(s), None) => nb(rc, direction(s, true).unwrap_or(0)),
                (None, Some(s)) => nb(rc, direction(s, false).unwrap_or(0)),
                _ => rc,
            }
        }
    };
    let m = Move { piece: p, to };
    if legal.contains(&m) { Ok(m) } else { Err(NotationError::new(t, illegal_reason(b, m))) }
}

/// Write a legal move of position `b` as Mzinga does.
pub fn format_move(b: &Board, m: Move) -> String {
    if m.is_pass() {
        return "pass".to_string();
    }
    let name = piece_name(m.piece);
    if b.turn() == 0 {
        return name;
    }
    let from = b.pos(m.piece);
    // The top piece of a cell with the moving piece lifted off.
    let top_without = |c: u16| {
        let t = b.top(c);
        if c == from && t == m.piece { b.below(m.piece) } else { t }
    };
    let under = top_without(m.to);
    if under != NO_PIECE {
        return format!("{name} {}", piece_name(under));
    }
    for d in 0..6 {
        let r = top_without(nb(m.to, d));
        if r == NO_PIECE {
            continue;
        }
        let rn = piece_name(r);
        let reference = match d {
            0 => format!("{rn}\\"),
            1 => format!("/{rn}"),
            2 => format!("-{rn}"),
            3 => format!("\\{rn}"),
            4 => format!("{rn}/"),
            _ => format!("{rn}-"),
        };
        return format!("{name} {reference}");
    }
    name
}

/// The GameState word of a position.
pub fn state_word(b: &Board) -> &'static str {
    match b.result() {
        Some(None) => "Draw",
        Some(Some(0)) => "WhiteWins",
        Some(Some(_)) => "BlackWins",
        None if b.turn() == 0 => "NotStarted",
        None => "InProgress",
    }
}

/// The TurnString (`White[1]`, `Black[3]`).
pub fn turn_string(b: &Board) -> String {
    let color = if b.to_move() == 0 { "White" } else { "Black" };
    format!("{color}[{}]", 1 + b.turn() / 2)
}

/// A parsed GameString: the game type and the moves (already checked and played on `board`).
pub struct Parsed {
    pub board: Board,
    pub moves: Vec<Move>,
    /// The GameState the text claims (`None` for a bare GameTypeString), checked by the caller: a `Draw` may
    /// be a threefold repetition, which the board alone does not know
    /// ([`crate::games::hive::Hive::from_game_string`]).
    pub state: Option<String>,
}

/// Read a GameString (or a bare GameTypeString), replaying every move with full legality checks; the turn is
/// checked, the GameState left to the caller ([`Parsed::state`]).
pub fn parse_game_string(text: &str) -> Result<Parsed, NotationError> {
    let text = text.trim();
    if text.len() > MAX_TEXT {
        return Err(NotationError::new(text, "GameString too long"));
    }
    let fields: Vec<&str> = text.split(';').map(str::trim).collect();
    let Some(game_type) = GameType::parse(fields[0]) else {
        return Err(NotationError::new(
            fields[0],
            "unknown GameTypeString (expected Base, Base+M, Base+L, Base+P, Base+ML, Base+MP, Base+LP or Base+MLP)",
        ));
    };
    let mut board = Board::new(game_type);
    if fields.len() == 1 {
        return Ok(Parsed { board, moves: Vec::new(), state: None });
    }
    if fields.len() < 3 {
        return Err(NotationError::new(text, "a GameString is GameType;GameState;Turn;moves..."));
    }
    let state = fields[1];
    const STATES: [&str; 5] = ["NotStarted", "InProgress", "Draw", "WhiteWins", "BlackWins"];
    if !STATES.iter().any(|s| s.eq_ignore_ascii_case(state)) {
        return Err(NotationError::new(state, "unknown GameState"));
    }
    let turn = fields[2];
    let turn_ok = {
        let lower = turn.to_ascii_lowercase();
        let rest = lower.strip_prefix("white[").or_else(|| lower.strip_prefix("black["));
        rest.and_then(|r| r.strip_suffix(']')).is_some_and(|n| n.parse::<u32>().is_ok_and(|n| n >= 1))
    };
    if !turn_ok {
        return Err(NotationError::new(turn, "not a TurnString (White[n] or Black[n])"));
    }
    let mut moves = Vec::with_capacity(fields.len() - 3);
    for (i, tok) in fields[3..].iter().enumerate() {
        let m = parse_move(&board, tok).map_err(|e| NotationError {
            token: e.token.clone(),
            message: format!("move {} `{}`: {}", i + 1, tok, e.message),
        })?;
        board.make(m);
        moves.push(m);
    }
    if !turn.eq_ignore_ascii_case(&turn_string(&board)) {
        return Err(NotationError::new(turn, format!("the moves give turn {}", turn_string(&board))));
    }
    Ok(Parsed { board, moves, state: Some(state.to_string()) })
}

/// Write the GameString of a game played from the start of `game_type` with `moves`.
pub fn format_game_string(game_type: GameType, moves: &[Move]) -> String {
    let mut b = Board::new(game_type);
    let mut parts = Vec::with_capacity(moves.len());
    for &m in moves {
        parts.push(format_move(&b, m));
        b.make(m);
    }
    let mut s = format!("{};{};{}", game_type.name(), state_word(&b), turn_string(&b));
    for p in parts {
        s.push(';');
        s.push_str(&p);
    }
    s
}
