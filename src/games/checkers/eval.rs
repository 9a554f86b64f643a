//! Static evaluation, in centi-men from the side to move's point of view.

use super::board::{BLACK, Board};

pub const MAN: i32 = 100;
pub const KING: i32 = 140;

/// Evaluate for the side to move.
pub fn evaluate(b: &Board) -> i32 {
    let black = b.pieces[0];
    let white = b.pieces[1];
    let bm = (black & !b.kings).count_ones() as i32;
    let bk = (black & b.kings).count_ones() as i32;
    let wm = (white & !b.kings).count_ones() as i32;
    let wk = (white & b.kings).count_ones() as i32;
    let score = MAN * (bm - wm) + KING * (bk - wk);
    if b.stm == BLACK { score } else { -score }
}
