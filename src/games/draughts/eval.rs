//! Static evaluation, in centi-men from the side to move's point of view.

use super::board::{Board, WHITE};

pub const MAN: i32 = 100;
pub const KING: i32 = 300;

pub fn evaluate(b: &Board) -> i32 {
    let men = [b.pieces[0] & !b.kings, b.pieces[1] & !b.kings];
    let kings = [b.pieces[0] & b.kings, b.pieces[1] & b.kings];
    let w = men[0].count_ones() as i32 * MAN + kings[0].count_ones() as i32 * KING;
    let bl = men[1].count_ones() as i32 * MAN + kings[1].count_ones() as i32 * KING;
    if b.stm == WHITE { w - bl } else { bl - w }
}
