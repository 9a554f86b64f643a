//! PDN FEN as both draughts games write it (`W:W31-50:B1-20`, `B:W21-32:B1-12`): the side to move, then each
//! side's squares (either order), `K` before a king, ranges `31-35` (and `K1-4`, all kings) and lists,
//! whitespace anywhere, an optional final `.`. Shared by the international draughts and English checkers
//! notations; each game maps the squares onto its own board and adds its own checks.

use crate::game::NotationError;

/// A side as PDN FEN names it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Colour {
    White,
    Black,
}

/// Read a square number 1..=`last`.
pub fn parse_square(tok: &str, whole: &str, last: u8) -> Result<u8, NotationError> {
    if tok.is_empty() {
        return Err(NotationError::new(whole, "missing square number"));
    }
    if !tok.bytes().all(|c| c.is_ascii_digit()) {
        return Err(NotationError::new(tok, "not a square number"));
    }
    match tok.parse::<u32>() {
        Ok(n) if (1..=u32::from(last)).contains(&n) => Ok(n as u8),
        _ => Err(NotationError::new(tok, format!("not a square (squares are 1-{last})"))),
    }
}

/// Read a PDN FEN on squares 1..=`last` (at most 63). `sides` names the side letters in the game's order
/// for messages (`W or B`). Each piece is given to `put` (its colour, square, whether it is a king, and the
/// list entry it comes from) once the square is known to be listed only once; returns the side to move.
pub fn parse_fen(
    text: &str,
    last: u8,
    sides: &str,
    mut put: impl FnMut(Colour, u8, bool, &str) -> Result<(), NotationError>,
) -> Result<Colour, NotationError> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let body = compact.strip_suffix('.').unwrap_or(&compact);
    if body.is_empty() {
        return Err(NotationError::new(text, "empty position"));
    }
    let mut fields = body.split(':');
    let side_tok = fields.next().unwrap_or("");
    let to_move = match side_tok {
        "W" | "w" => Colour::White,
        "B" | "b" => Colour::Black,
        "" => {
            return Err(NotationError::new(text, format!("missing side to move ({sides}) before the first `:`")));
        }
        _ => return Err(NotationError::new(side_tok, format!("side to move must be {sides}"))),
    };
    // Squares listed so far, per side (bit = square number).
    let mut listed = [0u64; 2];
    let mut seen_side = [false; 2];
    let mut counters = [false; 2];
    for field in fields {
        let mut chars = field.chars();
        let colour = match chars.next() {
            Some('W') | Some('w') => Colour::White,
            Some('B') | Some('b') => Colour::Black,
            // Lidraughts writes the move counters after the pieces: `:H0` (moves since the last capture or
            // man's move) and `:F1` (the move number). Neither is part of the position the rules need here.
            Some(c @ ('H' | 'F'))
                if !chars.as_str().is_empty() && chars.as_str().bytes().all(|b| b.is_ascii_digit()) =>
            {
                let counter = usize::from(c == 'F');
                if counters[counter] || chars.as_str().len() > 6 {
                    return Err(NotationError::new(field, "a move counter given twice, or too large"));
                }
                counters[counter] = true;
                continue;
            }
            Some(_) => {
                return Err(NotationError::new(field, "piece list must start with W or B (or a counter H or F)"));
            }
            None => return Err(NotationError::new(text, "empty field between `:`")),
        };
        let side = colour as usize;
        if seen_side[side] {
            return Err(NotationError::new(field, "this side's pieces are listed twice"));
        }
        seen_side[side] = true;
        let list = chars.as_str();
        if list.is_empty() {
            continue;
        }
        for item in list.split(',') {
            if item.is_empty() {
                return Err(NotationError::new(field, "empty entry in piece list"));
            }
            let (king, rest) = match item.strip_prefix(['K', 'k']) {
                Some(r) => (true, r),
                None => (false, item),
            };
            let (lo, hi) = match rest.split_once('-') {
                Some((a, b)) => {
                    let lo = parse_square(a, item, last)?;
                    let hi = parse_square(b.strip_prefix(['K', 'k']).unwrap_or(b), item, last)?;
                    if lo > hi {
                        return Err(NotationError::new(item, "range goes backwards"));
                    }
                    (lo, hi)
                }
                None => {
                    let s = parse_square(rest, item, last)?;
                    (s, s)
                }
            };
            for sq in lo..=hi {
                let bit = 1u64 << sq;
                if (listed[0] | listed[1]) & bit != 0 {
                    let msg = if listed[side] & bit != 0 {
                        format!("square {sq} is listed twice")
                    } else {
                        format!("square {sq} is listed for both sides")
                    };
                    return Err(NotationError::new(item, msg));
                }
                put(colour, sq, king, item)?;
                listed[side] |= bit;
            }
        }
    }
    Ok(to_move)
}

/// Write canonical PDN FEN on squares 1..=`last`: the side to move, White's then Black's squares ascending,
/// kings with `K`, no ranges. `piece` tells what stands on a square.
pub fn format_fen(to_move: Colour, last: u8, piece: impl Fn(u8) -> Option<(Colour, bool)>) -> String {
    let mut s = String::with_capacity(160);
    s.push(if to_move == Colour::White { 'W' } else { 'B' });
    for (colour, letter) in [(Colour::White, 'W'), (Colour::Black, 'B')] {
        s.push(':');
        s.push(letter);
        let mut first = true;
        for sq in 1..=last {
            if let Some((c, king)) = piece(sq)
                && c == colour
            {
                if !first {
                    s.push(',');
                }
                first = false;
                if king {
                    s.push('K');
                }
                s.push_str(&sq.to_string());
            }
        }
    }
    s
}

/// The picture of a numbered draughts board, `n` x `n` with the dark squares numbered 1.. from the top left
/// (Black's side) as PDN numbers them: the square numbers in a corner of each dark square, men and kings as
/// discs (a king with a gold ring). `piece` tells what stands on a square.
pub fn draw_board(
    n: usize,
    view: &crate::picture::View,
    piece: impl Fn(u8) -> Option<(Colour, bool)>,
) -> crate::picture::Scene {
    use crate::picture::{self, Disc, Scene};
    const UNIT: f64 = 60.0;
    const LIGHT: &str = "#f3e3c3";
    const DARK: &str = "#7a5230";
    let size = n as f64 * UNIT;
    let mut scene = Scene::new(size, size, UNIT, LIGHT);
    let last = (n * n / 2) as u8;
    for sq in 1..=last {
        let (x, y) = square_corner(n, sq, view.flip, UNIT);
        let name = sq.to_string();
        let centre = (x + UNIT / 2.0, y + UNIT / 2.0);
        scene.square(&name, picture::rect(x, y, UNIT, UNIT, DARK), centre);
        scene.decor(
            picture::label(x + UNIT * NUMBER_AT.0, y + UNIT * NUMBER_AT.1, UNIT * NUMBER_SIZE, "#f3e3c3", &name)
                .attr("font-weight", "normal")
                .attr("text-anchor", "start")
                // Outlined in the square's colour: readable on a highlighted square too.
                .attr("stroke", DARK)
                .num("stroke-width", UNIT * 0.05)
                .attr("paint-order", "stroke"),
        );
        if let Some((colour, king)) = piece(sq) {
            let (code, fill, stroke) = match colour {
                Colour::White => (if king { "WK" } else { "W" }, picture::LIGHT_PIECE, "#4a4a4a"),
                Colour::Black => (if king { "BK" } else { "B" }, picture::DARK_PIECE, "#000000"),
            };
            let disc = Disc { fill, stroke, label: "", label_fill: stroke, crowned: king };
            scene.piece(picture::disc_piece(code, &name, centre, UNIT * DISC_RADIUS, disc));
        }
    }
    scene
}

/// Where a square's number starts (its left end, its middle height) and its size, in squares from the square's
/// top-left corner; the radius of a piece. The number stays clear of the piece: see the test
/// `square_numbers_stay_clear_of_the_pieces`.
const NUMBER_AT: (f64, f64) = (0.035, 0.11);
const NUMBER_SIZE: f64 = 0.18;
const DISC_RADIUS: f64 = 0.38;

/// The top-left corner of square `sq` (1-based) on an `n` x `n` numbered board: square 1 is the second
/// square of the top row; rows alternate between starting on a dark square and not.
fn square_corner(n: usize, sq: u8, flip: bool, unit: f64) -> (f64, f64) {
    let per_row = n / 2;
    let i = sq as usize - 1;
    let row = i / per_row;
    let k = i % per_row;
    let col = if row.is_multiple_of(2) { 2 * k + 1 } else { 2 * k };
    let (col, row) = if flip { (n - 1 - col, n - 1 - row) } else { (col, row) };
    (col as f64 * unit, row as f64 * unit)
}

#[cfg(test)]
mod tests {
    use super::{DISC_RADIUS, NUMBER_AT, NUMBER_SIZE};

    /// The pictures' numbers were drawn where the pieces covered part of them (they lie under the pieces'
    /// layer): a two-digit number's box, with the digits of a wide sans-serif face (DejaVu Sans, what
    /// Debian's browsers draw `sans-serif` with: 0.64 of the size wide, 0.73 high), must stay outside the
    /// disc and its outline.
    #[test]
    fn square_numbers_stay_clear_of_the_pieces() {
        let (width, height) = (2.0 * 0.64 * NUMBER_SIZE, 0.73 * NUMBER_SIZE);
        let nearest = (NUMBER_AT.0 + width, NUMBER_AT.1 + height / 2.0);
        let gap = ((0.5 - nearest.0).powi(2) + (0.5 - nearest.1).powi(2)).sqrt() - DISC_RADIUS * 1.04;
        assert!(gap > 0.0, "the number's box reaches {gap} into the piece");
        assert!(NUMBER_AT.0 >= 0.0 && NUMBER_AT.1 - height / 2.0 >= 0.0, "the number leaves its square");
    }
}
