//! The international draughts board picture: the 10x10 board with squares 1-50 as PDN numbers them.

use super::Draughts;
use super::board::{BLACK, Move, WHITE, bit_of_square};
use crate::games::pdn::{self, Colour};
use crate::picture::{Scene, View};

pub fn draw(game: &Draughts, view: &View) -> Scene {
    let b = game.board();
    pdn::draw_board(10, view, |sq| {
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

/// The start, the landing squares of one path of a capture (the rules make every path the same move), the end.
pub fn move_squares(game: &Draughts, m: Move) -> Vec<String> {
    let squares = if m.is_capture() {
        game.capture_paths(m, 1).into_iter().next().map(|p| p.squares).unwrap_or_default()
    } else {
        Vec::new()
    };
    let squares = if squares.len() >= 2 { squares } else { vec![m.from_square(), m.to_square()] };
    squares.iter().map(|s| s.to_string()).collect()
}
