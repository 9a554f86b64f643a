//! PDN FEN and GUIDE positions, PDN and GUIDE moves, GUIDE games.
//!
//! Positions:
//! * PDN FEN `W:W31-50:B1-20`: the side to move, then each side's squares (either order), `K` before a king,
//!   ranges `31-35` (and `K1-4`, all kings) and lists, whitespace anywhere, an optional final `.`.
//! * GUIDE `white bbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww`: `white` or `black` (any case), then 50
//!   characters for squares 1-50: `e` empty, `w`/`W` white man/king, `b`/`B` black man/king (whitespace
//!   inside is ignored).
//!
//! Moves:
//! * PDN: `32-28`, `28x19`, `26x37x48`. A capture is read by its ends and any landing squares in between, in
//!   order (`26x48`, `26x37x48`, a subset of the path's landing squares), or by its ends and some of its
//!   captured squares (`26x31x48` where 31 is jumped); the text must single out one legal move. Written in the
//!   shortest form that does: `from-to` / `fromxto` when no other legal move has the same ends, else with one
//!   or two landing squares of a path, else with every landing square (which always singles out the move,
//!   since one landing path determines the captured pieces).
//! * GUIDE: `32 28 0`, `31 33 2 27 28`: from, to, the number of captured pieces and the captured squares
//!   (read in any order, written in the order they are jumped).
//!
//! GUIDE games: `<position> <nr_moves> m <move> m <move> ...`.

use super::Draughts;
use super::board::{BLACK, Board, CROWN_ROW, Move, WHITE, bit_of_square, capture_paths};
use crate::game::{Game, NotationError};
use crate::games::pdn::{self, Colour};

/// The most squares a move text may list.
const MAX_SQUARES: usize = 64;
/// The most paths of one capture that notation looks at.
const MAX_PATHS: usize = 64;

/// Read a square number 1-50.
fn parse_square(tok: &str, whole: &str) -> Result<u8, NotationError> {
    pdn::parse_square(tok, whole, 50)
}

fn side_word(stm: usize) -> &'static str {
    if stm == WHITE { "white" } else { "black" }
}

// ---- PDN FEN ----

/// Read a PDN FEN position.
pub fn parse_fen(text: &str) -> Result<Board, NotationError> {
    let mut pieces = [0u64; 2];
    let mut kings = 0u64;
    let to_move = pdn::parse_fen(text, 50, "W or B", |colour, sq, king, item| {
        let bit = bit_of_square(sq);
        if !king && bit & CROWN_ROW[side_of(colour)] != 0 {
            return Err(NotationError::new(item, crowned_there(side_of(colour), sq)));
        }
        pieces[side_of(colour)] |= bit;
        if king {
            kings |= bit;
        }
        Ok(())
    })?;
    Ok(Board { pieces, kings, stm: side_of(to_move) })
}

/// Why a man of `side` cannot stand on `sq`, a square of its crowning row.
fn crowned_there(side: usize, sq: u8) -> String {
    format!("a {} man cannot stand on square {sq}: it would have been crowned there", side_word(side))
}

fn side_of(colour: Colour) -> usize {
    if colour == Colour::White { WHITE } else { BLACK }
}

/// Write canonical PDN FEN: `W:W31,...:B1,...`, squares ascending, kings with `K`, no ranges.
pub fn format_fen(b: &Board) -> String {
    let to_move = if b.stm == WHITE { Colour::White } else { Colour::Black };
    pdn::format_fen(to_move, 50, |sq| {
        let bit = bit_of_square(sq);
        let king = b.kings & bit != 0;
        if b.pieces[WHITE] & bit != 0 {
            Some((Colour::White, king))
        } else if b.pieces[BLACK] & bit != 0 {
            Some((Colour::Black, king))
        } else {
            None
        }
    })
}

// ---- GUIDE positions ----

/// The text starts with a GUIDE side word (`white` / `black`, any case) and has no FEN `:`.
pub fn looks_like_guide(text: &str) -> bool {
    let t = text.trim_start();
    !t.contains(':') && t.get(..5).is_some_and(|w| w.eq_ignore_ascii_case("white") || w.eq_ignore_ascii_case("black"))
}

/// Read a GUIDE position: `white`/`black` and 50 characters `e`/`w`/`W`/`b`/`B` for squares 1-50.
pub fn parse_guide_position(text: &str) -> Result<Board, NotationError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(NotationError::new(text, "empty position"));
    }
    let (word, rest) = match t.get(..5) {
        Some(w) if w.eq_ignore_ascii_case("white") || w.eq_ignore_ascii_case("black") => (w, &t[5..]),
        _ => {
            let first = t.split_whitespace().next().unwrap_or(t);
            return Err(NotationError::new(first, "side to move must be `white` or `black`"));
        }
    };
    let stm = if word.eq_ignore_ascii_case("white") { WHITE } else { BLACK };
    let squares: String = rest.chars().filter(|c| !c.is_whitespace()).collect();
    if squares.is_empty() {
        return Err(NotationError::new(text, "missing the 50 squares after the side to move"));
    }
    let n = squares.chars().count();
    if n != 50 {
        return Err(NotationError::new(&squares, format!("a GUIDE position has 50 squares, not {n}")));
    }
    let mut pieces = [0u64; 2];
    let mut kings = 0u64;
    for (i, c) in squares.chars().enumerate() {
        let bit = bit_of_square(i as u8 + 1);
        match c {
            'e' | 'E' | '.' => {}
            'w' if bit & CROWN_ROW[WHITE] != 0 => {
                return Err(NotationError::new(c.to_string(), crowned_there(WHITE, i as u8 + 1)));
            }
            'b' if bit & CROWN_ROW[BLACK] != 0 => {
                return Err(NotationError::new(c.to_string(), crowned_there(BLACK, i as u8 + 1)));
            }
            'w' => pieces[WHITE] |= bit,
            'W' => {
                pieces[WHITE] |= bit;
                kings |= bit;
            }
            'b' => pieces[BLACK] |= bit,
            'B' => {
                pieces[BLACK] |= bit;
                kings |= bit;
            }
            _ => {
                return Err(NotationError::new(c.to_string(), format!("square {}: expected e, w, W, b or B", i + 1)));
            }
        }
    }
    Ok(Board { pieces, kings, stm })
}

/// Write a GUIDE position.
pub fn format_guide_position(b: &Board) -> String {
    let mut s = String::with_capacity(56);
    s.push_str(side_word(b.stm));
    s.push(' ');
    for sq in 1..=50u8 {
        let bit = bit_of_square(sq);
        let king = b.kings & bit != 0;
        s.push(if b.pieces[WHITE] & bit != 0 {
            if king { 'W' } else { 'w' }
        } else if b.pieces[BLACK] & bit != 0 {
            if king { 'B' } else { 'b' }
        } else {
            'e'
        });
    }
    s
}

// ---- Hub ----

/// Read a Hub position: `W` or `B` for the side to move, then 50 characters `e`/`w`/`W`/`b`/`B` for squares
/// 1-50 (`Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww`).
pub fn parse_hub_position(text: &str) -> Result<Board, NotationError> {
    let t = text.trim();
    let side = match t.chars().next() {
        Some('W') => "white",
        Some('B') => "black",
        _ => return Err(NotationError::new(t.get(..1).unwrap_or(t), "side to move must be `W` or `B`")),
    };
    let squares = &t[1..];
    if squares.chars().any(char::is_whitespace) {
        return Err(NotationError::new(text, "a Hub position has no spaces"));
    }
    parse_guide_position(&format!("{side} {squares}")).map_err(|e| {
        let message = e.message.replace("a GUIDE position", "a Hub position");
        NotationError { token: e.token, message }
    })
}

/// Write a Hub position: the side letter and the 50 squares.
pub fn format_hub_position(b: &Board) -> String {
    let guide = format_guide_position(b);
    let squares = guide.split_once(' ').map_or("", |(_, sq)| sq);
    format!("{}{squares}", if b.stm == WHITE { 'W' } else { 'B' })
}

/// Read a Hub move: `32-28` for a step, `28x19x23` for a capture (start, end, then every captured square in
/// any order), checked against the legal moves.
pub fn parse_hub_move(game: &Draughts, text: &str) -> Result<Move, NotationError> {
    let t = text.trim();
    let capture = t.contains(['x', 'X']);
    if capture && t.contains('-') || t.contains(':') {
        return Err(NotationError::new(text, "a Hub move is `from-to` or `fromxtoxcaptured...`"));
    }
    let squares = read_squares(t)?;
    if !capture && squares.len() != 2 {
        return Err(NotationError::new(text, "a Hub step has two squares (`32-28`)"));
    }
    let mut cap = 0u64;
    for &s in &squares[2..] {
        let bit = bit_of_square(s);
        if cap & bit != 0 {
            return Err(NotationError::new(text, format!("square {s} is captured twice")));
        }
        cap |= bit;
    }
    let b = game.board();
    let legal = game.legal_moves();
    let (from, to) = (squares[0], squares[1]);
    legal
        .iter()
        .copied()
        .find(|m| m.from_square() == from && m.to_square() == to && m.cap == cap && (m.cap != 0) == capture)
        .ok_or_else(|| {
            if capture && legal.iter().any(|m| m.from_square() == from && m.to_square() == to && m.cap != 0) {
                NotationError::new(text, "illegal move: no capture from here to there takes exactly these pieces")
            } else {
                illegal(b, &legal, &[from, to], text)
            }
        })
}

/// Write a legal move in Hub notation: `32-28`, or `28x19x23` (start, end, the captured squares ascending).
pub fn format_hub_move(m: Move) -> String {
    if m.cap == 0 {
        return format!("{}-{}", m.from_square(), m.to_square());
    }
    let mut s = format!("{}x{}", m.from_square(), m.to_square());
    for sq in m.captured_squares() {
        s.push_str(&format!("x{sq}"));
    }
    s
}

// ---- PDN moves ----

/// A move text read into squares: the start, the squares in between, the end.
fn read_squares(text: &str) -> Result<Vec<u8>, NotationError> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.is_empty() {
        return Err(NotationError::new(text, "empty move"));
    }
    let mut squares = Vec::new();
    for tok in compact.split(['-', 'x', 'X', ':']) {
        if squares.len() >= MAX_SQUARES {
            return Err(NotationError::new(text, "too many squares in move"));
        }
        if tok.is_empty() {
            return Err(NotationError::new(text, "missing square number"));
        }
        squares.push(parse_square(tok, text)?);
    }
    if squares.len() < 2 {
        return Err(NotationError::new(text, "a move needs at least two squares"));
    }
    Ok(squares)
}

/// `small` appears in `big` in order (not necessarily next to each other).
fn is_subsequence(small: &[u8], big: &[u8]) -> bool {
    let mut it = big.iter();
    small.iter().all(|s| it.any(|b| b == s))
}

/// The legal move `m` is written by these squares: the same ends and, in between, landing squares of one of
/// its paths in order, or some of its captured squares.
fn matches(b: &Board, m: Move, squares: &[u8]) -> bool {
    let (Some(&from), Some(&to)) = (squares.first(), squares.last()) else {
        return false;
    };
    if m.from_square() != from || m.to_square() != to {
        return false;
    }
    let mids = &squares[1..squares.len() - 1];
    if mids.is_empty() {
        return true;
    }
    if m.cap == 0 {
        return false;
    }
    if mids.iter().all(|&s| m.cap & bit_of_square(s) != 0) {
        return true;
    }
    capture_paths(b, m, MAX_PATHS)
        .iter()
        .any(|p| p.squares.len() >= 2 && is_subsequence(mids, &p.squares[1..p.squares.len() - 1]))
}

/// Read a PDN move and check it against the legal moves.
pub fn parse_move(game: &Draughts, text: &str) -> Result<Move, NotationError> {
    let squares = read_squares(text)?;
    let b = game.board();
    let legal = game.legal_moves();
    let mut found: Option<Move> = None;
    let mut count = 0;
    for &m in &legal {
        if matches(b, m, &squares) {
            count += 1;
            found = Some(m);
        }
    }
    match (found, count) {
        (Some(m), 1) => Ok(m),
        (Some(_), _) => Err(NotationError::new(
            text,
            "ambiguous move: several captures fit, give the landing squares of the path (26x37x48)",
        )),
        (None, _) => Err(illegal(b, &legal, &squares, text)),
    }
}

/// Why a move with these squares is not legal.
fn illegal(b: &Board, legal: &[Move], squares: &[u8], text: &str) -> NotationError {
    let from = squares[0];
    let to = squares[squares.len() - 1];
    let msg = if b.pieces[b.stm] & bit_of_square(from) == 0 {
        format!("illegal move: no {} piece on square {from}", side_word(b.stm))
    } else if legal.first().is_some_and(|m| m.cap != 0) {
        let most = legal[0].captures();
        if legal.iter().any(|m| m.from_square() == from && m.to_square() == to) {
            "illegal move: no capture of these pieces by this path".to_string()
        } else {
            format!("illegal move: a capture is compulsory, and the most pieces must be taken ({most})")
        }
    } else {
        "illegal move".to_string()
    };
    NotationError::new(text, msg)
}

/// The legal moves of `b` that these squares describe.
fn count_matching(b: &Board, legal: &[Move], squares: &[u8]) -> usize {
    legal.iter().filter(|&&m| matches(b, m, squares)).count()
}

/// Write a legal move in the shortest PDN that singles it out.
pub fn format_move(game: &Draughts, m: Move) -> String {
    let (from, to) = (m.from_square(), m.to_square());
    if m.cap == 0 {
        return format!("{from}-{to}");
    }
    let b = game.board();
    let legal = game.legal_moves();
    let write = |squares: &[u8]| squares.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x");
    if legal.iter().filter(|o| o.from == m.from && o.to == m.to).count() <= 1 {
        return format!("{from}x{to}");
    }
    let paths = capture_paths(b, m, MAX_PATHS);
    let Some(first) = paths.first() else {
        return format!("{from}x{to}");
    };
    // One, then two landing squares in between, from any path.
    for path in &paths {
        let mids = &path.squares[1..path.squares.len() - 1];
        for (i, &a) in mids.iter().enumerate() {
            let cand = [from, a, to];
            if count_matching(b, &legal, &cand) == 1 {
                return write(&cand);
            }
            for &c in &mids[i + 1..] {
                let cand = [from, a, c, to];
                if count_matching(b, &legal, &cand) == 1 {
                    return write(&cand);
                }
            }
        }
    }
    write(&first.squares)
}

// ---- GUIDE moves ----

/// Read `<from> <to> <nkill> [kill ...]` from tokens and find the legal move.
fn guide_move_from_tokens(game: &Draughts, toks: &[&str], whole: &str) -> Result<Move, NotationError> {
    if toks.len() < 3 {
        return Err(NotationError::new(whole, "a GUIDE move is `<from> <to> <nkill> [kill ...]`"));
    }
    let from = parse_square(toks[0], whole)?;
    let to = parse_square(toks[1], whole)?;
    let nkill: usize = match toks[2].parse() {
        Ok(n) if toks[2].bytes().all(|c| c.is_ascii_digit()) => n,
        _ => return Err(NotationError::new(toks[2], "not a number of captured pieces")),
    };
    let kills = &toks[3..];
    if kills.len() != nkill {
        return Err(NotationError::new(whole, format!("{nkill} captured pieces announced, {} listed", kills.len())));
    }
    let mut cap = 0u64;
    for k in kills {
        let bit = bit_of_square(parse_square(k, whole)?);
        if cap & bit != 0 {
            return Err(NotationError::new(*k, "captured square listed twice"));
        }
        cap |= bit;
    }
    let legal = game.legal_moves();
    legal.iter().copied().find(|m| m.from_square() == from && m.to_square() == to && m.cap == cap).ok_or_else(|| {
        let mut squares = vec![from];
        squares.push(to);
        illegal(game.board(), &legal, &squares, whole)
    })
}

/// Read a GUIDE move.
pub fn parse_guide_move(game: &Draughts, text: &str) -> Result<Move, NotationError> {
    let toks: Vec<&str> = text.split_whitespace().take(MAX_SQUARES).collect();
    guide_move_from_tokens(game, &toks, text)
}

/// Write a legal move as GUIDE does: from, to, the number captured and the captured squares in jump order.
pub fn format_guide_move(b: &Board, m: Move) -> String {
    let mut s = format!("{} {} {}", m.from_square(), m.to_square(), m.captures());
    if m.cap != 0 {
        let order = match capture_paths(b, m, 1).into_iter().next() {
            Some(p) => p.captured,
            None => m.captured_squares(),
        };
        for c in order {
            s.push(' ');
            s.push_str(&c.to_string());
        }
    }
    s
}

/// Read any move: GUIDE when it is three or more tokens starting with two numbers (`32 28 0`), else PDN.
pub fn parse_any_move(game: &Draughts, text: &str) -> Result<Move, NotationError> {
    let mut toks = text.split_whitespace();
    let number = |t: Option<&str>| t.is_some_and(|t| t.bytes().all(|c| c.is_ascii_digit()));
    if number(toks.next()) && number(toks.next()) && toks.next().is_some() {
        parse_guide_move(game, text)
    } else {
        parse_move(game, text)
    }
}

// ---- GUIDE games ----

/// Read a GUIDE game: `<side> <50 squares> <nr_moves> m <move> m <move> ...`.
pub fn parse_guide_game(text: &str) -> Result<(Draughts, Vec<Move>), NotationError> {
    let toks: Vec<&str> = text.split_whitespace().collect();
    if toks.len() < 3 {
        return Err(NotationError::new(text, "a GUIDE game is `<side> <50 squares> <nr_moves> m <move> ...`"));
    }
    let start = Draughts::from_guide(&format!("{} {}", toks[0], toks[1]))?;
    let nr: usize = match toks[2].parse() {
        Ok(n) if toks[2].bytes().all(|c| c.is_ascii_digit()) => n,
        _ => return Err(NotationError::new(toks[2], "not a number of moves")),
    };
    let mut game = start.clone();
    let mut moves = Vec::new();
    let mut rest = &toks[3..];
    while let Some((&m, after)) = rest.split_first() {
        if !m.eq_ignore_ascii_case("m") {
            return Err(NotationError::new(m, format!("move {}: expected `m` before a move", moves.len() + 1)));
        }
        let len = after.iter().position(|t| t.eq_ignore_ascii_case("m")).unwrap_or(after.len());
        let (mv, next) = after.split_at(len);
        let whole = mv.join(" ");
        let played = guide_move_from_tokens(&game, mv, &whole).map_err(|e| NotationError {
            token: e.token,
            message: format!("move {}: {}", moves.len() + 1, e.message),
        })?;
        game.make(played);
        moves.push(played);
        rest = next;
    }
    if moves.len() != nr {
        return Err(NotationError::new(toks[2], format!("{nr} moves announced, {} given", moves.len())));
    }
    Ok((start, moves))
}

/// Write a GUIDE game; stops at the first move that is not legal where it stands.
pub fn format_guide_game(start: &Draughts, moves: &[Move]) -> String {
    let mut g = start.clone();
    let mut body = String::new();
    let mut n = 0;
    for &m in moves {
        if !g.legal_moves().contains(&m) {
            break;
        }
        body.push_str(" m ");
        body.push_str(&format_guide_move(g.board(), m));
        g.make(m);
        n += 1;
    }
    format!("{} {n}{body}", start.to_guide())
}

#[cfg(test)]
mod tests {
    use super::super::Draughts;
    use crate::game::{Game, NotationError};

    const START: &str = "W:W31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50:B1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20";
    const START_GUIDE: &str = "white bbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww";

    fn fen(text: &str) -> Result<String, NotationError> {
        Draughts::from_fen(text).map(|g| g.to_fen())
    }

    #[test]
    fn fen_round_trips() {
        assert_eq!(Draughts::start().to_fen(), START);
        assert_eq!(fen("W:W31-50:B1-20").unwrap(), START);
        assert_eq!(fen("W:B1-20:W31-50").unwrap(), START);
        assert_eq!(fen(" W : W 31-50 : B 1-20 .").unwrap(), START);
        assert_eq!(fen("B:WK15,K14:B10").unwrap(), "B:WK14,K15:B10");
        assert_eq!(fen("W:WK1-3,6:BK48-50").unwrap(), "W:WK1,K2,K3,6:BK48,K49,K50");
        assert_eq!(fen("w:w6:bk9").unwrap(), "W:W6:BK9");
        assert_eq!(fen("W:W:B5").unwrap(), "W:W:B5");
        // Lidraughts' move counters, after the pieces (the position is the same; they are not kept).
        assert_eq!(fen("W:W31-50:B1-20:H0:F1").unwrap(), START);
        assert_eq!(fen("B:WK15,K14:B10:F37:H12").unwrap(), "B:WK14,K15:B10");
        for text in ["W:WK2:B7,8,17,18,24", "B:W25,27,K28:B12,K13"] {
            assert_eq!(fen(text).unwrap(), text);
            let g = Draughts::parse_position(text, None).unwrap();
            assert_eq!(g.format_position(None).unwrap(), text);
            assert_eq!(g.format_position(Some("fen")).unwrap(), text);
        }
        assert_eq!(Draughts::parse_position(START, Some("pdn")).unwrap_err().token, "pdn");
        assert_eq!(Draughts::start().format_position(Some("x")).unwrap_err().token, "x");
    }

    #[test]
    fn fen_errors_name_the_token() {
        let cases: &[(&str, &str, &str)] = &[
            ("", "", "empty"),
            ("X:W1:B2", "X", "side to move"),
            ("W:W51:B1", "51", "not a square"),
            ("W:W0:B1", "0", "not a square"),
            ("W:W11,11:B2", "11", "listed twice"),
            ("W:W11-14:B13", "13", "both sides"),
            ("W:W11:Q2", "Q2", "must start with W or B"),
            ("W:W11:B2:H", "H", "must start with W or B"),
            ("W:W11:B2:Hx", "Hx", "must start with W or B"),
            ("W:W11:B2:H1:H2", "H2", "given twice"),
            ("W:W11:B2:F12345678", "F12345678", "too large"),
            ("W:W11:B2:W13", "W13", "listed twice"),
            ("W:Wa:B1", "a", "not a square number"),
            ("W:W15-13:B1", "15-13", "backwards"),
            ("W:W11,,12:B9", "W11,,12", "empty entry"),
            ("W:W11-:B9", "11-", "missing square"),
            ("W:W3:B48", "3", "white man cannot stand on square 3"),
            ("W:W11-15:B49", "49", "black man cannot stand on square 49"),
            ("W:W1-3:B20", "1-3", "crowned there"),
            ("W:W99999999999999999999:B9", "99999999999999999999", "not a square"),
        ];
        for &(text, token, what) in cases {
            let e = Draughts::from_fen(text).unwrap_err();
            assert_eq!(e.token, token, "{text}: {e}");
            assert!(e.message.contains(what), "{text}: {e}");
        }
    }

    #[test]
    fn guide_positions() {
        let g = Draughts::start();
        assert_eq!(g.to_guide(), START_GUIDE);
        assert_eq!(g.format_position(Some("guide")).unwrap(), START_GUIDE);
        assert_eq!(Draughts::from_guide(START_GUIDE).unwrap().to_fen(), START);
        assert_eq!(Draughts::parse_position(START_GUIDE, None).unwrap().to_fen(), START);
        assert_eq!(Draughts::parse_position(START_GUIDE, Some("guide")).unwrap().to_fen(), START);
        let kings = format!("BLACK eW{}B", "e".repeat(47));
        let g = Draughts::from_guide(&kings).unwrap();
        assert_eq!(g.to_fen(), "B:WK2:BK50");
        assert_eq!(g.to_guide(), kings.replace("BLACK", "black"));
        // Errors name the token.
        let e = Draughts::from_guide("green eeee").unwrap_err();
        assert_eq!(e.token, "green");
        let e = Draughts::from_guide("white eeee").unwrap_err();
        assert_eq!(e.token, "eeee");
        assert!(e.message.contains("50 squares"), "{e}");
        let e = Draughts::from_guide(&START_GUIDE.replace("bbbbe", "bbbbx")).unwrap_err();
        assert_eq!(e.token, "x");
        assert!(e.message.contains("square 21"), "{e}");
        assert!(Draughts::from_guide("white").is_err());
        assert!(Draughts::from_guide("").is_err());
        // A man on its crowning row would have been crowned (a king may stand there).
        let e = Draughts::from_fen("W:W3:B48").unwrap_err();
        assert_eq!((e.token.as_str(), e.message.contains("white man")), ("3", true), "{e}");
        let e = Draughts::from_fen("B:WK3,20:B30,47").unwrap_err();
        assert_eq!((e.token.as_str(), e.message.contains("square 47")), ("47", true), "{e}");
        assert!(Draughts::from_fen("W:WK3,20:BK47,30").is_ok());
        let crowned = |c: char, at: usize| {
            let mut squares = vec!['e'; 50];
            squares[at - 1] = c;
            squares[24] = if c == 'w' { 'b' } else { 'w' };
            format!("white {}", squares.into_iter().collect::<String>())
        };
        let e = Draughts::from_guide(&crowned('w', 5)).unwrap_err();
        assert!(e.message.contains("white man cannot stand on square 5"), "{e}");
        let e = Draughts::from_guide(&crowned('b', 46)).unwrap_err();
        assert!(e.message.contains("black man cannot stand on square 46"), "{e}");
        assert!(Draughts::from_hub(&crowned('b', 46).replace("white ", "W")).is_err());
        assert!(Draughts::from_guide(&crowned('W', 5)).is_ok());
    }

    #[test]
    fn pdn_moves_parse_and_format() {
        let g = Draughts::start();
        let m = g.parse_move("32-28").unwrap();
        assert_eq!(g.format_move(m), "32-28");
        assert_eq!(g.format_move_as(m, "pdn").unwrap(), "32-28");
        assert_eq!(g.format_move_as(m, "guide").unwrap(), "32 28 0");
        assert_eq!(g.parse_move(" 32 - 28 "), Ok(m));
        assert_eq!(g.parse_move("32x28"), Ok(m));
        assert_eq!(g.parse_move("32 28 0"), Ok(m));
        assert_eq!(g.format_move_as(m, "san").unwrap_err().token, "san");

        // A capture with unique ends is written from-to and read by any path.
        let g = Draughts::from_fen("W:W13:B7,8").unwrap();
        let m = g.parse_move("13x11").unwrap();
        assert_eq!(g.format_move(m), "13x11");
        assert_eq!(g.parse_move("13x2x11"), Ok(m));
        assert_eq!(g.parse_move("13x2-11"), Ok(m));
        assert_eq!(g.parse_move("13x8x11"), Ok(m)); // a captured square
        assert_eq!(g.guide_move(m), "13 11 2 8 7");
        assert_eq!(g.parse_guide_move("13 11 2 7 8"), Ok(m));
        assert_eq!(g.parse_move("13 11 2 8 7"), Ok(m));
    }

    #[test]
    fn ambiguous_captures() {
        // Positions where two legal moves share both ends: they are written with landing squares.
        let fens = [
            "B:WK1,7,12,14,K15,17,18,24,K26,28,32,47,49:BK4,25,34,45",
            "B:WK2,K5,11,18,21,23,25,26,30,36,44,45,48,49:B4,K50",
            "W:WK10,K19,K33:B8,16,23,K25,29,K30,36,39,40,41,43",
        ];
        for fen in fens {
            let g = Draughts::from_fen(fen).unwrap();
            let legal = g.legal_moves();
            let mut twins_seen = false;
            for &m in &legal {
                let twins = legal.iter().filter(|o| o.from == m.from && o.to == m.to).count();
                let text = g.format_move(m);
                assert_eq!(g.parse_move(&text), Ok(m), "{fen}: {text}");
                if twins > 1 {
                    twins_seen = true;
                    assert!(text.matches('x').count() >= 2, "{fen}: {text}");
                    let short = format!("{}x{}", m.from_square(), m.to_square());
                    let e = g.parse_move(&short).unwrap_err();
                    assert!(e.message.contains("ambiguous"), "{e}");
                    assert_eq!(e.token, short);
                }
            }
            assert!(twins_seen, "{fen}");
        }
        let g = Draughts::from_fen(fens[1]).unwrap();
        let a = g.parse_move("50x22x13x35").unwrap();
        let b = g.parse_move("50x28x19x35").unwrap();
        assert_ne!(a, b);
        assert_eq!(a.captured_squares(), [18, 30, 44]);
        assert_eq!(g.format_move(a), "50x22x35");
        assert_eq!(g.format_move(b), "50x28x35");
        // Captured squares single a move out too.
        assert_eq!(g.parse_move("50x18x35"), Ok(a));
        assert_eq!(g.parse_guide_move("50 35 3 44 30 18"), Ok(a));
        assert_eq!(g.parse_guide_move("50 35 3 23 30 44"), Ok(b));
        assert_eq!(g.guide_move(b), "50 35 3 44 23 30");
    }

    #[test]
    fn move_errors_name_the_token() {
        let g = Draughts::start();
        let cases: &[(&str, &str, &str)] = &[
            ("", "", "empty move"),
            ("32", "32", "at least two squares"),
            ("32-", "32-", "missing square"),
            ("51-1", "51", "not a square"),
            ("a-b", "a", "not a square number"),
            ("28-23", "28-23", "no white piece on square 28"),
            ("32-23", "32-23", "illegal move"),
            ("32 28 1 23", "32 28 1 23", "illegal"),
            ("32 28 x", "x", "not a number"),
            ("32 28 2 23", "32 28 2 23", "announced"),
        ];
        for &(text, token, what) in cases {
            let e = g.parse_move(text).unwrap_err();
            assert_eq!(e.token, token, "{text}: {e}");
            assert!(e.message.contains(what), "{text}: {e}");
        }
        let g = Draughts::from_fen("W:W32,33:B27,28,18").unwrap();
        let e = g.parse_move("31-26").unwrap_err();
        assert!(e.message.contains("no white piece"), "{e}");
        let e = g.parse_move("32-28").unwrap_err();
        assert!(e.message.contains("compulsory"), "{e}");
        let long = "1-".repeat(500) + "1";
        assert!(g.parse_move(&long).is_err());
    }

    #[test]
    fn guide_games() {
        let text = format!("{START_GUIDE} 4 m 32 28 0 m 17 21 0 m 37 32 0 m 21 26 0");
        let (start, moves) = Draughts::parse_guide_game(&text).unwrap();
        assert_eq!(start.to_fen(), START);
        assert_eq!(moves.len(), 4);
        assert_eq!(Draughts::format_guide_game(&start, &moves), text);
        let mut g = start.clone();
        for &m in &moves {
            g.make(m);
        }
        assert_eq!(g.plies(), 4);
        // With a capture.
        let text = format!("{START_GUIDE} 3 m 32 28 0 m 19 23 0 m 28 19 1 23");
        let (start, moves) = Draughts::parse_guide_game(&text).unwrap();
        assert_eq!(Draughts::format_guide_game(&start, &moves), text);
        // Errors name the move and the token.
        let e = Draughts::parse_guide_game(&format!("{START_GUIDE} 2 m 32 28 0 m 18 24 0")).unwrap_err();
        assert!(e.message.starts_with("move 2:"), "{e}");
        assert_eq!(e.token, "18 24 0");
        let e = Draughts::parse_guide_game(&format!("{START_GUIDE} 2 m 32 28 0")).unwrap_err();
        assert_eq!(e.token, "2");
        let e = Draughts::parse_guide_game(&format!("{START_GUIDE} 1 x 32 28 0")).unwrap_err();
        assert_eq!(e.token, "x");
        let e = Draughts::parse_guide_game(&format!("{START_GUIDE} one")).unwrap_err();
        assert_eq!(e.token, "one");
        let e = Draughts::parse_guide_game(&format!("{START_GUIDE} 1 m 32 28")).unwrap_err();
        assert!(e.message.starts_with("move 1:"), "{e}");
        let (s, m) = Draughts::parse_guide_game(&format!("{START_GUIDE} 0")).unwrap();
        assert!(m.is_empty());
        assert_eq!(s.to_guide(), START_GUIDE);
    }

    #[test]
    fn random_text_never_panics() {
        let alphabet: Vec<char> = "WBKwbkeE0123456789,:-xX. m\té".chars().collect();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let g = Draughts::from_fen("W:W32,33,K45:B27,28,18,K40,9").unwrap();
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 30) as usize;
            let text: String =
                (0..len).map(|i| alphabet[((x >> (i % 8 * 8)) as usize + i * 7) % alphabet.len()]).collect();
            if let Ok(p) = Draughts::parse_position(&text, None) {
                assert_eq!(Draughts::from_fen(&p.to_fen()).unwrap().to_fen(), p.to_fen());
            }
            if let Ok(m) = g.parse_move(&text) {
                assert!(g.legal_moves().contains(&m));
            }
            let _ = Draughts::parse_guide_game(&text);
            let _ = Draughts::from_guide(&format!("white {text}"));
        }
    }
}
