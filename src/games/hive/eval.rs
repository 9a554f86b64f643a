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

/// Score for White minus Black's ([`Evaluation::Classic`]).
fn white_view_classic(b: &Board) -> i32 {
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

/// Which static evaluation a game uses.
///
/// `Pressure` adds to `Classic` what strong Hive engines weigh (who fills each Queen neighbour and whether it
/// can leave, Ants that can run to an open liberty, Beetles and Mosquitos two steps from the Queen, a
/// trapped Queen, pieces in hand only while they can be placed). In 200 self-play games at depth 3 it scored
/// 50.0% against `Classic` (BENCHMARKS.md) while costing about 15% more time per node, so `Classic` stays the
/// default and `Pressure` is there for further tuning (`examples/hive_match.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Evaluation {
    /// Surround count, mobility by bug, Beetles on or next to the Queen, Pillbug guard, Queen slides.
    #[default]
    Classic,
    /// `Classic` plus Queen-pressure terms (see above).
    Pressure,
}

/// Static evaluation from the side to move's point of view.
pub fn evaluate(b: &Board, which: Evaluation) -> i32 {
    let v = match which {
        Evaluation::Pressure => white_view_pressure(b),
        Evaluation::Classic => white_view_classic(b),
    };
    if b.to_move() == 0 { v } else { -v }
}

/// What filling one neighbour of a Queen is worth, in tenths of a neighbour, by who fills it.
const FILL_ENEMY: i32 = 10;
/// A friendly piece that could step away from its own Queen.
const FILL_OWN_FREE: i32 = 10;
/// A friendly piece that cannot leave (pinned or covered): as bad as an enemy.
const FILL_OWN_STUCK: i32 = 10;
/// The surround value of `tenths` tenths of a neighbour (interpolating [`SURROUND`]).
fn surround_value(tenths: i32) -> i32 {
    let t = tenths.clamp(0, 60);
    let (i, f) = ((t / 10) as usize, t % 10);
    let lo = SURROUND[i];
    let hi = SURROUND[(i + 1).min(6)];
    lo + (hi - lo) * f / 10
}
/// An empty neighbour of the enemy Queen that an attacker already touches (one step from filling it).
const LIBERTY_TOUCHED: i32 = 0;
/// A free Ant (or Mosquito next to an Ant) while the enemy Queen has an open liberty: it can go and fill it.
const RUNNER_THREAT: i32 = 18;
/// A free Beetle (or a Mosquito) two steps from the enemy Queen.
const CLIMBER_NEAR: i32 = 12;
/// A piece of one's own stuck next to one's own Queen (besides the surround term).
const OWN_STUCK_AT_QUEEN: i32 = 8;
/// Pieces in hand count only while there is somewhere to place them.
const NO_PLACEMENT: i32 = 2;
/// The enemy Queen is stuck (pinned or covered) and half surrounded.
const QUEEN_TRAPPED: i32 = 20;
/// The side to move gets a little (it fills a liberty first).
const TEMPO: i32 = 0;

/// The distance between two cells, capped at 3 (exact through the wrapping grid, by neighbour steps).
#[inline]
fn near(a: u16, b: u16) -> i32 {
    if a == b {
        return 0;
    }
    let mut two = false;
    for d in 0..6 {
        let n = nb(a, d);
        if n == b {
            return 1;
        }
        two |= (0..6).any(|k| nb(n, k) == b);
    }
    if two { 2 } else { 3 }
}

/// Score for White minus Black's ([`Evaluation::Pressure`]).
fn white_view_pressure(b: &Board) -> i32 {
    let pinned = b.pinned();
    let stuck = |p: u8| !b.on_top(p) || (b.level(p) == 0 && pinned >> p & 1 != 0);
    let mut score = [0i32; 2];
    for (color, s) in score.iter_mut().enumerate() {
        let enemy = color ^ 1;
        let eq = queen_of(enemy);
        let eq_cell = b.pos(eq);
        let own_q = queen_of(color);
        let own_q_cell = b.pos(own_q);
        // Pressure on the enemy Queen: each neighbour by who fills it, and the liberties one step from filled.
        let mut open_liberty = false;
        if eq_cell != NO_CELL {
            let mut tenths = 0;
            for d in 0..6 {
                let n = nb(eq_cell, d);
                if b.height(n) > 0 {
                    let t = b.top(n);
                    tenths += if color_of(t) == color {
                        FILL_ENEMY
                    } else if stuck(t) {
                        FILL_OWN_STUCK
                    } else {
                        FILL_OWN_FREE
                    };
                } else {
                    // Attackers touching the liberty (besides through the Queen herself).
                    if b.adjacent_of(color, n) > 0 {
                        *s += LIBERTY_TOUCHED;
                    }
                    // Open: some empty cell outside slides into it.
                    let open = (0..6).any(|k| {
                        b.height(nb(n, k)) == 0
                            && (b.height(nb(n, (k + 5) % 6)) == 0) != (b.height(nb(n, (k + 1) % 6)) == 0)
                    });
                    open_liberty |= open;
                }
            }
            *s += surround_value(tenths);
            // An enemy Queen that cannot walk away (pinned or covered) with three or more neighbours.
            if stuck(eq) && b.occupied_neighbours(eq_cell) >= 3 {
                *s += QUEEN_TRAPPED;
            }
        }
        let lo = color as u8 * PER_SIDE;
        let placeable = !b.placements(color).is_empty() || b.turn() < 2;
        for p in lo..lo + PER_SIDE {
            if !b.enabled(p) {
                continue;
            }
            let bug = bug_of(p);
            if b.in_hand(p) {
                *s += if placeable { HAND[bug as usize] } else { NO_PLACEMENT };
                continue;
            }
            let c = b.pos(p);
            let top = b.on_top(p);
            let free = top && (b.level(p) > 0 || pinned >> p & 1 == 0);
            if free {
                *s += FREE[bug as usize];
            }
            if top && matches!(bug, Bug::Beetle | Bug::Mosquito) && eq_cell != NO_CELL {
                let dist = near(c, eq_cell);
                if dist == 0 {
                    *s += BEETLE_ON_QUEEN;
                } else if dist == 1 {
                    *s += BEETLE_NEXT_TO_QUEEN;
                } else if dist == 2 && free {
                    *s += CLIMBER_NEAR;
                }
            }
            if own_q_cell != NO_CELL && near(c, own_q_cell) == 1 {
                if bug == Bug::Pillbug && top {
                    *s += PILLBUG_GUARD;
                } else if p != own_q && stuck(p) {
                    *s -= OWN_STUCK_AT_QUEEN;
                }
            }
            if free && bug == Bug::Ant && open_liberty {
                *s += RUNNER_THREAT;
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
    let v = score[0] - score[1];
    if b.to_move() == 0 { v + TEMPO } else { v - TEMPO }
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
