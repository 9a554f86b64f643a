//! PDN FEN positions and PDN moves.
//!
//! Positions: `B:W21,22,...,32:B1,...,12`: the side to move, then each side's squares (either order), `K`
//! before a king, ranges `1-12` (and `K1-4`, all kings) on input, whitespace anywhere, an optional final `.`.
//! Moves: `9-13`, `9x13`, `11x18x25` with every landing square, or a jump from-to only (`11x25`) when no other
//! legal move has the same ends.

use super::Checkers;
use super::board::{BLACK, Board, CROWN_ROW, Move, WHITE, bit_of_square};
use crate::game::NotationError;
use crate::games::pdn::{self, Colour};

/// Read a square number 1-32.
fn parse_square(tok: &str, whole: &str) -> Result<u8, NotationError> {
    pdn::parse_square(tok, whole, 32)
}

/// Read a PDN FEN position.
pub fn parse_fen(text: &str) -> Result<Board, NotationError> {
    let mut pieces = [0u64; 2];
    let mut kings = 0u64;
    let to_move = pdn::parse_fen(text, 32, "B or W", |colour, sq, king, item| {
        let side = side_of(colour);
        let b = bit_of_square(sq);
        if !king && b & CROWN_ROW[side] != 0 {
            let who = if side == BLACK { "black" } else { "white" };
            return Err(NotationError::new(
                item,
                format!("a {who} man cannot stand on square {sq}: it would have been crowned there"),
            ));
        }
        pieces[side] |= b;
        if king {
            kings |= b;
        }
        Ok(())
    })?;
    Ok(Board { pieces, kings, stm: side_of(to_move) })
}

fn side_of(colour: Colour) -> usize {
    if colour == Colour::White { WHITE } else { BLACK }
}

/// Write canonical PDN FEN: `B:W21,...:B1,...`, squares ascending, kings with `K`, no ranges.
pub fn format_fen(b: &Board) -> String {
    let to_move = if b.stm == BLACK { Colour::Black } else { Colour::White };
    pdn::format_fen(to_move, 32, |sq| {
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

/// Write a move: `9-13` / `11x18x25`, or with `x` everywhere (`9x13`) when `all_x`.
pub fn format_move(m: Move, all_x: bool) -> String {
    let sep = if m.is_jump() || all_x { "x" } else { "-" };
    let squares = m.squares();
    let mut s = String::with_capacity(3 * squares.len());
    for (i, sq) in squares.iter().enumerate() {
        if i > 0 {
            s.push_str(sep);
        }
        s.push_str(&sq.to_string());
    }
    s
}

/// Read a move and check it against the legal moves.
pub fn parse_move(game: &Checkers, text: &str) -> Result<Move, NotationError> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.is_empty() {
        return Err(NotationError::new(text, "empty move"));
    }
    let mut squares = Vec::new();
    for tok in compact.split(['-', 'x', 'X', ':']) {
        if squares.len() >= 64 {
            return Err(NotationError::new(text, "too many squares in move"));
        }
        if tok.is_empty() {
            return Err(NotationError::new(text, "missing square number"));
        }
        if !tok.bytes().all(|c| c.is_ascii_digit()) {
            return Err(NotationError::new(tok, "not a square number"));
        }
        squares.push(parse_square(tok, text)?);
    }
    if squares.len() < 2 {
        return Err(NotationError::new(text, "a move needs at least two squares"));
    }
    let from = squares[0];
    let to = squares[squares.len() - 1];
    let mut legal = Vec::new();
    game.board().generate(&mut legal);
    let mut found: Option<Move> = None;
    let mut count = 0;
    for m in legal {
        if m.from_square() != from || m.to_square() != to {
            continue;
        }
        if m.squares() == squares {
            // Every landing square given: this move and no other (a one-jump capture written `10x1` even
            // when a longer jump also runs from 10 to 1).
            return Ok(m);
        }
        if squares.len() == 2 {
            count += 1;
            found = Some(m);
        }
    }
    match (found, count) {
        (Some(m), 1) => Ok(m),
        (Some(_), _) => {
            Err(NotationError::new(text, "ambiguous move: several jumps have these ends, give every landing square"))
        }
        (None, _) => {
            let from_bit = bit_of_square(from);
            let b = game.board();
            let msg = if b.pieces[b.stm] & from_bit == 0 {
                format!("illegal move: no {} piece on square {from}", side_word(b.stm))
            } else if b.jumpers() != 0 && squares.len() == 2 && is_step(from, to) {
                "illegal move: a capture is compulsory".to_string()
            } else {
                "illegal move".to_string()
            };
            Err(NotationError::new(text, msg))
        }
    }
}

fn side_word(stm: usize) -> &'static str {
    if stm == BLACK { "black" } else { "white" }
}

/// The two squares are one diagonal step apart.
fn is_step(from: u8, to: u8) -> bool {
    let f = bit_of_square(from).trailing_zeros() as i32;
    let t = bit_of_square(to).trailing_zeros() as i32;
    matches!((t - f).abs(), 4 | 5)
}

#[cfg(test)]
mod tests {
    use super::super::Checkers;
    use crate::game::{Game, NotationError};

    const START: &str = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12";

    fn fen(text: &str) -> Result<String, NotationError> {
        Checkers::from_fen(text).map(|g| g.to_fen())
    }

    fn err(text: &str) -> NotationError {
        match Checkers::from_fen(text) {
            Ok(g) => panic!("{text} read as {}", g.to_fen()),
            Err(e) => e,
        }
    }

    #[test]
    fn fen_round_trips() {
        assert_eq!(Checkers::start().to_fen(), START);
        assert_eq!(fen(START).unwrap(), START);
        assert_eq!(fen("B:W21-32:B1-12").unwrap(), START);
        assert_eq!(fen("B:B1-12:W21-32").unwrap(), START);
        assert_eq!(fen(" B : W 21-32 : B 1-12 .").unwrap(), START);
        assert_eq!(fen("W:WK15,K14:B10").unwrap(), "W:WK14,K15:B10");
        assert_eq!(fen("B:WK1-3,5:BK30-32").unwrap(), "B:WK1,K2,K3,5:BK30,K31,K32");
        assert_eq!(fen("B:W5-K7:B9").unwrap(), "B:W5,6,7:B9");
        assert_eq!(fen("w:w5:bk9").unwrap(), "W:W5:BK9");
        // Empty sides.
        assert_eq!(fen("W:W:B5").unwrap(), "W:W:B5");
        assert_eq!(fen("B:B5").unwrap(), "B:W:B5");
        for text in ["W:WK14,K15,K22,K23:BK10", "B:W5,14,18,21,K27:B1,2,K9"] {
            assert_eq!(fen(text).unwrap(), text);
            let g = Checkers::parse_position(text, Some("fen")).unwrap();
            assert_eq!(g.format_position(None).unwrap(), text);
        }
        assert_eq!(Checkers::parse_position(START, Some("pdn")).unwrap_err().token, "pdn");
        assert!(Checkers::start().format_position(Some("x")).is_err());
    }

    #[test]
    fn fen_errors_name_the_token() {
        let cases: &[(&str, &str, &str)] = &[
            ("", "", "empty"),
            ("X:W1:B2", "X", "side to move"),
            (":W1:B2", ":W1:B2", "side to move"),
            ("B:W33:B1", "33", "not a square"),
            ("B:W0:B1", "0", "not a square"),
            ("B:W5,5:B2", "5", "listed twice"),
            ("B:W5-8:B7", "7", "both sides"),
            ("B:W5:Q2", "Q2", "must start with W or B"),
            ("B:W5:B2:W6", "W6", "listed twice"),
            ("B:Wa:B1", "a", "not a square number"),
            ("B:W5-3:B1", "5-3", "backwards"),
            ("B:W5,,6:B9", "W5,,6", "empty entry"),
            ("B:W5::B9", "B:W5::B9", "empty field"),
            ("B:W5-:B9", "5-", "missing square"),
            ("B:WK:B9", "K", "missing square"),
            ("B:W5é:B9", "5é", "not a square number"),
            ("B:W99999999999999999999:B9", "99999999999999999999", "not a square"),
            ("BB:W1:B2", "BB", "side to move"),
            ("B:W1:B9", "1", "crowned"),
            ("B:W5:B9,29-30", "29-30", "crowned"),
        ];
        for &(text, token, what) in cases {
            let e = err(text);
            assert_eq!(e.token, token, "{text}: {e}");
            assert!(e.message.contains(what), "{text}: {e}");
        }
    }

    #[test]
    fn moves_parse_and_format() {
        let g = Checkers::start();
        let m = g.parse_move("9-13").unwrap();
        assert_eq!(g.format_move(m), "9-13");
        assert_eq!(g.format_move_as(m, "pdn").unwrap(), "9-13");
        assert_eq!(g.format_move_as(m, "x").unwrap(), "9x13");
        assert_eq!(Checkers::move_to_x(m), "9x13");
        assert_eq!(g.parse_move("9x13"), Ok(m));
        assert_eq!(g.parse_move(" 9 - 13 "), Ok(m));
        assert_eq!(g.format_move_as(m, "san").unwrap_err().token, "san");
        assert_eq!(g.parse_move_text("9-13"), Ok(m));

        let g = Checkers::from_fen("B:W14,23:B9").unwrap();
        let m = g.parse_move("9x18x27").unwrap();
        assert_eq!(g.format_move(m), "9x18x27");
        assert_eq!(g.format_move_as(m, "x").unwrap(), "9x18x27");
        assert_eq!(Checkers::move_to_pdn(m), "9x18x27");
        assert_eq!(g.parse_move("9x27"), Ok(m));
        assert_eq!(g.parse_move("9-27"), Ok(m));
    }

    #[test]
    fn move_errors_name_the_token() {
        let g = Checkers::start();
        let cases: &[(&str, &str, &str)] = &[
            ("", "", "empty move"),
            ("9", "9", "at least two squares"),
            ("9-", "9-", "missing square"),
            ("33-1", "33", "not a square"),
            ("a-b", "a", "not a square number"),
            ("9-13-", "9-13-", "missing square"),
            ("13-17", "13-17", "no black piece on square 13"),
            ("9-18", "9-18", "illegal move"),
            ("21-17", "21-17", "no black piece"),
            ("9–13", "9–13", "not a square number"),
        ];
        for &(text, token, what) in cases {
            let e = g.parse_move(text).unwrap_err();
            assert_eq!(e.token, token, "{text}: {e}");
            assert!(e.message.contains(what), "{text}: {e}");
        }
        // Two jumps with the same ends: the short form is ambiguous.
        let g = Checkers::from_fen("B:WK14,K15,K22,K23:BK10").unwrap();
        let e = g.parse_move("10x10").unwrap_err();
        assert_eq!(e.token, "10x10");
        assert!(e.message.contains("ambiguous"), "{e}");
        let a = g.parse_move("10x17x26x19x10").unwrap();
        let b = g.parse_move("10x19x26x17x10").unwrap();
        assert_ne!(a, b);
        assert!(g.parse_move("10x17x26x10").is_err());
        // A long string does not break anything.
        let long = "1-".repeat(500) + "1";
        assert!(g.parse_move(&long).is_err());
    }

    #[test]
    fn random_text_never_panics() {
        let alphabet: Vec<char> = "BWKbwk0123456789,:-xX. é\t".chars().collect();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let g = Checkers::from_fen("B:W14,15,22,23,K30:BK10,9,5").unwrap();
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 24) as usize;
            let text: String =
                (0..len).map(|i| alphabet[((x >> (i % 8 * 8)) as usize + i * 7) % alphabet.len()]).collect();
            if let Ok(p) = Checkers::from_fen(&text) {
                assert_eq!(Checkers::from_fen(&p.to_fen()).unwrap().to_fen(), p.to_fen());
            }
            if let Ok(m) = g.parse_move(&text) {
                assert!(g.legal_moves().contains(&m));
            }
        }
    }
}
