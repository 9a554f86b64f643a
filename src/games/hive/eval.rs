//! Static evaluation, in centi-units from the side to move's point of view.
//!
//! The scale: 100 is one more piece around the enemy Queen than the opponent has around yours (the
//! surround difference is what wins Hive, so it is the "man" of this game). Terms, each written once for
//! either colour:
//!
//! * Queen surround: 100 per occupied neighbour of the enemy Queen, growing for the fourth and fifth (a
//!   fifth neighbour is one move from the win), minus the same around one's own Queen;
//! * mobility: a piece that could move (on top of its stack, not holding the hive together) is worth a
//!   few points by bug (Ants and Mosquitos most); a pinned or covered piece is worth nothing;
//! * pieces in hand: a little, they can still go anywhere;
//! * Beetles (and a Mosquito) on top of or next to the enemy Queen; one's Pillbug next to one's own Queen
//!   (it can throw attackers off); a Queen that can still slide away.
//!
//! It costs one articulation-point pass and a few neighbour scans, no move generation.

use super::board::{Board, Bug, NO_CELL, PER_SIDE, bug_of, nb, queen_of};
use super::board::{Move, color_of};

/// The value of the n-th occupied neighbour around a Queen (cumulative: index = neighbours).
const SURROUND: [i32; 7] = [0, 100, 200, 310, 440, 640, 900];
/// A piece free to move, by bug.
const FREE: [i32; 8] = [
    10, // Queen (its own term below as well)
    12, // Spider
    22, // Beetle
    16, // Grasshopper
    30, // Ant
    28, // Mosquito
    22, // Ladybug
    16, // Pillbug
];
/// A piece in hand, by bug.
const HAND: [i32; 8] = [0, 6, 10, 6, 14, 12, 10, 8];
const BEETLE_ON_QUEEN: i32 = 70;
const BEETLE_NEXT_TO_QUEEN: i32 = 15;
const PILLBUG_GUARD: i32 = 25;
const QUEEN_SLIDE: i32 = 6;

/// Score for White minus Black's.
fn white_view(b: &Board) -> i32 {
    let pinned = b.pinned();
    let mut score = [0i32; 2];
    let mut queen_neighbours = [0u32; 2];
    for (color, n) in queen_neighbours.iter_mut().enumerate() {
        let q = queen_of(color);
        if b.in_play(q) {
            *n = b.occupied_neighbours(b.pos(q));
        }
    }
    for (color, s) in score.iter_mut().enumerate() {
        let enemy = color ^ 1;
        *s += SURROUND[queen_neighbours[enemy] as usize];
        let eq = queen_of(enemy);
        let eq_cell = b.pos(eq);
        let own_q = queen_of(color);
        let own_q_cell = b.pos(own_q);
        let lo = color as u8 * PER_SIDE;
        for p in lo..lo + PER_SIDE {
            if !b.enabled(p) {
                continue;
            }
            let bug = bug_of(p);
            if b.in_hand(p) {
                *s += HAND[bug as usize];
                continue;
            }
            let c = b.pos(p);
            let top = b.on_top(p);
            let free = top && (b.level(p) > 0 || pinned >> p & 1 == 0);
            if free {
                *s += FREE[bug as usize];
            }
            if top && matches!(bug, Bug::Beetle | Bug::Mosquito) && eq_cell != NO_CELL {
                if c == eq_cell {
                    *s += BEETLE_ON_QUEEN;
                } else if (0..6).any(|d| nb(eq_cell, d) == c) {
                    *s += BEETLE_NEXT_TO_QUEEN;
                }
            }
            if bug == Bug::Pillbug && top && own_q_cell != NO_CELL && (0..6).any(|d| nb(own_q_cell, d) == c) {
                *s += PILLBUG_GUARD;
            }
        }
        if own_q_cell != NO_CELL && b.on_top(own_q) && pinned >> own_q & 1 == 0 {
            let slides = (0..6)
                .filter(|&d| {
                    b.height(nb(own_q_cell, d)) == 0
                        && (b.height(nb(own_q_cell, (d + 5) % 6)) == 0) != (b.height(nb(own_q_cell, (d + 1) % 6)) == 0)
                })
                .count() as i32;
            *s += QUEEN_SLIDE * slides;
        }
    }
    score[0] - score[1]
}

/// Static evaluation from the side to move's point of view.
pub fn evaluate(b: &Board) -> i32 {
    let v = white_view(b);
    if b.to_move() == 0 { v } else { -v }
}

/// The move puts one more piece next to the enemy Queen (a placement or a piece arriving from elsewhere).
#[inline]
pub fn adds_queen_neighbour(b: &Board, m: Move) -> bool {
    if m.is_pass() {
        return false;
    }
    let me = color_of(m.piece);
    let q = b.pos(queen_of(me ^ 1));
    if q == NO_CELL || b.height(m.to) != 0 {
        return false;
    }
    let touches = |c: u16| c != NO_CELL && (0..6).any(|d| nb(q, d) == c);
    touches(m.to) && !touches(b.pos(m.piece))
}
