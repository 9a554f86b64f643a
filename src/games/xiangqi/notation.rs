//! Xiangqi notations: FEN (Black's back rank first, Red upper-case), ICCS moves (`H2-E2`) and coordinate
//! moves (`h2e2`). Files A-I run left to right from Red's side, ranks 0-9 from Red's back rank.

use super::board::{
    ADVISOR, ADVISOR_POINT, BLACK, Board, CANNON, CHARIOT, ELEPHANT, ELEPHANT_POINT, GEOMETRY, HORSE, KING, Move,
    PALACE, RED, SOLDIER, file_of, own_half, rank_of, square,
};
use crate::game::NotationError;

/// Which letters a FEN writes for the horse and the elephant.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Letters {
    /// `N` and `B`, as most engines write (and the output default).
    Standard,
    /// `H` and `E`, as Qianhong writes.
    Qianhong,
}

/// A FEN read: the board and the two counters.
pub struct ParsedFen {
    pub board: Board,
    /// Plies since the last capture (the halfmove field).
    pub reversible: u32,
    /// The full move number.
    pub fullmove: u32,
}

fn piece_of_letter(c: char) -> Option<(usize, u8)> {
    let side = if c.is_ascii_uppercase() { RED } else { BLACK };
    let kind = match c.to_ascii_lowercase() {
        'k' => KING,
        'a' => ADVISOR,
        'b' | 'e' => ELEPHANT,
        'n' | 'h' => HORSE,
        'r' => CHARIOT,
        'c' => CANNON,
        'p' => SOLDIER,
        _ => return None,
    };
    Some((side, kind))
}

pub fn letter_of(code: u8, letters: Letters) -> char {
    let side = (code as usize - 1) / 8;
    let kind = (code - 1) % 8;
    let c = match (kind, letters) {
        (KING, _) => 'k',
        (ADVISOR, _) => 'a',
        (ELEPHANT, Letters::Standard) => 'b',
        (ELEPHANT, Letters::Qianhong) => 'e',
        (HORSE, Letters::Standard) => 'n',
        (HORSE, Letters::Qianhong) => 'h',
        (CHARIOT, _) => 'r',
        (CANNON, _) => 'c',
        _ => 'p',
    };
    if side == RED { c.to_ascii_uppercase() } else { c }
}

fn kind_name(kind: u8) -> &'static str {
    match kind {
        KING => "general",
        ADVISOR => "advisor",
        ELEPHANT => "elephant",
        HORSE => "horse",
        CHARIOT => "chariot",
        CANNON => "cannon",
        _ => "soldier",
    }
}

/// A board point in ICCS (`E2`).
pub fn point_name(sq: usize) -> String {
    format!("{}{}", (b'A' + file_of(sq) as u8) as char, rank_of(sq))
}

/// Whether a piece of `side` and `kind` can stand on `sq` at all.
fn reachable(side: usize, kind: u8, sq: usize) -> bool {
    let g = GEOMETRY[sq];
    match kind {
        KING => g & PALACE != 0 && own_half(side, sq),
        ADVISOR => g & ADVISOR_POINT != 0 && own_half(side, sq),
        ELEPHANT => g & ELEPHANT_POINT != 0 && own_half(side, sq),
        SOLDIER => {
            let rank = rank_of(sq);
            if side == RED { rank >= 3 } else { rank <= 6 }
        }
        _ => true,
    }
}

/// Read a FEN. The side field (`w`/`r` for Red, `b` for Black) and the trailing fields are optional.
pub fn parse_fen(text: &str) -> Result<ParsedFen, NotationError> {
    let mut fields = text.split_whitespace();
    let Some(placement) = fields.next() else {
        return Err(NotationError::new(text, "empty position"));
    };
    let rows: Vec<&str> = placement.split('/').collect();
    if rows.len() != 10 {
        return Err(NotationError::new(placement, format!("expected 10 ranks separated by `/`, found {}", rows.len())));
    }
    let mut board = Board::empty();
    for (i, row) in rows.iter().enumerate() {
        let rank = 9 - i;
        let mut file = 0usize;
        for c in row.chars() {
            if let Some(n) = c.to_digit(10) {
                if n == 0 {
                    return Err(NotationError::new(*row, "a rank may not count 0 empty points"));
                }
                file += n as usize;
                if file > 9 {
                    return Err(NotationError::new(*row, format!("rank {rank} has more than 9 points")));
                }
                continue;
            }
            let Some((side, kind)) = piece_of_letter(c) else {
                return Err(NotationError::new(c.to_string(), format!("unknown piece letter in rank `{row}`")));
            };
            if file >= 9 {
                return Err(NotationError::new(*row, format!("rank {rank} has more than 9 points")));
            }
            let sq = square(file, rank);
            if !reachable(side, kind, sq) {
                return Err(NotationError::new(
                    c.to_string(),
                    format!("a {} {} cannot stand on {}", side_word(side), kind_name(kind), point_name(sq)),
                ));
            }
            if !board.put(side, kind, sq) {
                return Err(NotationError::new(
                    c.to_string(),
                    format!("too many {} {}s", side_word(side), kind_name(kind)),
                ));
            }
            file += 1;
        }
        if file != 9 {
            return Err(NotationError::new(*row, format!("rank {rank} has {file} points, expected 9")));
        }
    }
    for side in [RED, BLACK] {
        if board.king(side) == 0 {
            return Err(NotationError::new(placement, format!("the {} general is missing", side_word(side))));
        }
    }
    if let Some(side) = fields.next() {
        board.stm = match side.to_ascii_lowercase().as_str() {
            "w" | "r" | "red" => RED,
            "b" | "black" => BLACK,
            _ => return Err(NotationError::new(side, "side to move must be `w`, `r` or `b`")),
        };
    }
    // Castling and en passant fields (always `-` in xiangqi), then the two counters.
    let mut reversible = 0;
    let mut fullmove = 1;
    let mut counters = 0;
    for f in fields.by_ref() {
        if f == "-" && counters == 0 {
            continue;
        }
        let Ok(n) = f.parse::<u32>() else {
            return Err(NotationError::new(f, "expected a move counter"));
        };
        match counters {
            0 => reversible = n.min(1000),
            1 => fullmove = n.clamp(1, 100_000),
            _ => return Err(NotationError::new(f, "unexpected field after the move counters")),
        }
        counters += 1;
    }
    let waiting = board.stm ^ 1;
    if board.attacked(board.king(waiting), board.stm) {
        return Err(NotationError::new(
            placement,
            format!("the side not to move ({}) is in check or the generals face each other", side_word(waiting)),
        ));
    }
    Ok(ParsedFen { board, reversible, fullmove })
}

fn side_word(side: usize) -> &'static str {
    if side == RED { "red" } else { "black" }
}

/// The piece placement field of a FEN.
pub fn format_placement(board: &Board, letters: Letters) -> String {
    let mut out = String::with_capacity(90);
    for rank in (0..10).rev() {
        let mut empty = 0;
        for file in 0..9 {
            let code = board.code_at(square(file, rank));
            if code == 0 {
                empty += 1;
                continue;
            }
            if empty > 0 {
                out.push(char::from(b'0' + empty));
                empty = 0;
            }
            out.push(letter_of(code, letters));
        }
        if empty > 0 {
            out.push(char::from(b'0' + empty));
        }
        if rank > 0 {
            out.push('/');
        }
    }
    out
}

/// A full FEN: placement, side (`w`/`b`), `- -`, the halfmove and fullmove counters.
pub fn format_fen(board: &Board, letters: Letters, reversible: u32, fullmove: u32) -> String {
    let side = if board.stm == RED { 'w' } else { 'b' };
    format!("{} {side} - - {reversible} {fullmove}", format_placement(board, letters))
}

/// Read a point (`E2`, `e2`).
fn parse_point(file: u8, rank: u8) -> Option<usize> {
    let f = file.to_ascii_lowercase();
    if !(b'a'..=b'i').contains(&f) || !rank.is_ascii_digit() {
        return None;
    }
    Some(square((f - b'a') as usize, (rank - b'0') as usize))
}

/// Read the two points of a move in ICCS (`H2-E2`, any case) or coordinates (`h2e2`); no legality check.
pub fn parse_points(text: &str) -> Result<(usize, usize), NotationError> {
    let t = text.trim();
    let b = t.as_bytes();
    let (f, r) = match b.len() {
        4 => ((b[0], b[1]), (b[2], b[3])),
        5 if b[2] == b'-' => ((b[0], b[1]), (b[3], b[4])),
        _ => return Err(NotationError::new(t, "expected a move like `H2-E2` or `h2e2`")),
    };
    match (parse_point(f.0, f.1), parse_point(r.0, r.1)) {
        (Some(from), Some(to)) => Ok((from, to)),
        _ => Err(NotationError::new(t, "points are a file a-i and a rank 0-9")),
    }
}

/// A move in ICCS, upper-case with a dash (`H2-E2`), as Qianhong writes.
pub fn format_iccs(m: Move) -> String {
    format!("{}-{}", point_name(m.from as usize), point_name(m.to as usize))
}

/// A move in coordinates, lower-case without a dash (`h2e2`), as UCCI engines write.
pub fn format_coord(m: Move) -> String {
    format!("{}{}", point_name(m.from as usize), point_name(m.to as usize)).to_ascii_lowercase()
}
