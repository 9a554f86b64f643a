//! The checkers board picture: the 8x8 board with squares 1-32 as PDN numbers them.

use super::Checkers;
use super::board::{BLACK, Move, WHITE, bit_of_square};
use crate::games::pdn::{self, Colour};
use crate::picture::{Scene, View};

pub fn draw(game: &Checkers, view: &View) -> Scene {
    let b = game.board();
    pdn::draw_board(8, view, |sq| {
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

/// The start, every landing square, the end.
pub fn move_squares(m: Move) -> Vec<String> {
    m.squares().iter().map(|s| s.to_string()).collect()
}
